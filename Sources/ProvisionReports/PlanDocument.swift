import Foundation
import ProvisionFoundation
import ProvisionModel

/// The JSON wire form of a plan (`plan --json`, Jobs/schema/plan.schema.json), and the model the
/// text and Markdown views are rendered from, so the three cannot drift.
public struct PlanDocument: Equatable, Sendable {
    /// Bumped on every change to the JSON shape (3: glyph policy; 4: `footprint`; 5: `searchPacks`;
    /// 6: `routingPacks`).
    public static let schemaVersion = 6

    public struct Region: Equatable, Sendable {
        public var key: String
        public var id: String
        public var name: String
        public var stylePack: String?
        public var action: PlanAction
        public var rowID: Int64?
        public var tiles: ChangeCounts
        public var zooms: [ZoomChange]
        public var resources: ChangeCounts
        public var estimatedBytes: Int64
        /// Whether its glyph ranges (`"glyphs": "used"`) are determined at apply.
        public var glyphsAtApply = false
    }

    public var jobName: String
    public var jobDigest: String
    public var store: String
    public var hasChanges: Bool
    public var countsArePrecise: Bool
    public var regions: [Region]
    public var removedRegions: [RemovedRegion]
    public var stylePacks: [StylePackPlan]
    public var tilesToDownload: Int
    public var bytesToDownload: Int64
    public var limits: Limits
    public var drift: [DocumentDrift]
    /// Whether upstream drift was checked (false: `plan --offline`).
    public var driftChecked: Bool
    public var refresh: RefreshPlan?
    public var refetchTemplates: [String]
    public var notes: [PlanNote]
    public var repairRows: Int
    /// Why the lock does not vouch for the stored rows (`Plan.unverifiedStore`); nil when it does.
    public var unverifiedStore: String?
    /// The store after the apply: per region its marginal and shared bytes, per style pack its
    /// resources; nil for a plan read from a file.
    public var footprint: Footprint?
    /// With `--shard`: the share the counts are of, and the whole job's downloads beside them.
    public var shard: Shard?
    /// The job's search packs and whether the apply builds or keeps each file.
    public var searchPacks: [SearchPackPlan] = []
    /// The job's routing packs: per level the graph tiles added, removed and kept, per region the
    /// tiles its geometry meets.
    public var routingPacks: [RoutingPackPlan] = []

    /// The share of the job a shard's plan counts.
    public struct Shard: Equatable, Sendable {
        public var shard: ProvisionModel.Shard
        /// The key-order ordinals of its tiles.
        public var tiles: Range<Int>
        /// The job's distinct tiles over all shards.
        public var totalTiles: Int
        /// What an apply of the whole job (no shard) would download.
        public var jobTilesToDownload: Int
        public var jobBytesToDownload: Int64
    }

    /// The document of `plan` computed against the store at `store`.
    public init(plan: Plan, store: String, limits: Limits) {
        jobName = plan.jobName
        jobDigest = plan.jobDigest
        self.store = store
        hasChanges = plan.hasChanges
        countsArePrecise = plan.countsArePrecise
        regions = plan.regions.enumerated().map { index, region in
            // A shard's plan shows what the shard's apply does to each row.
            Region(key: region.key, id: region.regionID, name: region.name, stylePack: region.stylePackID, action: plan.action(of: index),
                   rowID: region.rowID, tiles: plan.tileTotals(of: index),
                   zooms: plan.shard.map { $0.zoomChanges[index] } ?? region.zoomChanges, resources: region.resources.counts,
                   estimatedBytes: plan.shard.map { $0.estimatedBytes[index] } ?? region.estimatedBytes,
                   glyphsAtApply: region.glyphsAtApply)
        }
        removedRegions = plan.removedRegions
        stylePacks = plan.stylePacks
        tilesToDownload = plan.appliedTilesToDownload
        bytesToDownload = plan.appliedBytesToDownload
        shard = plan.shard.map {
            Shard(shard: $0.shard, tiles: $0.share.tiles, totalTiles: $0.share.totalTiles,
                  jobTilesToDownload: plan.tilesToDownload, jobBytesToDownload: plan.bytesToDownload)
        }
        self.limits = limits
        drift = plan.drift
        driftChecked = plan.driftChecked
        refresh = plan.refresh
        refetchTemplates = plan.refetchTemplates
        notes = plan.notes
        repairRows = plan.repairRows
        unverifiedStore = plan.unverifiedStore
        // The footprint is the whole job's store; a shard's store holds only its share.
        footprint = plan.shard == nil ? Footprint(plan: plan) : nil
        searchPacks = plan.searchPacks
        routingPacks = plan.routingPacks
    }

    /// Tile links added, removed and kept over all regions.
    public var tileTotals: ChangeCounts {
        regions.reduce(ChangeCounts()) { $0 + $1.tiles }
            + ChangeCounts(remove: removedRegions.reduce(0) { $0 + $1.tileCount })
    }

