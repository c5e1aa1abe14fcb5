import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore
import TileMath

/// The tilesets and style packs a store holds, named as `export` and `audit` name them.
///
/// A tileset (one tile template and pixel ratio of the store) takes the name of the style source
/// that draws from it; a region's extra tileset takes a name made from its TileJSON URL or bare
/// template (`…/tiles/streets/{z}/{x}/{y}.pbf` → `streets`, `https://a.tile.example.org/{z}/…` →
/// the host). Names that would clash are qualified: with the style pack (`pack-source`), then a
/// number (`name-2`); a second pixel ratio of one template gets `@2x`. The catalog is rebuilt
/// from the documents stored in `offline.db` (styles and TileJSONs, read with the planner's own
/// resolver), so it works on any MapLibre offline database; the lock only lends style pack ids.
/// A document it cannot read (not stored, not JSON, not a style or TileJSON the resolver takes)
/// leaves out what it would have told, and says so in `warnings`, which `export` prints and
/// reports: a style pack left out of a bundle, a tileset named from its template and taken as XYZ.
public struct ExportCatalog {
    /// One tileset of the store.
    public struct Source {
        /// The name `--source` takes.
        public var name: String
        /// The tiles.
        public var set: StoredTileSet
        /// Whether stored rows are numbered from the south (a TMS source).
        public var isTMS: Bool
        /// The TileJSON it was read from, or the style's inline source object; nil for a bare template.
        public var tileJSON: JSONValue?
        /// The TileJSON URL, when there is one.
        public var tileJSONURL: String?
        /// The style sources that draw from it: (style pack id, source name).
        public var styleSources: [(pack: String, source: String)]
        /// What its tiles must credit: each drawing style source's attribution (else the
        /// TileJSON's; `Attribution.declared`), joined; nil when none declares any.
        public var attribution: String?
    }

    /// One style pack of the store.
    public struct StylePack {
        /// The style pack id (the lock's, else made from the style URL).
        public var id: String
        /// The canonical style URL.
        public var styleURL: String
        /// The stored style document.
        public var style: JSONValue
        /// The style as the planner resolves it.
        public var resolved: ResolvedStyle
        /// The region rows drawn with it.
        public var regionRows: [Int64]
        /// Catalog source name by style source name, for the sources with stored tiles.
        public var sourceNames: [String: String]
    }

    /// Every tileset with tiles, sorted by name.
    public var sources: [Source]
    /// Every style pack whose style is stored, in lock (else URL) order.
    public var stylePacks: [StylePack]
    /// What the catalog could not read and what that leaves out, one sentence each, in the
    /// order found (URLs redacted by `URLSecrets`).
    public var warnings: [String] = []

