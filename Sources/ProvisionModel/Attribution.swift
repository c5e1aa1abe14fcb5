import Foundation
import ProvisionFoundation

/// Who must be credited for some of a store's data, and how: one source's attribution as it
/// travels into the lock, `audit --json`, archives' metadata and a bundle's `ATTRIBUTION.md`.
///
/// Why a value of its own: OSM's ODbL and each provider's terms require the credit wherever the
/// map is shown, and an offline app has nothing else to show it from. Every kind of source
/// (a style's tiled source, a region's tileset, a search or routing pack, the job itself) feeds
/// the same value, so every output lists them alike.
public struct Attribution: Equatable, Hashable, Sendable {
    /// What kind of source is credited.
    public enum Kind: String, Equatable, Hashable, Sendable, CaseIterable {
        /// A tiled source of a style: `source` is `<stylePack>/<sourceName>`.
        case styleSource = "style-source"
        /// A region's extra tileset: `source` is its TileJSON URL or template.
        case tileset
        /// A search pack: `source` is its id; the text is its sources' attribution.
        case searchPack = "search-pack"
        /// A routing pack: `source` is its id.
        case routingPack = "routing-pack"
        /// The job's own `attribution`: `source` is the job's name.
        case job
        /// A tileset of an exported store: `source` is its name as `export --source` takes it
        /// (a bundle's `NAME.pmtiles`).
        case archive
    }

    public var kind: Kind
    /// The source credited, named as `kind` says.
    public var source: String
    /// The attribution as declared (it may hold HTML, as TileJSON's and styles' do).
    public var text: String
    /// The licence the data is under (`ODbL-1.0` …), when declared.
    public var licence: String?
    /// Where the licence or the credit is explained, when declared.
    public var url: String?

    public init(kind: Kind, source: String, text: String, licence: String? = nil, url: String? = nil) {
        self.kind = kind
        self.source = source
        self.text = text
        self.licence = licence
        self.url = url
    }

    /// The attribution a tiled source declares: its style entry's `attribution` (which MapLibre
    /// shows over its TileJSON's), else its TileJSON's; nil when neither is a non-empty string.
    public static func declared(styleSource: JSONValue?, tileJSON: JSONValue?) -> String? {
        for document in [styleSource, tileJSON] {
            if let text = document?["attribution"]?.stringValue, !text.allSatisfy(\.isWhitespace) { return text }
        }
        return nil
    }

    /// `texts` joined with `; `, each once, in order; nil when none is non-empty: what an archive
    /// or a pack built from several sources credits.
    public static func joined(_ texts: [String]) -> String? {
        var seen: [String] = []
        for text in texts where !text.isEmpty && !seen.contains(text) { seen.append(text) }
        return seen.isEmpty ? nil : seen.joined(separator: "; ")
    }

    // MARK: JSON

    /// `{"kind", "source", "text", "licence", "url"}`, absent members null.
    public var json: JSONValue {
        ["kind": .string(kind.rawValue), "source": .string(source), "text": .string(text),
         "licence": licence.map { .string($0) } ?? .null, "url": url.map { .string($0) } ?? .null]
    }

    /// Reads `json`; nil when it is not an attribution entry.
    public init?(json: JSONValue) {
        guard let kind = json["kind"]?.stringValue.flatMap(Kind.init(rawValue:)), let source = json["source"]?.stringValue,
              let text = json["text"]?.stringValue else { return nil }
        self.init(kind: kind, source: source, text: text, licence: json["licence"]?.stringValue, url: json["url"]?.stringValue)
    }

    // MARK: Text

    /// The text with its HTML turned into Markdown: `<a href="U">T</a>` becomes `[T](U)`, other
    /// tags are dropped (`<br>` becomes a space), entities are decoded and runs of white space
    /// become one space.
    public var markdown: String {
        var out = ""
        var rest = Substring(text)
        var link: String?
        var linkText = ""
        func append(_ piece: String) {
            if link != nil { linkText += piece } else { out += piece }
        }
        while let open = rest.firstIndex(of: "<") {
            append(Self.decodeEntities(String(rest[..<open])))
            guard let close = rest[open...].firstIndex(of: ">") else {
                rest = rest[open...]
                break
            }
            let tag = rest[rest.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            let name = tag.prefix { $0.isLetter || $0 == "/" }.lowercased()
            if name == "a", let href = Self.attribute("href", in: tag) {
                link = href
                linkText = ""
            } else if name == "/a", let href = link {
                link = nil
                let shown = linkText.trimmingCharacters(in: .whitespaces)
                out += shown.isEmpty ? href : "[\(shown)](\(href))"
            } else if name == "br" || name == "br/" {
                append(" ")
            }
            rest = rest[rest.index(after: close)...]
        }
        append(Self.decodeEntities(String(rest)))
        if let link { out += linkText.isEmpty ? link : "[\(linkText)](\(link))" }
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The value of attribute `name` in the inside of a tag (`a href="…" target=_blank`).
    private static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: name + "=", options: .caseInsensitive) else { return nil }
        var value = tag[range.upperBound...]
        if let quote = value.first, quote == "\"" || quote == "'" {
            value = value.dropFirst()
            return value.firstIndex(of: quote).map { decodeEntities(String(value[..<$0])) }
        }
        return decodeEntities(String(value.prefix { !$0.isWhitespace }))
    }

    /// The named entities attributions use, and numeric ones.
    private static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "copy": "©", "reg": "®"]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semicolon = after.prefix(10).firstIndex(of: ";") else {
                out += "&"
                rest = after
                continue
            }
            let entity = String(after[..<semicolon])
            var decoded: String?
            if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
            } else if entity.hasPrefix("#") {
                decoded = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
            } else {
                decoded = named[entity]
            }
            if let decoded {
                out += decoded
                rest = after[after.index(after: semicolon)...]
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }
}
