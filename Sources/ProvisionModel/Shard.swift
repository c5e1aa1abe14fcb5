import Foundation
import TileMath

/// One of `count` shares of a job's tiles (`--shard index/count`): the tiles whose ordinal in
/// the store's canonical order (template, pixel ratio, zoom, then the stored walk of each
/// group) falls in `range(total:)`.
///
/// Why contiguous ranges of the canonical order, not a hash of each tile: the shares are equal
/// to one tile whatever the regions' shapes and overlaps (a tile shared by two regions is one
/// ordinal, so it belongs to one shard), and the shards' stores laid end to end in shard order
/// are the single store's tile rows in order, so `merge` streams them into the same bytes.
public struct Shard: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// From 0 to `count` − 1.
    public var index: Int
    /// How many shares the job is split into (at least 1).
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Reads `I/N` (0 ≤ I < N); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, index >= 0, index < count,
              parts[0].allSatisfy(\.isNumber), parts[1].allSatisfy(\.isNumber) else { return nil }
        self.init(index: index, count: count)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// The ordinals of this share of `total` tiles: `total × index / count ..< total × (index + 1) / count`.
    public func range(total: Int) -> Range<Int> {
        let lower = Int((Int64(total) * Int64(index)) / Int64(count))
        let upper = Int((Int64(total) * Int64(index + 1)) / Int64(count))
        return lower..<upper
    }
}

extension TileGroup {
    /// Calls `body` with each column of the group's tiles in the order the store holds them (x
    /// ascending; y ascending, or descending for a TMS set, which stores y from the south), each
    /// tile once. The canonical walk, the shard ordinals and the merge all follow this order.
    public func forEachColumn(_ body: ([TileID]) throws -> Void) rethrows {
        var column: [TileID] = []
        for tile in tiles {
            if let first = column.first, first.x != tile.x {
                if tileSet.isTMS { column.reverse() }
                try body(column)
                column.removeAll(keepingCapacity: true)
            }
            column.append(tile)
        }
        if !column.isEmpty {
            if tileSet.isTMS { column.reverse() }
            try body(column)
        }
    }

    /// How many distinct tiles the group holds: arithmetic for one area, else counted by
    /// streaming the union of the covers.
    public var distinctCount: Int {
        if areas.count == 1 { return cover(at: 0).count }
        var count = 0
        for _ in tiles { count += 1 }
        return count
    }
}

extension Plan {
    /// The distinct tiles the store of this plan holds, in `groups` (canonical order).
    public static func distinctTiles(_ groups: [TileGroup]) -> Int {
        groups.reduce(0) { $0 + $1.distinctCount }
    }
}
