import Foundation

/// A tileset's TileJSON `bounds` as MapLibre Native keeps them, and the tiles they allow at each zoom.
///
/// MapLibre reads `bounds` `[west, south, east, north]` (`style/conversion/tileset.cpp`): latitudes
/// are clamped to ±90°, longitudes to ±180°, and a TileJSON whose south is not below its north,
/// or whose west is not left of its east (an antimeridian crossing), is refused. The renderer
/// then requests, at each zoom, only the tiles of `util::TileRange::fromLatLngBounds`: the column
/// of the west edge through the column of the east edge, the row of the north edge through the
/// row of the south edge, all **inclusive** (an edge lying on a tile boundary takes in the tile
/// beyond it), rows clamped into the world; at z0 the one tile is always in range.
public struct TileBounds: Hashable, Sendable {
    /// The western edge in degrees, −180 ≤ west < east.
    public let west: Double
    /// The southern edge in degrees, −90 ≤ south < north.
    public let south: Double
    /// The eastern edge in degrees, west < east ≤ 180.
    public let east: Double
    /// The northern edge in degrees, south < north ≤ 90.
    public let north: Double

    /// The bounds MapLibre keeps for TileJSON `bounds` `[west, south, east, north]`: clamped into
    /// ±180° and ±90°; nil when MapLibre refuses them (south ≥ north or west ≥ east after the
    /// latitude clamp, or a value that is not finite), and when nothing of them is left inside
    /// the world (west beyond 180° or east below −180°, where MapLibre's wrapped range is arbitrary).
    public init?(west: Double, south: Double, east: Double, north: Double) {
        guard west.isFinite, south.isFinite, east.isFinite, north.isFinite else { return nil }
        let s = min(max(south, -90), 90)
        let n = min(max(north, -90), 90)
        let w = max(west, -180), e = min(east, 180)
        guard s < n, west < east, w < e else { return nil }
        self.west = w
        self.south = s
        self.east = e
        self.north = n
    }

    /// The whole world: the TileJSON default, which limits nothing.
    public var isWorld: Bool {
        west <= -180 && east >= 180 && south <= -WebMercator.maxLatitude && north >= WebMercator.maxLatitude
    }

    /// The tiles the bounds allow at `zoom`: MapLibre's `TileRange::fromLatLngBounds(bounds, zoom)`
    /// as a half-open rectangle of in-world columns and rows (possibly empty).
    public func rect(zoom: Int) -> TileRect {
        let n = 1 << zoom
        guard zoom > 0 else { return TileRect(columns: 0..<1, rows: 0..<1) }
        func clampedRange(_ first: Int, _ last: Int) -> Range<Int> {
            let lower = min(max(first, 0), n)
            let upper = min(max(last + 1, lower), n)
            return lower..<upper
        }
        let columns = clampedRange(Int(floor(WebMercator.tileX(lng: west, zoom: zoom))),
                                   Int(floor(WebMercator.tileX(lng: east, zoom: zoom))))
        let rows = clampedRange(Int(floor(WebMercator.tileY(lat: north, zoom: zoom))),
                                Int(floor(WebMercator.tileY(lat: south, zoom: zoom))))
        return TileRect(columns: columns, rows: rows)
    }

    /// Whether `tile` is within the bounds at its zoom.
    public func contains(_ tile: TileID) -> Bool {
        rect(zoom: tile.z).contains(tile)
    }
}

/// A rectangle of in-world tiles at one zoom: columns times rows, both half-open.
public struct TileRect: Hashable, Sendable {
    /// The columns, west to east.
    public var columns: Range<Int>
    /// The rows, north to south.
    public var rows: Range<Int>

    /// A rectangle of `columns` × `rows`.
    public init(columns: Range<Int>, rows: Range<Int>) {
        self.columns = columns
        self.rows = rows
    }

    /// The number of tiles in the rectangle.
    public var count: Int { columns.count * rows.count }

    /// Whether the tile's column and row are in the rectangle (its zoom is not checked).
    public func contains(_ tile: TileID) -> Bool {
        columns.contains(tile.x) && rows.contains(tile.y)
    }
}