    /// The catalog of `database`, counting only the tiles of region rows `regions` (nil: all).
    public init(database: OfflineDatabase, lock: LockDocument?, regions: [Int64]? = nil) throws {
        let sets = try database.storedTileSets(regions: regions).filter { $0.tileCount > 0 }
        var warnings = Warnings()
        let packs = try Self.stylePacks(database: database, lock: lock, warnings: &warnings)
        var claims: [String: [(pack: String, source: String, isTMS: Bool, tileJSON: JSONValue?, url: String?)]] = [:]
        for pack in packs {
            for ref in pack.resolved.sources where ref.type.isTiled {
                let subject = "source '\(ref.name)' of style pack '\(pack.id)'"
                var tileJSON: JSONValue?
                if let url = ref.tileJSONURL {
                    guard let data = try database.resourceData(url: url) else {
                        warnings.add("the TileJSON \(url) of \(subject) is not stored: \(Warnings.unclaimed)", about: url)
                        continue
                    }
                    do {
                        tileJSON = try JSONValue.parse(data)
                    } catch {
                        warnings.add("the stored TileJSON \(url) of \(subject) is not valid JSON (\(error)): \(Warnings.unclaimed)",
                                     about: url)
                        continue
                    }
                }
                let tileset: TileSource?
                do {
                    tileset = try ref.resolvedTileset(tileJSON: tileJSON)
                } catch {
                    warnings.add("\(subject) cannot be read (\(error)): \(Warnings.unclaimed)", about: ref.tileJSONURL)
                    continue
                }
                guard let tileset else { continue }  // not tiled from a template: nothing to claim
                let document = ref.tileJSONURL == nil ? pack.style["sources"]?[ref.name] : tileJSON
                claims[tileset.template, default: []].append((pack.id, ref.name, tileset.scheme == .tms, document, ref.tileJSONURL))
            }
        }
        let extra = try Self.regionTileJSONs(database: database, unclaimed: Set(sets.map(\.urlTemplate)).subtracting(claims.keys),
                                             warnings: &warnings)
        self.warnings = warnings.list

        var drafts: [(base: String, qualified: String, source: Source)] = []
        for set in sets {
            var source = Source(name: "", set: set, isTMS: false, tileJSON: nil, tileJSONURL: nil, styleSources: [], attribution: nil)
            var base: String
            var qualified: String
            if let owners = claims[set.urlTemplate], let first = owners.first {
                source.isTMS = first.isTMS
                source.tileJSON = first.tileJSON
                source.tileJSONURL = first.url
                source.styleSources = owners.map { ($0.pack, $0.source) }
                base = first.source
                qualified = "\(first.pack)-\(first.source)"
            } else if let found = extra[set.urlTemplate] {
                source.isTMS = found.isTMS
                source.tileJSON = found.tileJSON
                source.tileJSONURL = found.url
                base = Self.derivedName(found.url)
                qualified = base
            } else {
                base = Self.derivedName(set.urlTemplate)
                qualified = base
            }
            if sets.contains(where: { $0.urlTemplate == set.urlTemplate && $0.pixelRatio != set.pixelRatio }), set.pixelRatio > 1 {
                base += "@\(set.pixelRatio)x"
                qualified += "@\(set.pixelRatio)x"
            }
            drafts.append((base, qualified, source))
        }
        var taken = Set<String>()
        var named: [Source] = []
        for draft in drafts {
            let clash = drafts.filter { $0.base == draft.base }.count > 1
            var name = clash ? draft.qualified : draft.base
            var counter = 2
            while taken.contains(name) {
                name = (clash ? draft.qualified : draft.base) + "-\(counter)"
                counter += 1
            }
            taken.insert(name)
            var source = draft.source
            source.name = name
            named.append(source)
        }
        for index in named.indices {
            let owners = named[index].styleSources.map { owner in packs.first { $0.id == owner.pack }?.style["sources"]?[owner.source] }
            named[index].attribution = Attribution.joined((owners.isEmpty ? [nil] : owners).compactMap {
                Attribution.declared(styleSource: $0, tileJSON: named[index].tileJSON)
            })
        }
        sources = named.sorted { $0.name < $1.name }
        stylePacks = packs.map { pack in
            var pack = pack
            for source in named {
                for owner in source.styleSources where owner.pack == pack.id { pack.sourceNames[owner.source] = source.name }
            }
            return pack
        }
    }

    /// The style packs whose styles are stored: the lock's, else each region's `style_url` that
    /// is a stored style.
    private static func stylePacks(database: OfflineDatabase, lock: LockDocument?,
                                   warnings: inout Warnings) throws -> [StylePack] {
        var urls: [(id: String?, url: String)] = lock?.stylePacks.map { ($0.id, $0.style) } ?? []
        var rowsByURL: [String: [Int64]] = [:]
        for region in try database.regions() {
            let definition: JSONValue
            do {
                definition = try JSONValue.parse(region.definition)
            } catch {
                warnings.add("the definition of region row \(region.rowID) is not valid JSON (\(error)): the style it is "
                             + "drawn with is unknown")
                continue
            }
            guard let url = definition["style_url"]?.stringValue else {
                warnings.add("the definition of region row \(region.rowID) names no style_url: the style it is drawn with is unknown")
                continue
            }
            rowsByURL[url, default: []].append(region.rowID)
            if !urls.contains(where: { $0.url == url }) { urls.append((nil, url)) }
        }
        var packs: [StylePack] = []
        var ids = Set<String>()
        for (lockID, url) in urls {
            let subject = lockID.map { "style \(url) of style pack '\($0)'" } ?? "style \(url)"
            guard let data = try database.resourceData(url: url) else {
                warnings.add("the \(subject) is not stored: \(Warnings.packLeftOut)")
                continue
            }
            let style: JSONValue
            do {
                style = try JSONValue.parse(data)
            } catch {
                warnings.add("the stored \(subject) is not valid JSON (\(error)): \(Warnings.packLeftOut)")
                continue
            }
            guard style["version"] != nil, style["layers"] != nil else {
                warnings.add("the stored \(subject) is not a style (no version or layers): \(Warnings.packLeftOut)")
                continue
            }
            var id = lockID ?? derivedName(url)
            var counter = 2
            while ids.contains(id) {
                id = (lockID ?? derivedName(url)) + "-\(counter)"
                counter += 1
            }
            ids.insert(id)
            let pack = ProvisionModel.StylePack(id: id, style: url, glyphs: .all)
            let resolved: ResolvedStyle
            do {
                resolved = try StyleResolver.resolve(styleURL: url, style: style, pack: pack)
            } catch {
                warnings.add("the stored \(subject) cannot be read (\(error)): \(Warnings.packLeftOut)")
                continue
            }
            packs.append(StylePack(id: id, styleURL: url, style: style, resolved: resolved,
                                   regionRows: rowsByURL[url] ?? [], sourceNames: [:]))
        }
        return packs
    }

