import ProvisionFoundation
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
    /// The style's sources a download uses, in style order (skipped ones left out).
    public var sources: [SourceRef]
    /// The font stacks of the symbol layers, sorted and unique.
    public var fontStacks: [[String]]
    /// The `glyphs` template, when the style has one.
    public var glyphsTemplate: String?
    /// The sprite base URLs, in style order.
    public var spriteBases: [String]
    /// Every source with what is fetched for it, the fonts and sprites, for the plan. The zooms
    /// of tiled sources and the template counts of TileJSON sources are filled in once the
    /// TileJSONs are known.
    public var overview: StyleOverview
    /// What the user should know: sources skipped, layers drawing from a source the style lacks.
    public var notes: [PlanNote]

    /// A resolved style with the given parts.
    public init(resources: [ResourceRef], sources: [SourceRef], fontStacks: [[String]], glyphsTemplate: String?,
                spriteBases: [String], overview: StyleOverview = StyleOverview(), notes: [PlanNote] = []) {
        self.resources = resources
        self.sources = sources
        self.fontStacks = fontStacks
        self.glyphsTemplate = glyphsTemplate
        self.spriteBases = spriteBases
        self.overview = overview
        self.notes = notes
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
    /// Sources MapLibre's parser skips are skipped with a note (see `SourceResolver`); layers
    /// drawing from a source the style lacks get a note and keep their fonts, as in MapLibre.
    ///
    /// - Throws: `DocumentProblem` (document = `styleURL`) when the style is not an object, has no
    ///   `version: 8` or `sources` object, or has a source, `sprite` or `glyphs` value no
    ///   download can use (a URL that is not an absolute http(s)/`mapbox://` URL, a glyph
    ///   template without `{fontstack}` and `{range}`, a sprite entry without `id` or `url` …).
    public static func resolve(styleURL: String, style: JSONValue, pack: StylePack) throws -> ResolvedStyle {
        func fail(_ pointer: JSONPointer, _ message: String) -> DocumentProblem {
            DocumentProblem(document: styleURL, pointer: pointer.description, message: message)
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

        let subject = "stylePack '\(pack.id)'"
        var notes: [PlanNote] = []
        var resources: [ResourceRef] = [ResourceRef(url: styleURL, kind: .style)]
        var sources: [SourceRef] = []
        var summaries: [StyleSourceSummary] = []
        for (name, value) in sourcesObject.members {
            let pointer = root.appending("sources").appending(name)
            let outcome = try SourceResolver.resolve(name: name, value: value, styleURL: styleURL, pointer: pointer)
            summaries.append(outcome.summary)
            if case .skipped(let reason) = outcome.summary.fetch {
                notes.append(PlanNote(subject: subject,
                                      message: "source '\(name)' (\(pointer)) is skipped, as MapLibre skips it: \(reason)"))
            }
            guard let source = outcome.source else { continue }
            sources.append(source)
            if let url = source.tileJSONURL { resources.append(ResourceRef(url: url, kind: .source)) }
            if let url = source.dataURL {
                resources.append(ResourceRef(url: url, kind: source.type == .image ? .image : .source))
            }
        }
        let skipped = Set(summaries.filter { $0.fetch.name == "skipped" }.map(\.name))
        notes += missingSourceNotes(style, defined: Set(sources.map(\.name)), skipped: skipped, subject: subject)

        var glyphsTemplate: String?
        var fontStacks: [[String]] = []
        var rangesPerStack = 0
        if let template = try self.glyphsTemplate(object["glyphs"], styleURL: styleURL, pointer: root.appending("glyphs")) {
            glyphsTemplate = template
            fontStacks = FontStacks.fontStacks(in: style)
            rangesPerStack = GlyphRanges.ranges(for: pack.glyphs).count
            resources += GlyphRanges.urls(template: template, fontStacks: fontStacks, policy: pack.glyphs)
                .map { ResourceRef(url: $0, kind: .glyphs) }
        }

        let spriteBases = try self.spriteBases(object["sprite"], styleURL: styleURL, pointer: root.appending("sprite"))
        for base in spriteBases { resources += SpriteURLs.resources(base: base) }

        var seen = Set<String>()
        resources = resources.filter { seen.insert($0.url).inserted }
        let overview = StyleOverview(sources: summaries, fontStacks: fontStacks, glyphRangesPerStack: rangesPerStack,
                                     glyphsTemplate: glyphsTemplate, sprites: spriteBases)
        return ResolvedStyle(resources: resources, sources: sources, fontStacks: fontStacks,
                             glyphsTemplate: glyphsTemplate, spriteBases: spriteBases, overview: overview, notes: notes)
    }

    /// One note per source name that layers MapLibre keeps draw from but the style does not
    /// define or that was skipped: those layers draw nothing, yet their fonts are downloaded.
    private static func missingSourceNotes(_ style: JSONValue, defined: Set<String>, skipped: Set<String>,
                                           subject: String) -> [PlanNote] {
        var layersBySource: [(source: String, layers: [String])] = []
        for layer in FontStacks.parsedLayers(in: style) {
            guard let source = layer["source"]?.stringValue, !defined.contains(source),
                  let id = layer["id"]?.stringValue else { continue }
            if let i = layersBySource.firstIndex(where: { $0.source == source }) {
                layersBySource[i].layers.append(id)
            } else {
                layersBySource.append((source, [id]))
            }
        }
        return layersBySource.map { entry in
            let why = skipped.contains(entry.source) ? "is skipped" : "is not defined in the style"
            let names = entry.layers.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
                + (entry.layers.count > 3 ? " and \(entry.layers.count - 3) more" : "")
            let layers = entry.layers.count == 1 ? "layer \(names) draws" : "\(entry.layers.count) layers (\(names)) draw"
            return PlanNote(subject: subject, message: "source '\(entry.source)' \(why) but \(layers) from it: "
                            + "MapLibre keeps such layers (they draw nothing) and their fonts are downloaded")
        }
    }

    /// The `glyphs` template, nil when the style has none or an empty one.
    private static func glyphsTemplate(_ value: JSONValue?, styleURL: String, pointer: JSONPointer) throws -> String? {
        func fail(_ message: String) -> DocumentProblem {
            DocumentProblem(document: styleURL, pointer: pointer.description, message: message)
        }
        guard let value else { return nil }
        guard let template = value.stringValue else {
            throw fail("expected a glyph URL template string, found \(value.typeDescription)")
        }
        if template.isEmpty { return nil }
        let missing = ["{fontstack}", "{range}"].filter { !template.contains($0) }
        if !missing.isEmpty {
            throw fail("expected a glyph URL template with {fontstack} and {range}, found \(StyleURL.quoted(template)), "
                       + "which has no \(missing.joined(separator: " and "))")
        }
        if let problem = StyleURL.problem(in: template) { throw fail(problem) }
        return template
    }

    /// The sprite base URLs: one for the string form, one per entry for the `[{id, url}]` form.
    private static func spriteBases(_ value: JSONValue?, styleURL: String, pointer: JSONPointer) throws -> [String] {
        func fail(_ p: JSONPointer, _ message: String) -> DocumentProblem {
            DocumentProblem(document: styleURL, pointer: p.description, message: message)
        }
        func checked(_ url: String, at p: JSONPointer) throws -> String {
            if let problem = StyleURL.problem(in: url) { throw fail(p, problem) }
            return url
        }
        guard let value else { return [] }
        switch value {
        case .string(let base):
            return base.isEmpty ? [] : [try checked(base, at: pointer)]
        case .array(let entries):
            var bases: [String] = []
            var ids = Set<String>()
            for (i, entry) in entries.enumerated() {
                let entryPointer = pointer.appending(i)
                guard entry.objectValue != nil else {
                    throw fail(entryPointer, "expected a sprite object {\"id\", \"url\"}, found \(entry.typeDescription)")
                }
                guard let idValue = entry["id"] else {
                    throw fail(entryPointer, "expected a sprite object with an \"id\", found none")
                }
                guard let id = idValue.stringValue else {
                    throw fail(entryPointer.appending("id"), "expected a sprite id string, found \(idValue.typeDescription)")
                }
                guard ids.insert(id).inserted else {
                    throw fail(entryPointer.appending("id"), "expected a unique sprite id, found \"\(id)\" twice")
                }
                guard let urlValue = entry["url"] else {
                    throw fail(entryPointer, "expected a sprite object with a \"url\", found none")
                }
                guard let url = urlValue.stringValue else {
                    throw fail(entryPointer.appending("url"), "expected a sprite URL string, found \(urlValue.typeDescription)")
                }
                if !url.isEmpty { bases.append(try checked(url, at: entryPointer.appending("url"))) }
            }
            return bases
        default:
            throw fail(pointer, "expected a sprite URL or an array of {\"id\", \"url\"}, found \(value.typeDescription)")
        }
    }
}
