import Foundation
import ProvisionModel
import RoutingGraph

/// Routing packs of a sharded apply (`apply --shard I/N`): each shard fetches an equal,
/// contiguous share of every pack's graph-tile cells (in the extract's order, level then index)
/// and writes them as its own extract; `merge` writes the whole extract from the shards' tiles,
/// the bytes one apply of the whole job writes.
///
/// Why cells, not tiles: which cells have no tile (404, sea) is known only once fetched, but the
/// cells the regions meet are a function of the job alone, so every shard cuts the same list.
public enum RoutingPackShards {
    /// `plan` cut down to `shard`'s share of its cells: tiles of the other shares are neither
    /// fetched nor kept (a shard's store holds its share only).
    public static func share(_ plan: RoutingPackPlan, shard: Shard) -> RoutingPackPlan {
        let cells = plan.wanted
        let mine = Set(cells[shard.range(total: cells.count)])
        var share = plan
        share.add = plan.add.filter(mine.contains)
        share.keep = plan.keep.filter(mine.contains)
        share.absent = plan.absent.filter(mine.contains)
        share.remove = (plan.remove + plan.keep.filter { !mine.contains($0) }).sorted()
        let changes = !share.add.isEmpty || !share.remove.isEmpty
        if plan.reason == "tiles change" || plan.reason.isEmpty {
            (share.action, share.reason) = changes ? (.build, "tiles change") : (.keep, "")
        }
        return share
    }

    /// Writes the whole extract of a pack at `target` from the shards' extracts (`shards`: each
    /// shard's record and its store directory, in shard order), each tile read back and checked
    /// against its shard's record; returns the whole pack's record.
    ///
    /// - Throws: `RoutingPackError` when the shards' records disagree (source, builds) or a shard's
    ///   tile is not the one its lock records; an I/O or extract error.
    public static func merge(_ shards: [(record: RoutingPackRecord, store: URL)], target: URL) throws -> RoutingPackRecord {
        guard let first = shards.first?.record else { throw RoutingPackError("no shard records the routing pack") }
        var readers: [GraphTileID: (TileExtractReader, RoutingPackRecord.Tile)] = [:]
        var absent: [RoutingTile] = []
        var identities: [(GraphTileID, GraphBuildIdentity)] = []
        for (record, store) in shards {
            guard record.source == first.source, record.gzip == first.gzip else {
                throw RoutingPackError("routing pack '\(first.id)': the shards' tiles come from different sources "
                                       + "(\(first.source) and \(record.source))")
            }
            absent += record.absent
            guard !record.tiles.isEmpty else { continue }
            let reader = try TileExtractReader(url: store.appendingPathComponent(record.file))
            if let datasetID = record.datasetID, let version = record.version, let tile = record.tiles.first,
               let id = GraphTileID(tile.tile) {
                identities.append((id, GraphBuildIdentity(datasetID: datasetID, version: version)))
            }
            for tile in record.tiles {
                guard let id = GraphTileID(tile.tile) else { continue }
                readers[id] = (reader, tile)
            }
        }
        let build: GraphBuildIdentity?
        do {
            build = try GraphBuildIdentity.single(identities)
        } catch {
            throw RoutingPackError("routing pack '\(first.id)' (\(first.source)): \(error)")
        }
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        var tiles: [RoutingPackRecord.Tile] = []
        try TileExtractWriter.write(to: target, sizes: readers.mapValues { $0.1.bytes }) { id in
            guard let (reader, tile) = readers[id] else { return [] }
            let bytes = try reader.read(id)
            guard RoutingPackCheck.problem(bytes, tile: tile, id: id, record: first) == nil else {
                throw RoutingPackError("routing pack '\(first.id)': graph tile \(tile.path) in \(reader.path) is not the one "
                                       + "its shard's lock records; run 'provision apply --repair' on that shard")
            }
            tiles.append(tile)
            return bytes
        }
        let (digest, byteCount) = try RoutingPackBuild.fileDigest(target)
        return RoutingPackRecord(id: first.id, file: first.file, source: first.source, gzip: first.gzip, digest: digest,
                                 bytes: byteCount, datasetID: build?.datasetID, version: build?.version, tiles: tiles,
                                 absent: Set(absent).sorted())
    }
}
