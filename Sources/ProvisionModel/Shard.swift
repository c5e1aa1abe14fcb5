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

extension TileGroup {
    /// Calls `body` with each tile of the group whose canonical ordinal falls in `range` (the
    /// group's first tile having ordinal `base`), ascending, with its position in the group's
    /// ascending order and whether the store already holds it. Returns the group's distinct tile
    /// count, for the next group's base.
    @discardableResult
    public func forEachTile(inOrdinals range: Range<Int>, base: Int, store: StoredTiles?,
                            _ body: (Int, TileID, Bool) throws -> Void) throws -> Int {
        let count = distinctCount
        let group = base..<(base + count)
        guard group.overlaps(range) else { return count }
        if range.contains(group.lowerBound) && range.contains(group.upperBound - 1) {
            var position = 0
            try forEachTile(store: store) { tile, isStored in
                try body(position, tile, isStored)
                position += 1
            }
            return count
        }
        // The ordinals follow the stored walk (a TMS column from the south); positions follow
        // the ascending order. A column's tiles inside the range are contiguous in both.
        var ordinal = base, columnStart = 0
        try forEachColumn { column in
            defer {
                ordinal += column.count
                columnStart += column.count
            }
            let lower = max(range.lowerBound - ordinal, 0), upper = min(range.upperBound - ordinal, column.count)
            guard lower < upper else { return }
            let walked = lower..<upper
            let ascending = tileSet.isTMS ? (column.count - walked.upperBound)..<(column.count - walked.lowerBound) : walked
            let tiles = tileSet.isTMS ? Array(column[walked].reversed()) : Array(column[walked])
            let stored = try store.map { try tileSet.storedFlags(tiles, in: $0) } ?? tiles.map { _ in false }
            for (offset, tile) in tiles.enumerated() {
                try body(columnStart + ascending.lowerBound + offset, tile, stored[offset])
            }
        }
        return count
    }
}

extension Plan {
    /// Tile groups in the store's canonical key order: template (bytes), pixel ratio, zoom.
    public static func canonicalOrder(_ groups: [TileGroup]) -> [TileGroup] {
        groups.sorted { a, b in
            if a.tileSet.urlTemplate != b.tileSet.urlTemplate {
                return a.tileSet.urlTemplate.utf8.lexicographicallyPrecedes(b.tileSet.urlTemplate.utf8)
            }
            return (a.tileSet.pixelRatio, a.zoom) < (b.tileSet.pixelRatio, b.zoom)
        }
    }

    /// A shard's share of this plan against `store`: the ordinals of its tiles, of how many in
    /// all, and how many of its tiles the store lacks.
    public func shardShare(_ shard: Shard, store: StoredTiles?) throws -> ShardShare {
        let groups = Plan.canonicalOrder(tileGroups)
        let total = Plan.distinctTiles(groups)
        let range = shard.range(total: total)
        var missing = 0
        var base = 0
        for group in groups {
            base += try group.forEachTile(inOrdinals: range, base: base, store: store) { _, _, isStored in
                if !isStored { missing += 1 }
            }
        }
        return ShardShare(shard: shard, tiles: range, totalTiles: total, missingTiles: missing)
    }
}

/// What one shard of a plan holds.
public struct ShardShare: Equatable, Sendable {
    public var shard: Shard
    /// The canonical ordinals of its tiles.
    public var tiles: Range<Int>
    /// The job's distinct tiles over all shards.
    public var totalTiles: Int
    /// Its tiles the store does not hold yet.
    public var missingTiles: Int

    public init(shard: Shard, tiles: Range<Int>, totalTiles: Int, missingTiles: Int) {
        self.shard = shard
        self.tiles = tiles
        self.totalTiles = totalTiles
        self.missingTiles = missingTiles
    }
}

/// What the apply of one shard of a plan carries out: the share it holds, the tile changes of
/// each region row in the shard's store, and what it downloads. The plan's own counts are the
/// whole job's (every shard's lock records them, so merge can check the shards agree); the
/// plan's summary, JSON and exit code show these.
public struct ShardPlan: Equatable, Sendable {
    public var share: ShardShare
    /// Per region (plan order), per tile set and zoom: the shard's tiles the row wants, as
    /// links added (tiles of the share the store does not hold yet, or a new row), kept and
    /// removed (links the row has beyond the share's tiles it keeps).
    public var zoomChanges: [[ZoomChange]]
    /// Per region (plan order): estimated bytes of the tiles it adds that are downloaded.
    public var estimatedBytes: [Int64]
    /// Per region (plan order): what happens to the row in the shard's store (a row the whole
    /// job would update only for tiles other shards hold is kept).
    public var actions: [PlanAction] = []
    /// Tiles of the share the apply downloads (each once).
    public var tilesToDownload: Int
    /// Their estimated bytes.
    public var bytesToDownload: Int64

