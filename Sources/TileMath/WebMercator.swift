import Foundation

/// Spherical Web Mercator (EPSG:3857) as XYZ tiles use it, with MapLibre Native's formulas.
///
/// Tile coordinates are fractional: the integer part is the tile column or row, the fraction the
/// position inside the tile. `x` grows east from the antimeridian, `y` grows south from the
/// northern latitude limit. Longitudes are not wrapped here, so −190° gives a negative `x`; the
/// tile cover wraps columns into the world itself.
public enum WebMercator {
    /// The latitude limit of the square Web Mercator world, in degrees (MapLibre's `LATITUDE_MAX`).
    public static let maxLatitude = 85.051128779806604

    /// The WGS 84 equatorial radius in metres that EPSG:3857 projects with.
    public static let earthRadius = 6_378_137.0

    /// Half the width of the EPSG:3857 world in metres (π × radius).
    public static let originShift = Double.pi * earthRadius

    /// The number of tiles along one side of the world at `zoom` (2^zoom).
    public static func tilesPerSide(zoom: Int) -> Int {
        1 << zoom
    }

    /// The fractional tile column of a longitude at `zoom`: (180 + lng) / 360 · 2^zoom, unwrapped.
    public static func tileX(lng: Double, zoom: Int) -> Double {
        (180.0 + lng) / 360.0 * scale(zoom)
    }

    /// The fractional tile row of a latitude at `zoom`; the latitude is clamped to ±``maxLatitude``
    /// first, so the result lies in 0...2^zoom.
    public static func tileY(lat: Double, zoom: Int) -> Double {
        let clamped = min(max(lat, -maxLatitude), maxLatitude)
        // MapLibre's Projection::project: the Mercator ordinate expressed in degrees.
        let mercatorDegrees = log(tan(Double.pi / 4.0 + clamped * Double.pi / 360.0)) * 180.0 / Double.pi
        let y = (180.0 - mercatorDegrees) / 360.0 * scale(zoom)
        return min(max(y, 0.0), scale(zoom))
    }

    /// The longitude of a fractional tile column at `zoom` (the inverse of ``tileX(lng:zoom:)``).
    public static func lng(tileX: Double, zoom: Int) -> Double {
        tileX / scale(zoom) * 360.0 - 180.0
    }

    /// The latitude of a fractional tile row at `zoom` (the inverse of ``tileY(lat:zoom:)``).
    public static func lat(tileY: Double, zoom: Int) -> Double {
        let n = Double.pi * (1.0 - 2.0 * tileY / scale(zoom))
        return atan(sinh(n)) * 180.0 / Double.pi
    }

    /// The tile containing a point at `zoom`: the column wraps into the world, the row is clamped
    /// into it, and a point on a tile boundary belongs to the tile east or south of it.
    public static func tile(containing point: LngLat, zoom: Int) -> TileID {
        let n = tilesPerSide(zoom: zoom)
        let column = Int(floor(tileX(lng: point.lng, zoom: zoom)))
        let row = Int(floor(tileY(lat: point.lat, zoom: zoom)))
        return TileID(z: zoom, x: ((column % n) + n) % n, y: min(max(row, 0), n - 1))
    }

    /// The EPSG:3857 metres of a geographic point (latitude clamped to ±``maxLatitude``).
    public static func metres(_ point: LngLat) -> (x: Double, y: Double) {
        let clamped = min(max(point.lat, -maxLatitude), maxLatitude)
        let x = point.lng * Double.pi / 180.0 * earthRadius
        let y = log(tan(Double.pi / 4.0 + clamped * Double.pi / 360.0)) * earthRadius
        return (x, y)
    }

    static func scale(_ zoom: Int) -> Double {
        Double(tilesPerSide(zoom: zoom))
    }
}

/// A rectangle in EPSG:3857 metres, as MBTiles metadata and GDAL write it.
public struct MercatorBounds: Hashable, Sendable {
    /// The western edge in metres.
    public var minX: Double
    /// The southern edge in metres.
    public var minY: Double
    /// The eastern edge in metres.
    public var maxX: Double
    /// The northern edge in metres.
    public var maxY: Double

    /// Creates a rectangle from its edges in metres.
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }
}
