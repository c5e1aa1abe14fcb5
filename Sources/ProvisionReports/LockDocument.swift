import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// `provision.lock.json`: the record of what was applied, in canonical JSON (sorted keys, no
/// wall-clock times), so that two applies of the same job on the same upstream bytes write the
/// same lock byte for byte.
public struct LockDocument: Equatable, Sendable {
    /// Bumped on every change to the lock's shape (7: `attribution`, `routingPacks`, `files`, a shard's `shard.searchPacks`).
    public static let schemaVersion = 7

    /// A region row as the lock records it.
    public struct RegionEntry: Equatable, Sendable {
        /// `region/pack`.
        public var key: String
        public var regionID: String
        public var stylePack: String?
        public var rowID: Int64
        /// sha256 of the definition JSON.
        public var definitionDigest: String
        /// Tiles the row should have, by template and zoom.
        public var expectedTiles: [TileCount]
        /// Resources the row should have.
        public var expectedResources: Int
        /// Whether every expected tile and resource was linked when the apply ended.
        public var isComplete: Bool

        public init(key: String, regionID: String, stylePack: String?, rowID: Int64, definitionDigest: String,
                    expectedTiles: [TileCount], expectedResources: Int, isComplete: Bool) {
            self.key = key
            self.regionID = regionID
            self.stylePack = stylePack
            self.rowID = rowID
            self.definitionDigest = definitionDigest
            self.expectedTiles = expectedTiles
            self.expectedResources = expectedResources
            self.isComplete = isComplete
        }
    }

    /// A style pack as resolved when it was applied.
    public struct PackEntry: Equatable, Sendable {
        public var id: String
        public var style: String
        public var styleDigest: String?
        public var sources: [SourceSummary]
        /// sha256 of each TileJSON by URL.
        public var tileJSONDigests: [String: String]
        /// `used` when the pack's glyph ranges came from its labels (`audit --verify` then checks
        /// every label's ranges are stored); nil for the other policies (not recorded).
        public var glyphs: GlyphPolicy?

        public init(id: String, style: String, styleDigest: String?, sources: [SourceSummary], tileJSONDigests: [String: String]) {
            self.id = id
            self.style = style
            self.styleDigest = styleDigest
            self.sources = sources
            self.tileJSONDigests = tileJSONDigests
        }
    }

    public var jobName: String
    public var jobDigest: String
    public var epoch: Int64
    public var stylePacks: [PackEntry]
    public var regions: [RegionEntry]
    /// Stored tile and resource rows, payload bytes, and the digest of all content.
    public var tileCount: Int
    public var resourceCount: Int
    public var byteCount: Int64
    public var contentDigest: String
    /// The content digest per chunk of rows, so damage is found row group by row group; empty in
    /// a lock written before chunks were recorded.
    public var chunks: [ChunkDigest] = []
    /// For a partial store of a sharded apply: which share of the job it holds, and the
    /// ordinals of its tiles in the job's key order; nil for a whole store.
    public var shard: ShardEntry?
    /// The search packs' files as the apply left them (version 6; absent when the job has none).
    public var searchPacks: [SearchPackRecord] = []
    /// What the store's data must credit (`Plan.attribution(job:)`; version 7; absent when nothing
    /// declares any).
    public var attribution: [Attribution] = []
    /// The routing packs' extracts as the apply left them, each tile with its digest (version 7;
    /// absent when the job has none).
    public var routingPacks: [RoutingPackRecord] = []
    /// The bundle's files an app ships, with their sizes and SHA-256 (version 7; `FileEntry`).
    public var files: [FileEntry] = []

    /// The share of a job a partial store holds.
    public struct ShardEntry: Equatable, Sendable {
        public var shard: Shard
        /// The key-order ordinals of its tiles, of all the job's tiles.
        public var tiles: Range<Int>
        public var totalTiles: Int
        /// The search packs the merge builds (no shard builds one); nil when the job has none.
        public var searchPacks: ShardSearchPacks?

