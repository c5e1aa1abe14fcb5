import Foundation
import TileMath

/// The graph tiles of one level that an area meets, streamed in index order (row by row, south to
/// north, west to east within a row).
///
/// The rule is exact: a cell is in the cover if and only if the area, taken as a closed set
/// (boundary included, straight edges in lon/lat, as Valhalla's grid is), has a point in the cell,
/// with cells half-open as ``GraphLevel`` describes. Equivalently, the cover is the set of
/// ``GraphLevel/tileIndex(lng:lat:)`` of the area's points, so a location inside a region always
/// finds its tile in the region's pack.
/// - A bbox covers columns `column(west)…column(east)` and rows `row(south)…row(north)`: an east or
///   north edge exactly on a cell boundary pulls in the cell beyond it (the edge's points are in
///   that cell); `valhalla_build_extract --bbox` also takes the cells a west or south edge only
///   touches, which this rule leaves out. A box whose `west` is greater than its `east` crosses the
///   antimeridian, as the job file's bbox does: from `west` to 180° and on from −180° to `east`.
///   South and north are taken in either order; longitudes and latitudes are clamped to the world.
/// - Polygons (a MultiPolygon, holes excluded, rings closed implicitly) cover the cells their
///   boundary passes through and the cells whose south-west corner lies inside them. Edges run
///   straight in lon/lat and never across the antimeridian (split such polygons at ±180°, as the
///   job file asks).
/// - Lines and points (``CoverArea/paths(lines:points:)``) cover the cells they pass through.
///
/// Memory is one row's column spans; ``count`` sums spans row by row (arithmetic for a bbox), so
/// counting a continent at level 2 never enumerates its tiles.
public struct GraphTileCover: Sequence, Sendable {
    /// The area the cover was computed for.
    public let area: CoverArea
    /// The level of every tile in the cover.
    public let level: GraphLevel

    let plan: Plan

    enum Plan: Sendable {
        /// Column ranges (sorted, disjoint, at most two) on every row of a row range.
        case rectangle(columns: [ClosedRange<Int>], rows: ClosedRange<Int>)
        /// Segments (polygon edges, lines, points as zero-length segments) and the polygons whose
        /// interiors count, on the rows of a row range.
        case shapes(GraphShapes, rows: ClosedRange<Int>)
        case empty
    }

    /// Prepares the cover of `area` on `level`; rows are computed while iterating.
    public init(_ area: CoverArea, level: GraphLevel) {
        self.area = area
        self.level = level
        switch area {
        case .bbox(let box):
            let rows = level.row(lat: Swift.min(box.south, box.north))...level.row(lat: Swift.max(box.south, box.north))
            let west = level.column(lng: box.west), east = level.column(lng: box.east)
            let columns: [ClosedRange<Int>]
            if box.west <= box.east {
                columns = [west...east]
            } else if west > east {
                columns = [0...east, west...(level.columns - 1)]
            } else {
                columns = [0...(level.columns - 1)]  // across the antimeridian and back into its own column
            }
            plan = .rectangle(columns: columns, rows: rows)
        case .polygons(let polygons):
            let rings = polygons.map { $0.rings.filter { !$0.isEmpty } }.filter { !$0.isEmpty }
            plan = GraphTileCover.shapesPlan(GraphShapes(polygons: rings, lines: [], points: []), level: level)
        case .paths(let lines, let points):
            plan = GraphTileCover.shapesPlan(GraphShapes(polygons: [], lines: lines.filter { !$0.isEmpty }, points: points),
                                             level: level)
        }
    }

    static func shapesPlan(_ shapes: GraphShapes, level: GraphLevel) -> Plan {
        guard let (south, north) = shapes.latitudeRange else { return .empty }
        return .shapes(shapes, rows: level.row(lat: south)...level.row(lat: north))
    }

    /// The column spans of `row` (sorted, disjoint, not adjacent), empty for a row off the cover.
    public func columns(inRow row: Int) -> [ClosedRange<Int>] {
        switch plan {
        case .empty:
            return []
        case .rectangle(let columns, let rows):
            return rows.contains(row) ? columns : []
        case .shapes(let shapes, let rows):
            return rows.contains(row) ? shapes.columns(inRow: row, level: level) : []
        }
    }

    /// The rows the cover may reach, south to north (nil when empty).
    public var rowRange: ClosedRange<Int>? {
        switch plan {
        case .empty: return nil
        case .rectangle(_, let rows), .shapes(_, let rows): return rows
        }
    }

    /// The number of tiles: arithmetic for a bbox, a sum of column spans row by row otherwise.
    public var count: Int {
        switch plan {
        case .empty:
            return 0
        case .rectangle(let columns, let rows):
            return columns.reduce(0) { $0 + $1.count } * rows.count
        case .shapes(let shapes, let rows):
            return rows.reduce(0) { total, row in
                total + shapes.columns(inRow: row, level: level).reduce(0) { $0 + $1.count }
            }
        }
    }

    /// Whether `tile` is in the cover: O(1) for a bbox, one row's spans for other areas.
    public func contains(_ tile: GraphTileID) -> Bool {
        tile.level == level && columns(inRow: tile.row).contains { $0.contains(tile.column) }
    }

    /// The tiles in index order.
    public func makeIterator() -> Iterator {
        Iterator(cover: self)
    }

    /// Walks the cover row by row, holding one row's spans.
    public struct Iterator: IteratorProtocol {
        let cover: GraphTileCover
        var row: Int
        let lastRow: Int
        var spans: [ClosedRange<Int>] = []
        var spanIndex = 0
        var column = 0

        init(cover: GraphTileCover) {
            self.cover = cover
            let rows = cover.rowRange
            row = (rows?.lowerBound ?? 0) - 1
            lastRow = rows?.upperBound ?? -1
        }

        /// The next tile in index order, or nil after the last.
        public mutating func next() -> GraphTileID? {
            while true {
                if spanIndex < spans.count {
                    let tile = GraphTileID(uncheckedLevel: cover.level, index: row * cover.level.columns + column)
                    if column < spans[spanIndex].upperBound {
                        column += 1
                    } else {
                        spanIndex += 1
                        if spanIndex < spans.count { column = spans[spanIndex].lowerBound }
                    }
                    return tile
                }
                guard row < lastRow else { return nil }
                row += 1
                spans = cover.columns(inRow: row)
                spanIndex = 0
                column = spans.first?.lowerBound ?? 0
            }
        }
    }

    /// The covers of `area` on each of `levels`, in level order.
    public static func covers(_ area: CoverArea, levels: [GraphLevel] = GraphLevel.roads) -> [GraphTileCover] {
        levels.sorted().map { GraphTileCover(area, level: $0) }
    }
}
