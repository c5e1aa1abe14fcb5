/// A Web Mercator XYZ tile: zoom `z`, column `x` from the west, row `y` from the north.
public struct TileID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The zoom level, 0 for the single world tile.
    public var z: Int
    /// The column, counted from the antimeridian eastwards, in 0..<2^z for a valid tile.
    public var x: Int
    /// The row, counted from the north, in 0..<2^z for a valid tile.
    public var y: Int

    /// Creates a tile id; see ``isValid`` for the ranges that name a real tile.
    public init(z: Int, x: Int, y: Int) {
        self.z = z
        self.x = x
        self.y = y
    }

    /// Orders by zoom, then column, then row: the order tiles are enumerated and stored in.
    public static func < (a: TileID, b: TileID) -> Bool {
        (a.z, a.x, a.y) < (b.z, b.x, b.y)
    }

    /// The row counted from the south, as TMS and MBTiles number it.
    public var tmsY: Int { (1 << z) - 1 - y }

    /// The tile as `z/x/y`, the order of XYZ URL templates.
    public var description: String { "\(z)/\(x)/\(y)" }
}

extension TileID {
    /// The highest zoom a ``TileID`` may have, so that per-zoom tile counts (4^z) and sums over
    /// zoom ranges still fit in an `Int`.
    public static let maxZoom = 30

    /// Whether `z` is in 0...``maxZoom`` and `x` and `y` are in 0..<2^z.
    public var isValid: Bool {
        guard z >= 0, z <= TileID.maxZoom else { return false }
        let n = 1 << z
        return x >= 0 && x < n && y >= 0 && y < n
    }

    /// The geographic rectangle of the tile in degrees; north and south are within ±85.0511°.
    public var bounds: BoundingBox {
        BoundingBox(
            west: WebMercator.lng(tileX: Double(x), zoom: z),
            south: WebMercator.lat(tileY: Double(y + 1), zoom: z),
            east: WebMercator.lng(tileX: Double(x + 1), zoom: z),
            north: WebMercator.lat(tileY: Double(y), zoom: z))
    }

    /// The tile's rectangle in EPSG:3857 metres (minX, minY, maxX, maxY), computed from the tile
    /// grid directly rather than by projecting ``bounds``, so neighbouring tiles share edges exactly.
    public var mercatorBounds: MercatorBounds {
        let size = 2.0 * WebMercator.originShift / Double(1 << z)
        let shift = WebMercator.originShift
        return MercatorBounds(
            minX: -shift + Double(x) * size, minY: shift - Double(y + 1) * size,
            maxX: -shift + Double(x + 1) * size, maxY: shift - Double(y) * size)
    }

    /// The Bing Maps quadkey: one digit per zoom level, `""` for the world tile.
    public var quadkey: String {
        var digits = [Character]()
        digits.reserveCapacity(max(z, 0))
        var level = z
        while level > 0 {
            let mask = 1 << (level - 1)
            var digit = 0
            if x & mask != 0 { digit += 1 }
            if y & mask != 0 { digit += 2 }
            digits.append(Character(String(digit)))
            level -= 1
        }
        return String(digits)
    }

    /// Parses a quadkey; returns nil for characters other than 0–3 or more than ``maxZoom`` digits.
    public init?(quadkey: String) {
        guard quadkey.count <= TileID.maxZoom else { return nil }
        var x = 0
        var y = 0
        for character in quadkey {
            x <<= 1
            y <<= 1
            switch character {
            case "0": break
            case "1": x |= 1
            case "2": y |= 1
            case "3": x |= 1; y |= 1
            default: return nil
            }
        }
        self.init(z: quadkey.count, x: x, y: y)
    }

    /// The tile one zoom level up that contains this one, or nil at zoom 0.
    public var parent: TileID? {
        guard z > 0 else { return nil }
        return TileID(z: z - 1, x: x >> 1, y: y >> 1)
    }

    /// The ancestor at `zoom` (≤ z), or nil when `zoom` is negative or deeper than this tile.
    public func ancestor(atZoom zoom: Int) -> TileID? {
        guard zoom >= 0, zoom <= z else { return nil }
        let shift = z - zoom
        return TileID(z: zoom, x: x >> shift, y: y >> shift)
    }

    /// The four tiles one zoom level down, in ``TileID`` order (west column first, north first).
    public var children: [TileID] {
        let cx = x << 1
        let cy = y << 1
        return [
            TileID(z: z + 1, x: cx, y: cy), TileID(z: z + 1, x: cx, y: cy + 1),
            TileID(z: z + 1, x: cx + 1, y: cy), TileID(z: z + 1, x: cx + 1, y: cy + 1),
        ]
    }
}