        public init(shard: Shard, tiles: Range<Int>, totalTiles: Int) {
            self.shard = shard
            self.tiles = tiles
            self.totalTiles = totalTiles
        }

        /// The lock's and the audit's `shard` object.
        public var json: JSONValue {
            ["index": .int(shard.index), "count": .int(shard.count), "firstTile": .int(tiles.lowerBound),
             "endTile": .int(tiles.upperBound), "totalTiles": .int(totalTiles)]
        }
    }

    public init(jobName: String, jobDigest: String, epoch: Int64, stylePacks: [PackEntry], regions: [RegionEntry],
                tileCount: Int, resourceCount: Int, byteCount: Int64, contentDigest: String, chunks: [ChunkDigest] = []) {
        self.chunks = chunks
        self.jobName = jobName
        self.jobDigest = jobDigest
        self.epoch = epoch
        self.stylePacks = stylePacks
        self.regions = regions
        self.tileCount = tileCount
        self.resourceCount = resourceCount
        self.byteCount = byteCount
        self.contentDigest = contentDigest
    }

    /// Digests of styles and TileJSONs by URL, for drift detection.
    public var pinnedDigests: [String: String] {
        var out: [String: String] = [:]
        for pack in stylePacks {
            if let digest = pack.styleDigest { out[pack.style] = digest }
            for (url, digest) in pack.tileJSONDigests { out[url] = digest }
        }
        return out
    }

    /// Region row ids by key, for the planner.
    public var rowsByKey: [String: Int64] {
        Dictionary(regions.map { ($0.key, $0.rowID) }, uniquingKeysWith: { a, _ in a })
    }

    /// The JSON document.
    public var json: JSONValue {
        var document: JSONValue = [
            "schemaVersion": .int(Self.schemaVersion),
            "job": ["name": .string(jobName), "digest": .string(jobDigest)],
            "epoch": .int(Int(epoch)),
            "stylePacks": .array(stylePacks.map { pack in
                var object: JSONValue = [
                    "id": .string(pack.id),
                    "style": .string(pack.style),
                    "styleDigest": pack.styleDigest.map { .string($0) } ?? .null,
                    "sources": .array(pack.sources.map { source in
                        var json = sourceJSON(source)
                        if case .object(var object) = json, let url = source.tileJSONURL {
                            object["tileJSONDigest"] = pack.tileJSONDigests[url].map { .string($0) } ?? .null
                            json = .object(object)
                        }
                        return json
                    }),
                ]
                if let glyphs = pack.glyphs, case .object(var members) = object {
                    members["glyphs"] = .string(glyphs.rawValue)
                    object = .object(members)
                }
                return object
            }),
            "regions": .array(regions.map { region in
                var tiles = JSONObject()
                for count in region.expectedTiles {
                    var perTemplate = tiles[count.urlTemplate]?.objectValue ?? JSONObject()
                    perTemplate[String(count.zoom)] = .int(count.count)
                    tiles[count.urlTemplate] = .object(perTemplate)
                }
                return [
                    "key": .string(region.key),
                    "id": .string(region.regionID),
                    "stylePack": region.stylePack.map { .string($0) } ?? .null,
                    "rowId": .int(Int(region.rowID)),
                    "definitionDigest": .string(region.definitionDigest),
                    "expectedTiles": .object(tiles),
                    "expectedResources": .int(region.expectedResources),
                    "complete": .bool(region.isComplete),
                ]
            }),
            "store": [
                "tiles": .int(tileCount),
                "resources": .int(resourceCount),
                "bytes": .int(Int(byteCount)),
                "contentDigest": .string(contentDigest),
                "chunks": chunksJSON,
            ],
        ]
        if let shard, case .object(var object) = document {
            var entry = shard.json
            // Only the lock carries what the merge builds (the audit's `shard` is the share alone).
            if let packs = shard.searchPacks, case .object(var members) = entry {
                members["searchPacks"] = packs.json
                entry = .object(members)
            }
            object["shard"] = entry
            document = .object(object)
        }
        if !searchPacks.isEmpty, case .object(var object) = document {
            object["searchPacks"] = .array(searchPacks.map { pack in
                ["id": .string(pack.id), "file": .string(pack.file), "digest": .string(pack.digest),
                 "inputDigest": .string(pack.inputDigest), "settingsDigest": .string(pack.settingsDigest),
                 "entries": .int(pack.entries), "bytes": .int(Int(pack.bytes)), "tiles": .int(pack.tiles)]
            })
            document = .object(object)
        }
        if !attribution.isEmpty, case .object(var object) = document {
            object["attribution"] = .array(attribution.map(\.json))
            document = .object(object)
        }
        if !routingPacks.isEmpty, case .object(var object) = document {
            object["routingPacks"] = .array(routingPacks.map(Self.routingPackJSON))
            document = .object(object)
        }
        if !files.isEmpty, case .object(var object) = document {
            object["files"] = .array(files.map(\.json))
            document = .object(object)
        }
        return document
    }

