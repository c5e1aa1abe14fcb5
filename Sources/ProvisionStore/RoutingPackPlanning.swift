import Foundation
import ProvisionModel
import RoutingGraph

/// Plans the job's routing packs against the store: per pack, the graph tiles of every requested
/// level that the regions naming it meet, and which of them the current extract keeps, which are
/// added and which go.
///
/// Why the lock and the file both decide: the lock records what the extract holds (each tile with
/// its digest) and which tiles the source had none of; the extract must still be there, the size
/// the lock recorded, with exactly those tiles in its index. A pack whose `tiles` template or
/// `gzip` changed keeps nothing: its tiles may be of another build.
public enum RoutingPackPlanning {
    /// The plan of every routing pack of `job`, in job order, judged by the lock's `records`
    /// and the extracts in the store at `directory`; `sourceTiles` gives the tiles a pack's source
    /// extract holds with their sizes (nil for a URL template), by default read from a local extract.
    ///
    /// - Throws: `RoutingPackError` when a pack's source extract cannot be read or its index is
    ///   damaged (its reader's error, naming the file and the entry), or what `sourceTiles` throws.
    public static func plan(_ job: Job, records: [RoutingPackRecord], directory: URL,
                            sourceTiles: (RoutingPack) throws -> [RoutingTile: Int]? = sourceTiles) throws -> [RoutingPackPlan] {
        try job.routingPacks.map { pack in
            let regions = job.regions.filter { $0.routingPacks.contains(pack.id) }
            let record = records.first { $0.id == pack.id }
            return plan(pack, regions: regions, record: record, directory: directory, available: try sourceTiles(pack))
        }
    }

    /// The tiles a pack's local source extract holds (every other cell has no roads) with their
    /// sizes; nil for a URL template.
    public static func sourceTiles(_ pack: RoutingPack) throws -> [RoutingTile: Int]? {
        guard let extract = pack.extract else { return nil }
        return try tiles(ofExtract: extract, pack: pack.id)
    }

    /// The tiles the local tile extract at `url`, the source of pack `id`, holds, with their sizes.
    public static func tiles(ofExtract url: URL, pack id: String) throws -> [RoutingTile: Int] {
        do {
            return sizes(try TileExtractReader(url: url).entries)
        } catch {
            throw RoutingPackError("routing pack '\(id)': \(error)")
        }
    }

    /// The size of each tile of an extract's index.
    public static func sizes(_ entries: [GraphTileID: TileExtractEntry]) -> [RoutingTile: Int] {
        Dictionary(uniqueKeysWithValues: entries.map { ($0.key.routingTile, Int($0.value.size)) })
    }

    static func plan(_ pack: RoutingPack, regions: [Region], record: RoutingPackRecord?, directory: URL,
                     available: [RoutingTile: Int]? = nil) -> RoutingPackPlan {
        let sameSource = record.map { $0.source == pack.source && $0.gzip == pack.gzip } ?? false
        var knownAbsent = Set(sameSource ? record?.absent ?? [] : [])
        let fileProblem = record.flatMap { extractProblem($0, directory: directory) }
        let stored = Set(sameSource && fileProblem == nil ? record?.tiles.map(\.tile) ?? [] : [])
        var wanted = Set<RoutingTile>()
        var covers: [(region: String, level: Int, tiles: [RoutingTile])] = []
        for region in regions {
            for level in pack.levels {
                let tiles = cover(region.area, level: level)
                covers.append((region.id, level, tiles))
                wanted.formUnion(tiles)
            }
        }
        // An extract's index says which cells have no tile: nothing to ask for there.
        if let available { knownAbsent.formUnion(wanted.subtracting(available.keys)) }
        let regionTiles = covers.map { cover in
            RoutingPackPlan.RegionLevelTiles(region: cover.region, level: cover.level, tiles: cover.tiles.count,
                                             absent: cover.tiles.filter { knownAbsent.contains($0) }.count, cover: cover.tiles)
        }
        let keep = wanted.intersection(stored).sorted()
        let absent = wanted.subtracting(stored).intersection(knownAbsent).sorted()
        let add = wanted.subtracting(stored).subtracting(knownAbsent).sorted()
        // A missing or changed file has no tiles to remove; another source's are all replaced.
        let remove = (fileProblem == nil ? Set(record?.tiles.map(\.tile) ?? []) : []).subtracting(keep).sorted()
        let reason: String
        if record == nil {
            reason = "new"
        } else if !sameSource {
            reason = "source changed"
        } else if let fileProblem {
            reason = fileProblem
        } else if !add.isEmpty || !remove.isEmpty {
            reason = "tiles change"
        } else {
            reason = ""
        }
        return RoutingPackPlan(pack: pack, regions: regions.map(\.id), regionTiles: regionTiles, add: add, keep: keep,
                               absent: absent, remove: remove, action: reason.isEmpty ? .keep : .build, reason: reason,
                               sourceBytes: available,
                               storedBytes: Dictionary(record?.tiles.map { ($0.tile, $0.bytes) } ?? [], uniquingKeysWith: { a, _ in a }))
    }

    /// The graph tiles of `level` that `area` (already grown by the region's buffer) meets.
    static func cover(_ area: RegionArea, level: Int) -> [RoutingTile] {
        guard let graphLevel = GraphLevel(level) else { return [] }
        return GraphTileCover(area.coverArea, level: graphLevel).map(\.routingTile)
    }

    /// Why the extract `record` describes cannot be kept (`file missing`, `file changed`), or nil.
    static func extractProblem(_ record: RoutingPackRecord, directory: URL) -> String? {
        let url = directory.appendingPathComponent(record.file)
        guard FileManager.default.fileExists(atPath: url.path) else { return record.tiles.isEmpty ? nil : "file missing" }
        do {
            let reader = try TileExtractReader(url: url)
            guard reader.fileSize == UInt64(record.bytes), reader.tiles.map(\.routingTile) == record.tiles.map(\.tile) else {
                return "file changed"
            }
            return nil
        } catch {
            return "file changed"
        }
    }

    /// A note per region whose cover holds no graph tile the source has (every one answered 404,
    /// or a cover of none): its part of the pack routes nowhere, which the plan says rather than
    /// write a silently empty pack.
    public static func notes(_ plans: [RoutingPackPlan]) -> [PlanNote] {
        plans.flatMap { plan in
            plan.regions.compactMap { region -> PlanNote? in
                let levels = plan.regionTiles.filter { $0.region == region }
                let tiles = levels.reduce(0) { $0 + $1.tiles }, absent = levels.reduce(0) { $0 + $1.absent }
                guard tiles == absent else { return nil }
                let why = tiles == 0 ? "its geometry meets no graph tile of levels \(plan.pack.levels.map(String.init).joined(separator: ", "))"
                    : "the source has none of the \(tiles) graph tiles its geometry meets (each answered 404: no roads there)"
                return PlanNote(subject: "region '\(region)'",
                                message: "routing pack '\(plan.pack.id)' holds nothing for it: \(why), so Valhalla cannot route there")
            }
        }
    }
}

extension GraphTileID {
    /// The model's plain level and index of this tile.
    public var routingTile: RoutingTile { RoutingTile(level: level.level, index: index) }

    /// The tile a model tile names, or nil when it is off the hierarchy.
    public init?(_ tile: RoutingTile) {
        guard let level = GraphLevel(tile.level) else { return nil }
        self.init(level: level, index: tile.index)
    }
}
