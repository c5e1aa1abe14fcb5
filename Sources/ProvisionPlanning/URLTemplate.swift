import TileMath
/// Token expansion and encoding for URL templates, as MapLibre Native does it.
public enum URLTemplate {
    /// Replaces each `{name}` in `template` by `lookup(name)`; see `TileURLTemplate.replaceTokens`.
    public static func replaceTokens(_ template: String, _ lookup: (String) -> String?) -> String {
        TileURLTemplate.replaceTokens(template, lookup)
    }

    /// Percent-encodes the UTF-8 bytes of `text`, keeping only `A–Z a–z 0–9 - _ . ~`, with
    /// lower-case hex digits (MapLibre's `util::percentEncode`): `"a b,c"` → `a%20b%2cc`.
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%"
                out.unicodeScalars.append(hexDigits[Int(byte >> 4)])
                out.unicodeScalars.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// The lower-case hex digits.
    static let hexDigits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)

    /// `reference` resolved against the absolute URL `base` (RFC 3986 §5.2), on the text: no
    /// character is percent-encoded or decoded, so `{z}`, `{x}`, `{y}` and `${VAR}` survive, and a
    /// query is kept exactly as written. A reference with a scheme comes back with only its dot
    /// segments removed.
    ///
    /// `"{z}/{x}/{y}.pbf"` against `https://h/tiles/v3.json` → `https://h/tiles/{z}/{x}/{y}.pbf`;
    /// `"/t/{z}/{x}/{y}.pbf"` → `https://h/t/{z}/{x}/{y}.pbf`; `"../t/{z}.png"` → `https://h/t/{z}.png`.
    public static func resolve(_ reference: String, against base: String) -> String {
        let r = URLReference(reference)
        if r.scheme != nil {
            return URLReference.compose(scheme: r.scheme, authority: r.authority,
                                        path: removeDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        let b = URLReference(base)
        var authority = b.authority, path: String, query = r.query
        if let own = r.authority {
            authority = own
            path = removeDotSegments(r.path)
        } else if r.path.isEmpty {
            path = b.path
            query = r.query ?? b.query
        } else if r.path.hasPrefix("/") {
            path = removeDotSegments(r.path)
        } else {
            let merged: String
            if b.authority != nil && b.path.isEmpty {
                merged = "/" + r.path
            } else if let slash = b.path.lastIndex(of: "/") {
                merged = String(b.path[...slash]) + r.path
            } else {
                merged = r.path
            }
            path = removeDotSegments(merged)
        }
        return URLReference.compose(scheme: b.scheme, authority: authority, path: path, query: query,
                                    fragment: r.fragment)
    }

    /// RFC 3986 §5.2.4: `.` and `..` segments removed from `path`.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []  // each starts with "/" unless it is a leading relative segment
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }
}

/// The five parts of a URI reference (RFC 3986 appendix B), as text.
struct URLReference {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    init(_ text: String) {
        var rest = Substring(text)
        if let colon = rest.firstIndex(of: ":"), URLReference.isScheme(rest[..<colon]) {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[afterSlashes..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    /// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
    static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter else { return false }
        return text.unicodeScalars.allSatisfy {
            $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "."
        }
    }

    /// RFC 3986 §5.3.
    static func compose(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) -> String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

