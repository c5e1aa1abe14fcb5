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

    /// The next rows of one shard for the column being read, and whether the shard has more.
    private struct Cursor {
        var rows: ArraySlice<StoredTileRow> = []
        var exhausted = false
    }

    /// What the cursors hold: the template, ratio and zoom, and the last row returned.
    private var reading: (key: String, last: (x: Int, y: Int)?)?
    private var cursors: [Cursor] = []

    /// Up to `limit` rows of the union, merged from each shard's next rows; each shard is read a
    /// page at a time as the merge uses up its rows, so every row is read once while the calls
    /// page on from the last row returned (as `SearchPackBuild` pages), and afresh otherwise.
    public func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow] {
        let key = "\(pixelRatio) \(zoom) \(urlTemplate)"
        if reading?.key != key || !Self.same(reading?.last, after) {
            cursors = Array(repeating: Cursor(), count: databases.count)
        }
        func position(_ row: StoredTileRow) -> (x: Int, y: Int) { (row.key.tile.x, row.key.tile.y) }
        var out: [StoredTileRow] = []
        while out.count < limit {
            var best: Int?
            for i in cursors.indices {
                if cursors[i].rows.isEmpty && !cursors[i].exhausted {
                    let from = out.last.map(position) ?? after
                    let page = try databases[i].tileRows(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom,
                                                         after: from, limit: limit)
                    cursors[i].rows = page[...]
                    cursors[i].exhausted = page.count < limit
                }
                guard let head = cursors[i].rows.first else { continue }
                if let b = best, let current = cursors[b].rows.first, position(current) < position(head) { continue }
                best = i
            }
            guard let chosen = best, let row = cursors[chosen].rows.popFirst() else { break }
            out.append(row)
        }
        reading = (key, out.last.map(position) ?? after)
        return out
    }

    private static func same(_ a: (x: Int, y: Int)?, _ b: (x: Int, y: Int)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return a == b
        default: return false
        }
    }
}
