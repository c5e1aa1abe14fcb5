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
}

/// Expands `${NAME}` references in `text` from `env`, for use at fetch time only.
///
/// Canonical URLs keep their `${NAME}` references (so secrets never reach the store); the
/// fetcher expands them just before a request. `NAME` is a letter or `_` followed by letters,
/// digits or `_`; anything else (a lone `$`, `${}`, `${1X}`, an unclosed `${`) is left literally.
/// A name missing from `env` expands to the empty string and is listed once in `missing`,
/// in order of first appearance.
public func expandEnvironment(_ text: String, env: [String: String]) -> (String, missing: [String]) {
    let chars = Array(text.unicodeScalars)
    var result = String.UnicodeScalarView()
    var missing: [String] = []
    var i = 0
    while i < chars.count {
        if chars[i] == "$", i + 1 < chars.count, chars[i + 1] == "{",
            let close = chars[(i + 2)...].firstIndex(of: "}") {
            let name = String(String.UnicodeScalarView(chars[(i + 2)..<close]))
            if isEnvironmentName(name) {
                if let value = env[name] {
                    result.append(contentsOf: value.unicodeScalars)
                } else if !missing.contains(name) {
                    missing.append(name)
                }
                i = close + 1
                continue
            }
        }
        result.append(chars[i])
        i += 1
    }
    return (String(result), missing)
}

private func isEnvironmentName(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first else { return false }
    func isLetter(_ c: Unicode.Scalar) -> Bool { (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c == "_" }
    return isLetter(first) && name.unicodeScalars.allSatisfy { isLetter($0) || ($0 >= "0" && $0 <= "9") }
}
