import Foundation
import ProvisionModel

/// Writes the stores of a sharded apply into one canonical file through the same
/// `CanonicalStoreBuilder` calls, in the same order, as the apply of the whole job makes, so the
/// file is byte for byte the one that apply writes (`provision merge`).
///
/// The order (`CanonicalAssembler`): the region rows (from the first shard: every shard holds
/// all of them, ids 1…R in plan order), the resource rows (from the first shard: every shard
/// fetches all of them, ids 1…M by URL), a commit, every tile row of shard 0, then of shard 1, …
/// each by id (a shard's tiles are a contiguous run of the job's canonical order, ids 1…k), then
/// per region its resource links, then per region its tile links: each shard's, in shard order,
/// tile id ascending, renumbered by the tiles of the shards before it.
///
/// Why the rows need no change: `CanonicalStoreWriter` stamps each row it is given with the
/// build time (`StoredContent.stamped(at:)`), which leaves a row stamped at that time as it is,
/// and copies the `compressed` flag and bytes as given; the shards were built at the merge's
/// time (their locks' epoch).
///
/// Memory stays flat: rows are stepped one at a time, commits come every `commitEvery` tiles,
/// and tile links go to the builder in batches of `linkBatch` (the builder inserts one row per
/// id, so batching changes nothing in the file).
public struct ShardReplay {
    /// The shard stores, in shard order.
    public let shards: [StorePath]
    /// The tile rows each shard holds, as its lock records them.
    public let tileCounts: [Int]
    var commitEvery = 4_096
    var linkBatch = 4_096

    /// A replay of `shards` (in shard order), each holding `tileCounts[i]` tile rows.
    public init(shards: [StorePath], tileCounts: [Int]) {
        precondition(shards.count == tileCounts.count && !shards.isEmpty, "one tile count per shard")
        self.shards = shards
        self.tileCounts = tileCounts
    }

    /// Makes every `builder` call, in order; the caller finishes the builder. `onShard` is told
    /// when each shard's tiles have been written (its index). Throws `StoreError(.invalidInput)`
    /// naming the shard when one does not hold what its lock says (ids not 1…n, another tile
    /// count, a link to a row it lacks).
    public func run(into builder: CanonicalStoreBuilder, onShard: (Int) -> Void = { _ in }) throws {
        var regions: [Int64] = []
        var resources = 0
        try read(0) { first in
            try first.forEachRegion { region in
                try expect(region.rowID, Int64(regions.count + 1), "region", shard: 0)
                regions.append(try builder.addRegion(definition: region.definition, description: region.description))
            }
            try first.forEachResource { id, row in
                try expect(id, Int64(resources + 1), "resource", shard: 0)
                _ = try builder.addResource(row)
                resources += 1
            }
        }
        try builder.commit()
        for index in shards.indices {
            var count = 0
            try read(index) { shard in
                try shard.forEachTile { id, row in
                    try expect(id, Int64(count + 1), "tile", shard: index)
                    _ = try builder.addTile(row)
                    count += 1
                    if count % commitEvery == 0 { try builder.commit() }
                }
            }
            guard count == tileCounts[index] else {
                throw mismatch(index, "it holds \(count) tile rows and its lock records \(tileCounts[index])")
            }
            try builder.commit()
            onShard(index)
        }
        try read(0) { first in
            for (index, region) in regions.enumerated() {
                var ids: [Int64] = []
                try first.forEachLinkedResourceID(region: Int64(index + 1)) { id in
                    guard id >= 1 && id <= Int64(resources) else { throw mismatch(0, "a region links resource \(id), which it lacks") }
                    ids.append(id)
                }
                try builder.linkResources(ids, toRegion: region)
            }
        }
        for (regionIndex, region) in regions.enumerated() {
            var batch: [Int64] = []
            batch.reserveCapacity(linkBatch)
            var offset: Int64 = 0
            for index in shards.indices {
                let count = Int64(tileCounts[index])
                try read(index) { shard in
                    try shard.forEachLinkedTileID(region: Int64(regionIndex + 1)) { id in
                        guard id >= 1 && id <= count else { throw mismatch(index, "a region links tile \(id), which it lacks") }
                        batch.append(offset + id)
                        if batch.count == linkBatch {
                            try builder.linkTiles(batch, toRegion: region)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                }
                offset += count
            }
            if !batch.isEmpty { try builder.linkTiles(batch, toRegion: region) }
        }
        try builder.commit()
    }

    /// Opens shard `index` read-only for `body`.
    private func read(_ index: Int, _ body: (OfflineDatabase) throws -> Void) throws {
        let database = try shards[index].openForReading(epoch: 0)
        defer { try? database.close() }
        try body(database)
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