    public init(share: ShardShare, zoomChanges: [[ZoomChange]], estimatedBytes: [Int64], tilesToDownload: Int,
                bytesToDownload: Int64) {
        self.share = share
        self.zoomChanges = zoomChanges
        self.estimatedBytes = estimatedBytes
        self.tilesToDownload = tilesToDownload
        self.bytesToDownload = bytesToDownload
    }

    public var shard: Shard { share.shard }
}

extension Plan {
    /// Tile link counts of region `index` as the apply carries them out: the shard's when the
    /// plan is one shard's, else the row's own.
    public func tileTotals(of index: Int) -> ChangeCounts {
        guard let shard, index < shard.zoomChanges.count else { return regions[index].totals }
        return shard.zoomChanges[index].reduce(ChangeCounts()) { $0 + $1.counts }
            + ChangeCounts(remove: regions[index].staleTileCounts.reduce(0) { $0 + $1.count })
    }

    /// What happens to region row `index`: in the shard's store when the plan is one shard's.
    public func action(of index: Int) -> PlanAction {
        guard let shard, index < shard.actions.count else { return regions[index].action }
        return shard.actions[index]
    }

    /// The tiles the apply downloads: the shard's when the plan is one shard's.
    public var appliedTilesToDownload: Int { shard?.tilesToDownload ?? tilesToDownload }
    /// Their estimated bytes.
    public var appliedBytesToDownload: Int64 { shard?.bytesToDownload ?? bytesToDownload }

    /// What the apply of `shard` carries out against `store` (read only): per region row the
    /// shard's tiles it wants, how many the store holds, and the downloads. A tile of a template
    /// whose TileJSON drifted is downloaded again, as the whole apply would.
    public func shardPlan(_ shard: Shard, store: (StoredTiles & StoredRegions)?) throws -> ShardPlan {
        let groups = Plan.canonicalOrder(tileGroups)
        let total = Plan.distinctTiles(groups)
        let range = shard.range(total: total)
        let refetch = Set(refetchTemplates)
        struct Count { var wanted = 0, stored = 0 }
        // Per region: (template, zoom) → counts.
        var counts = [[String: Count]](repeating: [:], count: regions.count)
        var missing = 0
        var base = 0
        for group in groups {
            let covers = group.covers
            let key = "\(group.zoom)\u{0}\(group.tileSet.urlTemplate)"
            let all = refetch.contains(group.tileSet.urlTemplate)
            base += try group.forEachTile(inOrdinals: range, base: base, store: store) { _, tile, isStored in
                if !isStored || all { missing += 1 }
                var counted: [Int] = []
                for (member, row) in group.rows.enumerated() where !counted.contains(row) {
                    guard covers.count == 1 || covers[member].contains(tile) else { continue }
                    counted.append(row)
                    counts[row][key, default: Count()].wanted += 1
                    if isStored && !all { counts[row][key, default: Count()].stored += 1 }
                }
            }
        }
        var zoomChanges: [[ZoomChange]] = []
        var estimated: [Int64] = []
        for (index, region) in regions.enumerated() {
            var changes: [ZoomChange] = []
            var added = 0
            for change in region.zoomChanges {
                let count = counts[index]["\(change.zoom)\u{0}\(change.urlTemplate)"] ?? Count()
                // A new row links every tile it holds; a kept row keeps the stored ones.
                let keep = region.rowID == nil ? 0 : count.stored
                let linked = change.counts.keep + change.counts.remove
                changes.append(ZoomChange(urlTemplate: change.urlTemplate, zoom: change.zoom,
                                          counts: ChangeCounts(add: count.wanted - keep, remove: max(0, linked - keep), keep: keep)))
                added += count.wanted - keep
            }
            zoomChanges.append(changes)
            let wholeAdded = region.totals.add
            estimated.append(wholeAdded > 0 ? Int64((Double(region.estimatedBytes) * Double(added) / Double(wholeAdded)).rounded()) : 0)
        }
        // A row updated only because it lacks other shards' tiles is kept in this shard's store.
        let stored = Dictionary(try store?.regions().map { ($0.rowID, $0) } ?? [], uniquingKeysWith: { a, _ in a })
        var actions: [PlanAction] = []
        for (index, region) in regions.enumerated() {
            var action = region.action
            if action == .update, let row = region.rowID.flatMap({ stored[$0] }), row.definition == region.definition,
               (row.description ?? Data()) == region.description, !region.resources.hasChanges {
                let tiles = zoomChanges[index].reduce(ChangeCounts()) { $0 + $1.counts }
                    + ChangeCounts(remove: region.staleTileCounts.reduce(0) { $0 + $1.count })
                if !tiles.hasChanges { action = .keep }
            }
            actions.append(action)
        }
        let bytes = tilesToDownload > 0
            ? Int64((Double(bytesToDownload) * Double(missing) / Double(tilesToDownload)).rounded()) : 0
        var plan = ShardPlan(share: ShardShare(shard: shard, tiles: range, totalTiles: total, missingTiles: missing),
                             zoomChanges: zoomChanges, estimatedBytes: estimated, tilesToDownload: missing, bytesToDownload: bytes)
        plan.actions = actions
        return plan
    }
}
