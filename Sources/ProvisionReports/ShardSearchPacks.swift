import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// What `provision merge` needs to build a sharded apply's search packs, recorded in each
/// shard's lock (`shard.searchPacks`): the packs as the plan resolved them, and the area and tile
/// sets of every region row they read.
///
/// Why the lock carries it: a shard holds only its share of the tiles, so no shard builds a
/// pack; the merge, which reads no job file, builds each one once from all the shards' tiles, with
/// the settings the whole apply would use, and so writes the bytes that apply writes.
public struct ShardSearchPacks: Equatable, Sendable {
    /// A region row as a pack build reads it.
    public struct Region: Equatable, Sendable {
        public var regionID: String
        public var area: CoverArea
        /// Only the sets of the packs' sources.
        public var tileSets: [PlannedTileSet]

        public init(regionID: String, area: CoverArea, tileSets: [PlannedTileSet]) {
            self.regionID = regionID
            self.area = area
            self.tileSets = tileSets
        }
    }

    /// The packs, in job order (each to be built: the action and reason are not kept).
    public var packs: [SearchPackPlan]
    /// The rows of the regions the packs name, in plan order.
    public var regions: [Region]

    public init(packs: [SearchPackPlan], regions: [Region]) {
        self.packs = packs
        self.regions = regions
    }

    /// The packs of `plan` (resolved as `packs`) and the rows they read.
    public init(packs: [SearchPackPlan], plan: Plan) {
        let named = Set(packs.flatMap(\.regions))
        let templates = Set(packs.flatMap { $0.sources.map(\.urlTemplate) })
        self.packs = packs.map { pack in
            var pack = pack
            (pack.action, pack.reason) = (.build, "")
            return pack
        }
        regions = plan.regions.filter { named.contains($0.regionID) }.map { row in
            Region(regionID: row.regionID, area: row.area, tileSets: row.tileSets.filter { templates.contains($0.urlTemplate) })
        }
    }

    /// A plan holding only these rows, as `SearchPackBuild` reads one.
    public func plan(jobName: String, jobDigest: String, epoch: Int64) -> Plan {
        let rows = regions.map { region in
            RegionPlan(regionID: region.regionID, name: region.regionID, stylePackID: nil, rowID: nil, action: .keep,
                       definition: Data(), description: Data(), area: region.area, tileSets: region.tileSets, zoomChanges: [],
                       staleTileCounts: [], resources: ResourceChanges(wanted: [], add: [], remove: []), estimatedBytes: 0)
        }
        return Plan(jobName: jobName, jobDigest: jobDigest, epoch: epoch, regions: rows, removedRegions: [], stylePacks: [],
                    documents: [:], assumedTileBytes: 0)
    }

    /// The lock's `shard.searchPacks` object.
    public var json: JSONValue {
        [
            "packs": .array(packs.map { plan in
                let layers = plan.pack.layers.map { mapping in
                    JSONValue.object(JSONObject(mapping.sorted { $0.key < $1.key }.map { layer, rule in
                        (layer, ["kind": .string(rule.kind), "class": .string(rule.classKey),
                                 "subclass": rule.subclassKey.map { .string($0) } ?? .null,
                                 "rank": .array(rule.rankKeys.map { .string($0) })])
                    }))
                } ?? .null
                return [
                    "id": .string(plan.pack.id), "sources": .array(plan.pack.sources.map { .string($0) }),
                    "names": .array(plan.pack.names.map { .string($0) }), "layers": layers,
                    "resolved": .array(plan.sources.map { source in
                        ["name": .string(source.name), "template": .string(source.urlTemplate),
                         "pixelRatio": .int(source.pixelRatio), "tms": .bool(source.isTMS),
                         "vectorLayers": source.vectorLayers.map { .array($0.map { .string($0) }) } ?? .null,
                         "attribution": .string(source.attribution)]
                    }),
                    "regions": .array(plan.regions.map { .string($0) }), "settingsDigest": .string(plan.settingsDigest),
                ]
            }),
            "regions": .array(regions.map { region in
                ["id": .string(region.regionID), "area": SavedPlan.areaJSON(region.area),
                 "tileSets": .array(region.tileSets.map(SavedPlan.tileSetJSON))]
            }),
        ]
    }

    /// Reads the lock's `shard.searchPacks`; nil when it is not one.
    public init?(json: JSONValue) {
        var packs: [SearchPackPlan] = []
        for item in json["packs"]?.arrayValue ?? [] {
            guard let pack = Self.pack(item) else { return nil }
            packs.append(pack)
        }
        var regions: [Region] = []
        for (i, item) in (json["regions"]?.arrayValue ?? []).enumerated() {
            guard let id = item["id"]?.stringValue, let area = item["area"].flatMap(SavedPlan.area(from:)) else { return nil }
            var sets: [PlannedTileSet] = []
            for (j, set) in (item["tileSets"]?.arrayValue ?? []).enumerated() {
                // A tile set that cannot be read makes the record unreadable: the merge then refuses the lock.
                guard let read = try? SavedPlan.tileSet(set, at: "/shard/searchPacks/regions/\(i)/tileSets/\(j)") else {
                    return nil
                }
                sets.append(read)
            }
            regions.append(Region(regionID: id, area: area, tileSets: sets))
        }
        self.init(packs: packs, regions: regions)
    }

    /// One pack of `packs`.
    private static func pack(_ item: JSONValue) -> SearchPackPlan? {
        guard let id = item["id"]?.stringValue, let digest = item["settingsDigest"]?.stringValue else { return nil }
        let strings = { (key: String) in (item[key]?.arrayValue ?? []).compactMap(\.stringValue) }
        var layers: [String: SearchLayerMapping]?
        if let object = item["layers"]?.objectValue {
            layers = Dictionary(object.members.compactMap { layer, rule in
                rule["kind"]?.stringValue.map { kind in
                    (layer, SearchLayerMapping(kind: kind, classKey: rule["class"]?.stringValue ?? "class",
                                               subclassKey: rule["subclass"]?.stringValue,
                                               rankKeys: (rule["rank"]?.arrayValue ?? []).compactMap(\.stringValue)))
                }
            }, uniquingKeysWith: { a, _ in a })
        }
        let sources = (item["resolved"]?.arrayValue ?? []).compactMap { s -> SearchPackSource? in
            guard let name = s["name"]?.stringValue, let template = s["template"]?.stringValue else { return nil }
            return SearchPackSource(name: name, urlTemplate: template, pixelRatio: s["pixelRatio"]?.intValue ?? 1,
                                    isTMS: s["tms"] == .bool(true),
                                    vectorLayers: s["vectorLayers"]?.arrayValue.map { $0.compactMap(\.stringValue) },
                                    attribution: s["attribution"]?.stringValue ?? "")
        }
        return SearchPackPlan(pack: SearchPack(id: id, sources: strings("sources"), names: strings("names"), layers: layers),
                              sources: sources, regions: strings("regions"), settingsDigest: digest, action: .build, reason: "")
    }
}
