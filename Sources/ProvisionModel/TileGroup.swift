import Foundation
import TileMath

/// The tiles of one template, pixel ratio and zoom that one or more region rows want.
///
/// Why groups: two regions may cover the same tiles (at low zooms they always do). Merging
/// their sorted covers lists each tile once while holding one element per region, so the
/// download list is found by streaming, never by building a set of every tile.
public struct TileGroup: Sendable {
    public var tileSet: PlannedTileSet
    public var zoom: Int
    public var areas: [CoverArea]
    /// Indices (into `Plan.regions`) of the rows in the group.
    public var rows: [Int]
    /// The sum of the rows' cover counts (tiles shared by rows count once per row).
    public var desiredCount: Int
    /// For each of `areas`, the bounds of the tile set of that row (nil: unbounded). Rows that
    /// reach one template through different TileJSONs may differ here.
    public var bounds: [TileBounds?]

    /// A group of `areas` (with their tile sets' `bounds`, default: `tileSet.bounds` for each).
    public init(tileSet: PlannedTileSet, zoom: Int, areas: [CoverArea], rows: [Int], desiredCount: Int,
                bounds: [TileBounds?]? = nil) {
        self.tileSet = tileSet
        self.zoom = zoom
        self.areas = areas
        self.rows = rows
        self.desiredCount = desiredCount
        self.bounds = bounds ?? areas.map { _ in tileSet.bounds }
    }

    /// The cover of each member row, in `areas` order: its area clipped to its bounds.
    public var covers: [TileCover] {
        areas.indices.map { cover(at: $0) }
    }

    /// The cover of member `index`.
    public func cover(at index: Int) -> TileCover {
        TileCover(areas[index], zoom: zoom, bounds: index < bounds.count ? bounds[index] : tileSet.bounds)
    }

    /// Every tile of the group, ascending, each once.
    public var tiles: SortedUnion<TileCover> {
        SortedUnion(covers)
    }

    /// Calls `body` with each tile of the group (ascending, each once) and whether the store
    /// already holds it (under any region, or as an unlinked row a killed apply left). The store
    /// is read a column at a time, merged with the column of the covers' union.
    public func forEachTile(store: StoredTiles?, _ body: (TileID, Bool) throws -> Void) throws {
        guard let store else {
            for tile in tiles { try body(tile, false) }
            return
        }
        var column: [TileID] = []
        func flush() throws {
            for (tile, isStored) in zip(column, try tileSet.storedFlags(column, in: store)) { try body(tile, isStored) }
            column.removeAll(keepingCapacity: true)
        }
        for tile in tiles {
            if let first = column.first, first.x != tile.x { try flush() }
            column.append(tile)
        }
        try flush()
    }

    /// Calls `body` with each tile of the group (ascending, each once), the members whose covers
    /// hold it (indices into `areas`, ascending) and its stored length when the store holds it.
    /// The store is read a column at a time, as `forEachTile` reads it.
    public func forEachTileWithMembers(store: StoredTiles?, _ body: (TileID, [Int], Int64?) throws -> Void) throws {
        var column: [(tile: TileID, members: [Int])] = []
        func flush() throws {
            let lengths = try store.map { try tileSet.storedLengths(column.map(\.tile), in: $0) } ?? column.map { _ in nil }
            for (entry, length) in zip(column, lengths) { try body(entry.tile, entry.members, length) }
            column.removeAll(keepingCapacity: true)
        }
        var walk = SortedMembership(covers)
        try walk.forEach { tile, members in
            if let first = column.first, first.tile.x != tile.x { try flush() }
            column.append((tile, members))
        }
        try flush()
    }
}

extension Plan {
    /// Groups region rows' tile sets by template, pixel ratio and zoom, sorted by zoom then template.
    public static func tileGroups(_ regions: [RegionPlan]) -> [TileGroup] {
        var groups: [String: TileGroup] = [:]
        for (index, region) in regions.enumerated() {
            for set in region.tileSets {
                for z in set.zooms {
                    let key = "\(z)\u{0}\(set.urlTemplate)\u{0}\(set.pixelRatio)"
                    var group = groups[key] ?? TileGroup(tileSet: set, zoom: z, areas: [], rows: [], desiredCount: 0)
                    group.areas.append(region.area)
                    group.bounds.append(set.bounds)
                    group.rows.append(index)
                    group.desiredCount += set.cover(of: region.area, zoom: z).count
                    groups[key] = group
                }
            }
        }
        return groups.values.sorted {
            ($0.zoom, $0.tileSet.urlTemplate, $0.tileSet.pixelRatio) < ($1.zoom, $1.tileSet.urlTemplate, $1.tileSet.pixelRatio)
        }
    }

    /// This plan's tile groups.
    public var tileGroups: [TileGroup] { Plan.tileGroups(regions) }
}

extension PlannedTileSet {
    /// The request that downloads geographic (XYZ) tile `tile` of this set.
    public func request(for tile: TileID) -> FetchRequest {
        request(for: tile, template: TileURLTemplate.Compiled(urlTemplate))
    }

    /// `request(for:)` with this set's `urlTemplate` compiled once by the caller (who asks for
    /// many tiles of the set).
    public func request(for tile: TileID, template: TileURLTemplate.Compiled) -> FetchRequest {
        let key = key(for: tile)
        return FetchRequest(url: template.expand(tile: key.tile, pixelRatio: pixelRatio), kind: kind, tileKey: key, tile: tile)
    }
}
