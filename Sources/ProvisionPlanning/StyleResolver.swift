import ProvisionModel

extension ResourceRef: CustomStringConvertible {
    /// The request that fetches it.
    public var fetchRequest: FetchRequest { FetchRequest(url: url, kind: kind) }

    /// `kind url`.
    public var description: String { "\(kind.name) \(url)" }
}

/// One source of a style, as far as the style alone resolves it.
public struct SourceRef: Equatable, Sendable {
    /// The source's name (its key in the style's `sources`).
    public var name: String
    /// The source's `type`.
    public var type: SourceType
    /// For a tiled source with a `url`: the TileJSON that must be fetched to learn its tileset.
    public var tileJSONURL: String?
    /// For a tiled source that lists `tiles` inline: its tileset.
    public var tileset: TileSource?
    /// The tile size zoom levels are computed with: 512 for vector sources, the style's
    /// `tileSize` (default 512) for raster and raster-dem sources.
    public var tileSize: Int
    /// For a GeoJSON source whose `data` is a URL, that URL; for an image source, its `url`.
    public var dataURL: String?

    /// A source with the given properties.
    public init(name: String, type: SourceType, tileJSONURL: String? = nil, tileset: TileSource? = nil,
                tileSize: Int = 512, dataURL: String? = nil) {
        self.name = name
        self.type = type
        self.tileJSONURL = tileJSONURL
        self.tileset = tileset
        self.tileSize = tileSize
        self.dataURL = dataURL
    }

    /// The tileset of this source: the inline one, or the one `tileJSON` (the document fetched
    /// from `tileJSONURL`) describes; nil for untiled sources.
    public func resolvedTileset(tileJSON: JSONValue?) throws -> TileSource? {
        if let tileset { return tileset }
        guard let url = tileJSONURL, let tileJSON else { return nil }
        return try TileSource.from(tileJSON: tileJSON, sourceURL: url, type: type, tileSize: tileSize)
    }
}

/// Everything a style pack needs that the style itself names.
public struct ResolvedStyle: Equatable, Sendable {
    /// The style, the TileJSONs and GeoJSON/image URLs of its sources (in source order), its glyph
    /// ranges (font stacks sorted, ranges ascending) and its sprites (per sprite: image 1x, 2x,
    /// JSON 1x, 2x), each URL once, in MapLibre's download order.
    public var resources: [ResourceRef]
    /// The style's sources, in style order.
    public var sources: [SourceRef]
    /// The font stacks of the symbol layers, sorted and unique.
    public var fontStacks: [[String]]
    /// The `glyphs` template, when the style has one.
    public var glyphsTemplate: String?
    /// The sprite base URLs, in style order.
    public var spriteBases: [String]

    /// A resolved style with the given parts.
    public init(resources: [ResourceRef], sources: [SourceRef], fontStacks: [[String]], glyphsTemplate: String?,
                spriteBases: [String]) {
        self.resources = resources
        self.sources = sources
        self.fontStacks = fontStacks
        self.glyphsTemplate = glyphsTemplate
        self.spriteBases = spriteBases
    }

    /// The TileJSON URLs that must be fetched before the tilesets are known, in source order, once each.
    public var tileJSONURLs: [String] {
        var seen = Set<String>()
        return sources.compactMap(\.tileJSONURL).filter { seen.insert($0).inserted }
    }
}

/// Turns a style document into the resources and sources a download needs, as MapLibre
/// Native's offline download walks a style.
public enum StyleResolver {
    /// Resolves `style` (the document stored under `styleURL`) for `pack`.
    ///
    /// - Throws: `PlanningError` (document = `styleURL`) when the style is not an object, has no
    ///   `version: 8` or `sources` object, or has a source, `sprite` or `glyphs` it cannot use.
    public static func resolve(styleURL: String, style: JSONValue, pack: StylePack) throws -> ResolvedStyle {
        func fail(_ pointer: JSONPointer, _ message: String) -> PlanningError {
            PlanningError(document: styleURL, pointer: pointer.description, message: message)
        }
        let root = JSONPointer.root
        guard let object = style.objectValue else {
            throw fail(root, "expected a style object, found \(style.typeDescription)")
        }
        guard let version = object["version"] else {
            throw fail(root, "expected \"version\": 8, found no version")
        }
        guard version.intValue == 8 else {
            throw fail(root.appending("version"), "expected 8, found \(version.serialized())")
        }
        guard let sourcesValue = object["sources"] else {
            throw fail(root, "expected a \"sources\" object, found none")
        }
        guard let sourcesObject = sourcesValue.objectValue else {
            throw fail(root.appending("sources"), "expected an object of sources, found \(sourcesValue.typeDescription)")
        }

        var resources: [ResourceRef] = [ResourceRef(url: styleURL, kind: .style)]
        var sources: [SourceRef] = []
        for (name, value) in sourcesObject.members {
            let source = try resolveSource(name: name, value: value, styleURL: styleURL,
                                           pointer: root.appending("sources").appending(name))
            sources.append(source)
            if let url = source.tileJSONURL { resources.append(ResourceRef(url: url, kind: .source)) }
            if let url = source.dataURL {
                resources.append(ResourceRef(url: url, kind: source.type == .image ? .image : .source))
            }
        }

        var glyphsTemplate: String?
        var fontStacks: [[String]] = []
        if let glyphs = object["glyphs"] {
            guard let template = glyphs.stringValue else {
                throw fail(root.appending("glyphs"), "expected a glyph URL template string, found \(glyphs.typeDescription)")
            }
            if !template.isEmpty {
                glyphsTemplate = template
                fontStacks = FontStacks.fontStacks(in: style)
                resources += GlyphRanges.urls(template: template, fontStacks: fontStacks, policy: pack.glyphs)
                    .map { ResourceRef(url: $0, kind: .glyphs) }
            }
        }

        let spriteBases = try self.spriteBases(object["sprite"], styleURL: styleURL, pointer: root.appending("sprite"))
        for base in spriteBases { resources += SpriteURLs.resources(base: base) }

        var seen = Set<String>()
        resources = resources.filter { seen.insert($0.url).inserted }
        return ResolvedStyle(resources: resources, sources: sources, fontStacks: fontStacks,
                             glyphsTemplate: glyphsTemplate, spriteBases: spriteBases)
    }

