/// A longitude/latitude pair in degrees (WGS 84), in GeoJSON order.
public struct LngLat: Hashable, Sendable {
    /// Longitude in degrees, east positive.
    public var lng: Double
    /// Latitude in degrees, north positive.
    public var lat: Double

    /// Creates a point from longitude and latitude in degrees.
    public init(lng: Double, lat: Double) {
        self.lng = lng
        self.lat = lat
    }
}

/// A geographic rectangle in degrees: west, south, east, north.
///
/// A box whose `west` is greater than its `east` crosses the antimeridian: it runs from `west`
/// eastwards to 180° and on from −180° to `east`.
public struct BoundingBox: Hashable, Sendable {
    /// The western edge, longitude in degrees.
    public var west: Double
    /// The southern edge, latitude in degrees.
    public var south: Double
    /// The eastern edge, longitude in degrees.
    public var east: Double
    /// The northern edge, latitude in degrees.
    public var north: Double

    /// Creates a box from its four edges in degrees.
    public init(west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }
}

/// A polygon: an outer ring followed by zero or more holes; each ring is a list of
/// vertices, closed or not (the closing vertex is implied).
public struct Polygon: Hashable, Sendable {
    /// The rings; `rings[0]` is the outer boundary.
    public var rings: [[LngLat]]

    /// Creates a polygon from its rings, the outer boundary first.
    public init(rings: [[LngLat]]) {
        self.rings = rings
    }
}

/// The area a tile cover is computed for.
public enum CoverArea: Hashable, Sendable {
    /// A rectangle, covered with MapLibre's half-open edge rule.
    case bbox(BoundingBox)
    /// The union of polygons (a MultiPolygon), holes excluded.
    case polygons([Polygon])
    /// Lines (each a list of positions) and points: the tiles they pass through (``PathCover``).
    case paths(lines: [[LngLat]], points: [LngLat])
}

extension BoundingBox {
    /// The whole Web Mercator world.
    public static let world = BoundingBox(west: -180, south: -90, east: 180, north: 90)

    /// Whether the box crosses the antimeridian (`west > east`).
    public var crossesAntimeridian: Bool { west > east }
}