    /// Resource links added, removed and kept over all regions.
    public var resourceTotals: ChangeCounts {
        regions.reduce(ChangeCounts()) { $0 + $1.resources }
            + ChangeCounts(remove: removedRegions.reduce(0) { $0 + $1.resourceCount })
    }

    /// The JSON document.
    public var json: JSONValue {
        let tiles = tileTotals, resources = resourceTotals
        func counts(_ c: ChangeCounts) -> JSONValue { ["add": .int(c.add), "remove": .int(c.remove), "keep": .int(c.keep)] }
        var limitsObject = JSONObject()
        limitsObject["maxTiles"] = limits.maxTiles.map { .int($0) } ?? .null
        limitsObject["maxBytes"] = limits.maxBytes.map { .int(Int($0)) } ?? .null
        var document: JSONValue = [
            "schemaVersion": .int(Self.schemaVersion),
            "kind": "plan",
            "job": ["name": .string(jobName), "digest": .string(jobDigest)],
            "store": .string(store),
            "hasChanges": .bool(hasChanges),
            "countsArePrecise": .bool(countsArePrecise),
            "summary": [
                "tiles": counts(tiles),
                "resources": counts(resources),
                "tilesToDownload": .int(tilesToDownload),
                "bytesToDownload": .int(Int(bytesToDownload)),
                "regionsToCreate": .int(regions.filter { $0.action == .add }.count),
                "regionsToUpdate": .int(regions.filter { $0.action == .update }.count),
                "regionsToDelete": .int(removedRegions.count),
            ],
            "limits": .object(limitsObject),
            "refresh": refresh.map { ["before": .int(Int($0.before)), "resources": .int($0.resources), "tiles": .int($0.tiles)] } ?? .null,
            "refetchTemplates": .array(refetchTemplates.map { .string($0) }),
            "repairRows": .int(repairRows),
            "unverifiedStore": unverifiedStore.map { .string($0) } ?? .null,
            "footprint": footprint?.json ?? .null,
            "notes": .array(notes.map { ["subject": .string($0.subject), "message": .string($0.message)] }),
            "drift": .array(drift.map { ["url": .string($0.url), "pinned": .string($0.pinned), "current": .string($0.current)] }),
            "driftChecked": .bool(driftChecked),
            "searchPacks": .array(searchPacks.map { pack in
                ["id": .string(pack.pack.id), "file": .string(pack.pack.file), "action": .string(pack.action.rawValue),
                 "reason": pack.reason.isEmpty ? .null : .string(pack.reason),
                 "sources": .array(pack.sources.map { .string($0.name) }), "regions": .array(pack.regions.map { .string($0) })]
            }),
            "regions": .array(regions.map { region in
                [
                    "key": .string(region.key),
                    "id": .string(region.id),
                    "name": .string(region.name),
                    "stylePack": region.stylePack.map { .string($0) } ?? .null,
                    "action": .string(region.action.rawValue),
                    "rowId": region.rowID.map { .int(Int($0)) } ?? .null,
                    "tiles": counts(region.tiles),
                    "zooms": .array(region.zooms.map {
                        ["template": .string($0.urlTemplate), "zoom": .int($0.zoom),
                         "add": .int($0.counts.add), "remove": .int($0.counts.remove), "keep": .int($0.counts.keep)]
                    }),
                    "resources": counts(region.resources),
                    "estimatedBytes": .int(Int(region.estimatedBytes)),
                    "glyphsAtApply": .bool(region.glyphsAtApply),
                ]
            }),
            "removedRegions": .array(removedRegions.map {
                ["rowId": .int(Int($0.rowID)), "key": $0.key.map { .string($0) } ?? .null,
                 "tiles": .int($0.tileCount), "resources": .int($0.resourceCount)]
            }),
            "stylePacks": .array(stylePacks.map { pack in
                [
                    "id": .string(pack.id),
                    "style": .string(pack.styleURL),
                    "resources": .int(pack.resources.count),
                    "missing": .int(pack.missing.count),
                    "resourcesByKind": .object(JSONObject(kindCounts(pack.resources).map { ($0.key, .int($0.value)) })),
                    "sources": .array(pack.overview.sources.map { styleSourceJSON($0, pack: pack) }),
                    "fontStacks": .array(pack.overview.fontStacks.map {
                        ["fonts": .array($0.map { .string($0) }), "glyphRanges": .int(pack.overview.glyphRangesPerStack)]
                    }),
                    "glyphs": pack.overview.glyphsTemplate.map { .string($0) } ?? .null,
                    "glyphPolicy": .string(pack.glyphPolicy.rawValue),
                    "glyphsAtApply": .bool(glyphsAtApply(pack: pack.id)),
                    "sprites": .array(pack.overview.sprites.map { .string($0) }),
                ]
            }),
        ]
        // Only a shard's plan has it (a plan of the whole job is as it was).
        if let shard, case .object(var object) = document {
            object["shard"] = ["index": .int(shard.shard.index), "count": .int(shard.shard.count),
                               "firstTile": .int(shard.tiles.lowerBound), "endTile": .int(shard.tiles.upperBound),
                               "totalTiles": .int(shard.totalTiles), "jobTilesToDownload": .int(shard.jobTilesToDownload),
                               "jobBytesToDownload": .int(Int(shard.jobBytesToDownload))]
            document = .object(object)
        }
        // Only a job with routing packs has them (the plan of any other job is as it was).
        if !routingPacks.isEmpty, case .object(var object) = document {
            object["routingPacks"] = .array(routingPacks.map(Self.routingPackJSON))
            document = .object(object)
        }
        return document
    }

