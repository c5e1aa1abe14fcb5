import Foundation
import ProvisionModel

/// The tiles of a sharded apply's stores read as the one store their merge writes: every read
/// asks each shard and merges the answers in the order one store gives them.
///
/// Why: `provision merge` builds the search packs from all the job's tiles before the merged file
/// replaces the output's, so that a pack that cannot be built leaves the output as it was. Each
/// tile lies in exactly one shard (`ShardReplay` refuses shards that overlap) and every shard
/// holds the region rows under the same ids, so the union is what the merged file holds.
public final class ShardTiles: StoredTiles {
    private let databases: [OfflineDatabase]

    /// Opens each shard's database read-only.
    public init(shards: [StorePath], epoch: Int64) throws {
        var opened: [OfflineDatabase] = []
        do {
            for shard in shards { opened.append(try shard.openForReading(epoch: epoch)) }
        } catch {
            // Best effort: closing the read-only connections opened so far; the open's error is what matters.
            for database in opened { try? database.close() }
            throw error
        }
        databases = opened
    }

    /// Closes every shard's database.
    public func close() {
        // Best effort: closing read-only connections.
        for database in databases { try? database.close() }
    }

    public func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?, _ body: (_ y: Int) throws -> Void) throws {
        var rows: [Int] = []
        for database in databases { try database.forEachStoredTile(in: column, linkedTo: region) { rows.append($0) } }
        for y in rows.sorted() { try body(y) }
    }

    public func forEachStoredTileLength(in column: StoredTileColumn, _ body: (_ y: Int, _ bytes: Int64) throws -> Void) throws {
        var rows: [(y: Int, bytes: Int64)] = []
        for database in databases { try database.forEachStoredTileLength(in: column) { rows.append(($0, $1)) } }
        for row in rows.sorted(by: { $0.y < $1.y }) { try body(row.y, row.bytes) }
    }

    /// The first `limit` of the shards' first `limit` rows each: the first `limit` of their union.
    public func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow] {
        var rows: [StoredTileRow] = []
        for database in databases {
            rows += try database.tileRows(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom, after: after, limit: limit)
        }
        rows.sort { ($0.key.tile.x, $0.key.tile.y) < ($1.key.tile.x, $1.key.tile.y) }
        return Array(rows.prefix(limit))
    }
}
