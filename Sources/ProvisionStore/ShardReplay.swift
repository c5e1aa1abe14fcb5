import Foundation
import ProvisionFoundation
import ProvisionModel

/// Writes the stores of a sharded apply into one canonical file, in the order and with the rows
/// the apply of the whole job writes, so the file is byte for byte the one that apply writes
/// (`provision merge`).
///
/// The order (`CanonicalAssembler`): the region rows (from the first shard: every shard holds
/// all of them, ids 1…R in plan order), the resource rows (from the first shard: every shard
/// fetches all of them, ids 1…M by URL), a commit, every tile row of shard 0, then of shard 1, …
/// each by id (a shard's tiles are a contiguous run of the job's canonical order, ids 1…k), then
/// per region its resource links, then per region its tile links: each shard's, in shard order,
/// tile id ascending, renumbered by the tiles of the shards before it.
///
/// Why the rows need no change: `CanonicalStoreWriter` stamps each row with the build time
/// (`StoredContent.stamped(at:)`), which leaves a row stamped at that time as it is, and copies
/// the `compressed` flag and bytes as given; the shards were built at the merge's time (their
/// locks' epoch).
///
/// The regions, resources and resource links (a few rows) go through the writer's calls one
/// row at a time; the tiles and tile links, almost all of the file, are copied inside SQLite
/// from each shard in turn (`CanonicalStoreWriter.appendTiles(of:count:)`), which writes the same
/// bytes. Memory stays flat: nothing is held per tile.
public struct ShardReplay {
    /// The shard stores, in shard order.
    public let shards: [StorePath]
    /// The tile rows each shard holds, as its lock records them.
    public let tileCounts: [Int]

    /// A replay of `shards` (in shard order), each holding `tileCounts[i]` tile rows.
    public init(shards: [StorePath], tileCounts: [Int]) {
        precondition(shards.count == tileCounts.count && !shards.isEmpty, "one tile count per shard")
        self.shards = shards
        self.tileCounts = tileCounts
    }

    /// Writes everything into `writer`, in order; the caller finishes it. `onShard` is told
    /// when each shard's tiles have been written (its index). Throws `StoreError(.invalidInput)`
    /// naming the shard when one does not hold what its lock says (ids not 1…n, another tile
    /// count, a link to a row it lacks).
    public func run(into writer: CanonicalStoreWriter, onShard: (Int) -> Void = { _ in }) throws {
        var regions: [Int64] = []
        var resources = 0
        try read(0) { first in
            try first.forEachRegion { region in
                try expect(region.rowID, Int64(regions.count + 1), "region", shard: 0)
                regions.append(try writer.addRegion(definition: region.definition, description: region.description))
            }
            try first.forEachResource { id, row in
                try expect(id, Int64(resources + 1), "resource", shard: 0)
                _ = try writer.addResource(row)
                resources += 1
            }
        }
        try writer.commit()
        for index in shards.indices {
            let ids = try read(index) { try $0.tileIDSpan() }
            guard ids.count == tileCounts[index] else {
                throw mismatch(index, "it holds \(plural(ids.count, "tile row")) and its lock records \(grouped(tileCounts[index]))")
            }
            if ids.count > 0, ids.first != 1 || ids.last != Int64(ids.count) {
                throw mismatch(index, "its tile ids are not 1, 2, … (\(plural(ids.count, "row")) with ids \(ids.first) to \(ids.last))")
            }
            try writer.appendTiles(of: shards[index].databaseURL, count: ids.count)
            onShard(index)
        }
        try read(0) { first in
            for (index, region) in regions.enumerated() {
                var ids: [Int64] = []
                try first.forEachLinkedResourceID(region: Int64(index + 1)) { id in
                    guard id >= 1 && id <= Int64(resources) else { throw mismatch(0, "a region links resource \(id), which it lacks") }
                    ids.append(id)
                }
                try writer.linkResources(ids, toRegion: region)
            }
        }
        for (regionIndex, region) in regions.enumerated() {
            var offset: Int64 = 0
            for index in shards.indices {
                if let id = try writer.appendTileLinks(of: shards[index].databaseURL, region: Int64(regionIndex + 1),
                                                       toRegion: region, offset: offset, tileCount: tileCounts[index]) {
                    throw mismatch(index, "a region links tile \(id), which it lacks")
                }
                offset += Int64(tileCounts[index])
            }
        }
        try writer.commit()
    }

    /// Opens shard `index` read-only for `body`.
    private func read<T>(_ index: Int, _ body: (OfflineDatabase) throws -> T) throws -> T {
        let database = try shards[index].openForReading(epoch: 0)
        // Best effort: closing a shard opened read-only.
        defer { try? database.close() }
        return try body(database)
    }

    private func expect(_ id: Int64, _ wanted: Int64, _ table: String, shard index: Int) throws {
        guard id == wanted else {
            throw mismatch(index, "its \(table) ids are not 1, 2, … (found \(id) where \(wanted) was due)")
        }
    }

    private func mismatch(_ index: Int, _ message: String) -> StoreError {
        StoreError(.invalidInput, "not a store a sharded apply wrote: \(message)", path: shards[index].display)
    }
}