    /// A routing pack's entry of the plan: what happens to its extract, and its tiles per level and
    /// per region and level.
    static func routingPackJSON(_ pack: RoutingPackPlan) -> JSONValue {
        [
            "id": .string(pack.pack.id), "file": .string(pack.pack.file), "tiles": .string(pack.pack.tiles),
            "action": .string(pack.action.rawValue), "reason": pack.reason.isEmpty ? .null : .string(pack.reason),
            "regions": .array(pack.regions.map { .string($0) }),
            "tilesToDownload": .int(pack.add.count),
            "bytesToDownload": bytesJSON(pack.bytesToDownload),
            "levels": .array(zip(pack.levelChanges, pack.levelBytes).map { level, bytes in
                ["level": .int(level.level), "add": .int(level.counts.add), "remove": .int(level.counts.remove),
                 "keep": .int(level.counts.keep), "addBytes": bytesJSON(bytes.bytes.add),
                 "removeBytes": .int(Int(bytes.bytes.remove)), "keepBytes": .int(Int(bytes.bytes.keep))]
            }),
            "regionTiles": .array(pack.regionChanges.map {
                ["region": .string($0.tiles.region), "level": .int($0.tiles.level), "tiles": .int($0.tiles.tiles),
                 "absent": .int($0.tiles.absent), "add": .int($0.add), "keep": .int($0.keep),
                 "addBytes": bytesJSON($0.bytes.add), "keepBytes": .int(Int($0.bytes.keep))]
            }),
        ]
    }

    /// A byte count, or null when it is unknown until the tiles are fetched.
    static func bytesJSON(_ bytes: Int64?) -> JSONValue { bytes.map { .int(Int($0)) } ?? .null }

    /// Whether a region row of pack `id` has its glyph ranges determined at apply.
    public func glyphsAtApply(pack id: String) -> Bool {
        regions.contains { $0.stylePack == id && $0.glyphsAtApply }
    }

    func kindCounts(_ refs: [ResourceRef]) -> [(key: String, value: Int)] {
        var counts: [ResourceKind: Int] = [:]
        for ref in refs { counts[ref.kind, default: 0] += 1 }
        return counts.sorted { $0.key < $1.key }.map { ($0.key.name, $0.value) }
    }
}

/// One source of a pack's style as the plan shows it: what is fetched for it and, for a tiled
/// source, its tileset (as the lock records it) and the zooms fetched per region.
func styleSourceJSON(_ source: StyleSourceSummary, pack: StylePackPlan) -> JSONValue {
    var reason: JSONValue = .null, url: JSONValue = .null
    switch source.fetch {
    case .skipped(let why): reason = .string(why)
    case .resource(let resource): url = .string(resource)
    case .tiles, .nothing: break
    }
    let tileset = source.fetch == .tiles ? pack.sources.first { $0.name == source.name } : nil
    return [
        "name": .string(source.name),
        "type": .string(source.type),
        "fetch": .string(source.fetch.name),
        "reason": reason,
        "url": url,
        "templates": .int(source.templateCount),
        "tileset": tileset.map(sourceJSON) ?? .null,
        "zooms": .array(source.zooms.map {
            ["region": .string($0.region), "min": $0.zooms.map { .int($0.lowerBound) } ?? .null,
             "max": $0.zooms.map { .int($0.upperBound) } ?? .null]
        }),
    ]
}

/// A source summary as JSON (plan, lock).
func sourceJSON(_ source: SourceSummary) -> JSONValue {
    [
        "name": .string(source.name),
        "tileJSON": source.tileJSONURL.map { .string($0) } ?? .null,
        "template": .string(source.urlTemplate),
        "scheme": .string(source.scheme),
        "minzoom": .int(source.minZoom),
        "maxzoom": .int(source.maxZoom),
        "tileSize": .int(source.tileSize),
    ]
}