    private static func resolveSource(name: String, value: JSONValue, styleURL: String,
                                      pointer: JSONPointer) throws -> SourceRef {
        func fail(_ p: JSONPointer, _ message: String) -> PlanningError {
            PlanningError(document: styleURL, pointer: p.description, message: message)
        }
        guard let object = value.objectValue else {
            throw fail(pointer, "expected a source object, found \(value.typeDescription)")
        }
        guard let typeValue = object["type"] else {
            throw fail(pointer, "expected a source \"type\", found none")
        }
        guard let typeName = typeValue.stringValue, let type = SourceType(rawValue: typeName) else {
            let known = SourceType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw fail(pointer.appending("type"), "expected one of \(known), found \(typeValue.serialized())")
        }

        switch type {
        case .vector, .raster, .rasterDEM:
            var tileSize = 512
            if type != .vector, let sizeValue = object["tileSize"] {
                guard let size = sizeValue.doubleValue, size >= 1, size <= 65535 else {
                    throw fail(pointer.appending("tileSize"), "expected a tile size in pixels, found \(sizeValue.serialized())")
                }
                tileSize = Int(size)
            }
            if let urlValue = object["url"] {
                guard let url = urlValue.stringValue else {
                    throw fail(pointer.appending("url"), "expected a TileJSON URL string, found \(urlValue.typeDescription)")
                }
                return SourceRef(name: name, type: type, tileJSONURL: url, tileSize: tileSize)
            }
            guard object["tiles"] != nil else {
                throw fail(pointer, "expected a TileJSON \"url\" or a \"tiles\" array, found neither")
            }
            let tileset = try TileSource.parseTileset(value, document: styleURL, at: pointer, type: type,
                                                      tileSize: tileSize)
            return SourceRef(name: name, type: type, tileset: tileset, tileSize: tileSize)
        case .geojson:
            guard let data = object["data"] else {
                throw fail(pointer, "expected a GeoJSON \"data\" URL or object, found none")
            }
            switch data {
            case .string(let url): return SourceRef(name: name, type: type, dataURL: url)
            case .object: return SourceRef(name: name, type: type)
            default:
                throw fail(pointer.appending("data"), "expected a GeoJSON URL or object, found \(data.typeDescription)")
            }
        case .image:
            guard let urlValue = object["url"] else {
                throw fail(pointer, "expected an image \"url\", found none")
            }
            guard let url = urlValue.stringValue else {
                throw fail(pointer.appending("url"), "expected an image URL string, found \(urlValue.typeDescription)")
            }
            return SourceRef(name: name, type: type, dataURL: url.isEmpty ? nil : url)
        case .video:
            return SourceRef(name: name, type: type)
        }
    }

    /// The sprite base URLs: one for the string form, one per entry for the `[{id, url}]` form.
    private static func spriteBases(_ value: JSONValue?, styleURL: String, pointer: JSONPointer) throws -> [String] {
        func fail(_ p: JSONPointer, _ message: String) -> PlanningError {
            PlanningError(document: styleURL, pointer: p.description, message: message)
        }
        guard let value else { return [] }
        switch value {
        case .string(let base):
            return base.isEmpty ? [] : [base]
        case .array(let entries):
            var bases: [String] = []
            var ids = Set<String>()
            for (i, entry) in entries.enumerated() {
                let entryPointer = pointer.appending(i)
                guard entry.objectValue != nil else {
                    throw fail(entryPointer, "expected a sprite object {\"id\", \"url\"}, found \(entry.typeDescription)")
                }
                guard let id = entry["id"]?.stringValue else {
                    throw fail(entryPointer.appending("id"), "expected a sprite id string")
                }
                guard ids.insert(id).inserted else {
                    throw fail(entryPointer.appending("id"), "expected a unique sprite id, found \"\(id)\" twice")
                }
                guard let url = entry["url"]?.stringValue else {
                    throw fail(entryPointer.appending("url"), "expected a sprite URL string")
                }
                if !url.isEmpty { bases.append(url) }
            }
            return bases
        default:
            throw fail(pointer, "expected a sprite URL or an array of {\"id\", \"url\"}, found \(value.typeDescription)")
        }
    }
}
