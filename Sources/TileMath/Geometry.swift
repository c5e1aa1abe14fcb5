/// A longitude/latitude pair in degrees (WGS 84), in GeoJSON order.
public struct LngLat: Hashable, Sendable {
    /// Longitude in degrees, east positive.
    public var lng: Double
    /// Latitude in degrees, north positive.
    public var lat: Double

    public init(lng: Double, lat: Double) {
        self.lng = lng
        self.lat = lat
    }
}

/// A geographic rectangle in degrees: west, south, east, north.
public struct BoundingBox: Hashable, Sendable {
    public var west: Double
    public var south: Double
    public var east: Double
    public var north: Double

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
}