    /// `{"templates": […], "list": […]}`: one line a chunk, `R <url> <rows> <digest>` or
    /// `T <template index> <ratio> <z> <x> <y> <rows> <digest>` (URLs hold no spaces).
    var chunksJSON: JSONValue {
        var templates: [String] = []
        var index: [String: Int] = [:]
        let lines: [JSONValue] = chunks.map { chunk in
            switch chunk.start {
            case .resource(let url): return .string("R \(url) \(chunk.rows) \(chunk.digest)")
            case .tile(let key):
                let i = index[key.urlTemplate] ?? {
                    templates.append(key.urlTemplate)
                    index[key.urlTemplate] = templates.count - 1
                    return templates.count - 1
                }()
                return .string("T \(i) \(key.pixelRatio) \(key.tile.z) \(key.tile.x) \(key.tile.y) \(chunk.rows) \(chunk.digest)")
            }
        }
        return ["templates": .array(templates.map { .string($0) }), "list": .array(lines)]
    }

    static func chunks(from json: JSONValue?) -> [ChunkDigest] {
        let templates = json?["templates"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return (json?["list"]?.arrayValue ?? []).compactMap { line -> ChunkDigest? in
            let parts = (line.stringValue ?? "").split(separator: " ").map(String.init)
            if parts.count == 4, parts[0] == "R", let rows = Int(parts[2]) {
                return ChunkDigest(start: .resource(url: parts[1]), rows: rows, digest: parts[3])
            }
            guard parts.count == 8, parts[0] == "T", let t = Int(parts[1]), templates.indices.contains(t),
                  let ratio = Int(parts[2]), let z = Int(parts[3]), let x = Int(parts[4]), let y = Int(parts[5]),
                  let rows = Int(parts[6]) else { return nil }
            return ChunkDigest(start: .tile(TileKey(urlTemplate: templates[t], pixelRatio: ratio, tile: TileID(z: z, x: x, y: y))),
                               rows: rows, digest: parts[7])
        }
    }

    /// Reads a lock document; nil when it is not one this version understands.
    public init?(json: JSONValue) {
        guard let version = json["schemaVersion"]?.intValue, (1...Self.schemaVersion).contains(version),
              let jobName = json["job"]?["name"]?.stringValue,
              let jobDigest = json["job"]?["digest"]?.stringValue,
              let epoch = json["epoch"]?.intValue else { return nil }
        self.jobName = jobName
        self.jobDigest = jobDigest
        self.epoch = Int64(epoch)
        stylePacks = (json["stylePacks"]?.arrayValue ?? []).compactMap { pack in
            guard let id = pack["id"]?.stringValue, let style = pack["style"]?.stringValue else { return nil }
            var digests: [String: String] = [:]
            let sources: [SourceSummary] = (pack["sources"]?.arrayValue ?? []).compactMap { s in
                guard let name = s["name"]?.stringValue, let template = s["template"]?.stringValue else { return nil }
                let url = s["tileJSON"]?.stringValue
                if let url, let digest = s["tileJSONDigest"]?.stringValue { digests[url] = digest }
                return SourceSummary(name: name, tileJSONURL: url, urlTemplate: template,
                                     scheme: s["scheme"]?.stringValue ?? "xyz", minZoom: s["minzoom"]?.intValue ?? 0,
                                     maxZoom: s["maxzoom"]?.intValue ?? 22, tileSize: s["tileSize"]?.intValue ?? 512)
            }
            var entry = PackEntry(id: id, style: style, styleDigest: pack["styleDigest"]?.stringValue, sources: sources,
                                  tileJSONDigests: digests)
            entry.glyphs = pack["glyphs"]?.stringValue.flatMap(GlyphPolicy.init(rawValue:))
            return entry
        }
        regions = (json["regions"]?.arrayValue ?? []).compactMap { r in
            guard let key = r["key"]?.stringValue, let id = r["id"]?.stringValue,
                  let rowID = r["rowId"]?.intValue else { return nil }
            var expected: [TileCount] = []
            for (template, zooms) in r["expectedTiles"]?.objectValue?.members ?? [] {
                for (z, count) in zooms.objectValue?.members ?? [] {
                    if let zoom = Int(z), let n = count.intValue {
                        expected.append(TileCount(urlTemplate: template, zoom: zoom, count: n))
                    }
                }
            }
            expected.sort { ($0.urlTemplate, $0.zoom) < ($1.urlTemplate, $1.zoom) }
            return RegionEntry(key: key, regionID: id, stylePack: r["stylePack"]?.stringValue, rowID: Int64(rowID),
                               definitionDigest: r["definitionDigest"]?.stringValue ?? "",
                               expectedTiles: expected, expectedResources: r["expectedResources"]?.intValue ?? 0,
                               isComplete: r["complete"] == .bool(true))
        }
        tileCount = json["store"]?["tiles"]?.intValue ?? 0
        resourceCount = json["store"]?["resources"]?.intValue ?? 0
        byteCount = Int64(json["store"]?["bytes"]?.intValue ?? 0)
        contentDigest = json["store"]?["contentDigest"]?.stringValue ?? ""
        // Before version 5 a chunk was up to 1,024 rows with 16 hex digits of a SHA-256: still
        // compared (`findDamage`), though a difference there widens to the whole chunk.
        chunks = Self.chunks(from: json["store"]?["chunks"])
        if let shard = json["shard"], let index = shard["index"]?.intValue, let count = shard["count"]?.intValue,
           let first = shard["firstTile"]?.intValue, let end = shard["endTile"]?.intValue, first <= end,
           let total = shard["totalTiles"]?.intValue {
            var entry = ShardEntry(shard: Shard(index: index, count: count), tiles: first..<end, totalTiles: total)
            if let packs = shard["searchPacks"] {
                guard let read = ShardSearchPacks(json: packs) else { return nil }
                entry.searchPacks = read
            }
            self.shard = entry
        }
        searchPacks = (json["searchPacks"]?.arrayValue ?? []).compactMap { pack in
            guard let id = pack["id"]?.stringValue, let file = pack["file"]?.stringValue,
                  let digest = pack["digest"]?.stringValue, let input = pack["inputDigest"]?.stringValue,
                  let settings = pack["settingsDigest"]?.stringValue else { return nil }
            return SearchPackRecord(id: id, file: file, digest: digest, inputDigest: input, settingsDigest: settings,
                                    entries: pack["entries"]?.intValue ?? 0, bytes: Int64(pack["bytes"]?.intValue ?? 0),
                                    tiles: pack["tiles"]?.intValue ?? 0)
        }
        attribution = (json["attribution"]?.arrayValue ?? []).compactMap(Attribution.init(json:))
        routingPacks = (json["routingPacks"]?.arrayValue ?? []).compactMap(Self.routingPackRecord)
        files = (json["files"]?.arrayValue ?? []).compactMap(FileEntry.init(json:))
    }
}