    /// The stored TileJSONs (`kind` 2) whose tiles are among `unclaimed` templates: a region's
    /// extra tilesets given by TileJSON URL.
    private static func regionTileJSONs(database: OfflineDatabase, unclaimed: Set<String>, warnings: inout Warnings)
        throws -> [String: (isTMS: Bool, tileJSON: JSONValue, url: String)] {
        guard !unclaimed.isEmpty else { return [:] }
        var found: [String: (isTMS: Bool, tileJSON: JSONValue, url: String)] = [:]
        for (url, data) in try database.resources(ofKind: .source) where !warnings.told(url) {
            let json: JSONValue
            do {
                json = try JSONValue.parse(data)
            } catch {
                warnings.add("the stored TileJSON \(url) is not valid JSON (\(error)): \(Warnings.unclaimed)")
                continue
            }
            guard json["tiles"] != nil else { continue }  // a TileJSON without tiles names no template
            var failure: Error?
            var readAs = 0
            for type in [SourceType.vector, .raster, .rasterDEM] {
                // Each type reads the same document; only mapbox:// templates differ between them.
                let tileset: TileSource
                do {
                    tileset = try TileSource.from(tileJSON: json, sourceURL: url, type: type, tileSize: 512)
                } catch {
                    failure = failure ?? error
                    continue
                }
                readAs += 1
                guard unclaimed.contains(tileset.template), found[tileset.template] == nil else { continue }
                found[tileset.template] = (tileset.scheme == .tms, json, url)
            }
            if let failure, readAs == 0 {
                warnings.add("the stored TileJSON \(url) cannot be read (\(failure)): \(Warnings.unclaimed)")
            }
        }
        return found
    }

    /// The warnings of a catalog, each once, URLs redacted.
    struct Warnings {
        /// What an unreadable source leaves out.
        static let unclaimed = "tiles it describes, if stored, are named from their URL template and exported as XYZ rows"
        /// What an unreadable style leaves out.
        static let packLeftOut = "the style pack is left out (of a bundle, too) and its sources are named from their templates"

        private(set) var list: [String] = []
        /// The documents warned about.
        private var urls: Set<String> = []

        /// Adds `warning` (once), about the document at `url` when there is one.
        mutating func add(_ warning: String, about url: String? = nil) {
            if let url { urls.insert(url) }
            let text = URLSecrets().redact(warning)
            if !list.contains(text) { list.append(text) }
        }

        /// Whether a warning was about the document at `url`.
        func told(_ url: String) -> Bool { urls.contains(url) }
    }

    /// A file-safe name from a URL or template: its last path segment without placeholders or
    /// extension, else its host.
    public static func derivedName(_ url: String) -> String {
        var text = url
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<query]) }
        var host = ""
        if let scheme = text.range(of: "://") {
            text = String(text[scheme.upperBound...])
            host = String(text.prefix { $0 != "/" })
            text = String(text.dropFirst(host.count))
        }
        let segments = text.split(separator: "/").filter { !$0.contains("{") && $0 != "." && $0 != ".." }
        var name = segments.last.map(String.init) ?? host
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, segments.last != nil { name = String(name[..<dot]) }
        let safe = String(name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "-" })
            .trimmingCharacters(in: CharacterSet(charactersIn: ".-"))
        return safe.isEmpty ? "tiles" : safe
    }
}
