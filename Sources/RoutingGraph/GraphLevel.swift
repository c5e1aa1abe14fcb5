import Foundation

/// One level of Valhalla's tile hierarchy: a regular grid of square lon/lat cells starting at
/// (−180°, −90°), columns west to east, rows south to north.
///
/// Level 0 holds motorways, trunk and primary roads in 4° cells; level 1 secondary and tertiary
/// roads in 1° cells; level 2 everything else in 0.25° cells; level 3 transit (only in builds with
/// transit) in 0.25° cells. A route uses level 2 near its ends and the coarser levels between, so a
/// region needs the tiles of every level its geometry meets.
///
/// Cells are half-open: a cell holds the points with `west <= lng < west + size` and
/// `south <= lat < south + size`, so every point has exactly one cell, the one ``tileIndex(lng:lat:)``
/// names. The world's own east and north edges are the exception: lng 180° lies in the last column
/// and lat 90° in the last row (Valhalla's arithmetic would put them one past the grid).
public struct GraphLevel: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The level number, 0…3: the low 3 bits of a graph id.
    public let level: Int
    /// The cell size in degrees, as an exact binary fraction (4, 1 or 0.25).
    public let tileSize: Double

    /// The four levels Valhalla builds, coarsest first.
    public static let all: [GraphLevel] = [
        GraphLevel(level: 0, tileSize: 4), GraphLevel(level: 1, tileSize: 1),
        GraphLevel(level: 2, tileSize: 0.25), GraphLevel(level: 3, tileSize: 0.25),
    ]

    /// The road levels 0…2 (level 3 is transit, present only in builds with transit).
    public static let roads: [GraphLevel] = Array(all.prefix(3))

    /// The level numbered `level`, or nil for a number Valhalla does not use.
    public init?(_ level: Int) {
        guard GraphLevel.all.indices.contains(level) else { return nil }
        self = GraphLevel.all[level]
    }

    private init(level: Int, tileSize: Double) {
        self.level = level
        self.tileSize = tileSize
        columns = Int(360 / tileSize)
        rows = Int(180 / tileSize)
        let digits = String(columns * rows - 1).count
        pathDigits = (digits + 2) / 3 * 3
    }

    /// Columns west to east: 360° / size (90, 360, 1,440, 1,440).
    public let columns: Int
    /// Rows south to north: 180° / size (45, 180, 720, 720).
    public let rows: Int
    /// The number of cells: columns × rows.
    public var tileCount: Int { columns * rows }
    /// The largest tile index: `tileCount − 1` (4,049, 64,799, 1,036,799, 1,036,799).
    public var maxIndex: Int { tileCount - 1 }

    /// The digits of a tile index in a path: the digit count of ``maxIndex`` rounded up to a multiple
    /// of 3 (6, 6, 9, 9), as Valhalla's `GraphTile::FileSuffix` pads.
    public let pathDigits: Int

    /// The column of longitude `lng` (clamped to −180…180; 180 is in the last column).
    public func column(lng: Double) -> Int {
        let clamped = min(max(lng, -180), 180)
        return min(Int(((clamped + 180) / tileSize).rounded(.down)), columns - 1)
    }

    /// The row of latitude `lat` (clamped to −90…90; 90 is in the last row).
    public func row(lat: Double) -> Int {
        let clamped = min(max(lat, -90), 90)
        return min(Int(((clamped + 90) / tileSize).rounded(.down)), rows - 1)
    }

    /// The index of the cell holding (`lng`, `lat`): row × columns + column.
    public func tileIndex(lng: Double, lat: Double) -> Int {
        row(lat: lat) * columns + column(lng: lng)
    }

    /// The tile holding (`lng`, `lat`) at this level.
    public func tile(lng: Double, lat: Double) -> GraphTileID {
        GraphTileID(uncheckedLevel: self, index: tileIndex(lng: lng, lat: lat))
    }

    /// The south-west corner of cell `index` in degrees (lng, lat): the tile header's base corner.
    public func baseCorner(index: Int) -> (lng: Double, lat: Double) {
        let column = index % columns, row = index / columns
        return (Double(column) * tileSize - 180, Double(row) * tileSize - 90)
    }

    /// `level N`.
    public var description: String { "level \(level)" }

    /// Orders by level number.
    public static func < (lhs: GraphLevel, rhs: GraphLevel) -> Bool { lhs.level < rhs.level }
}
