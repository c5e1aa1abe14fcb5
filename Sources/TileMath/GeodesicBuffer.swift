import Foundation

/// The area within a distance of a shape, measured along the Earth's surface, as valid polygons
/// that contain it (a corridor along a route, a radius around a point).
///
/// The buffer is built as overlapping parts: the shape itself (polygons), plus for every line and
/// ring a band of quadrilaterals, plus a disc at every vertex; discs are circumscribed polygons,
/// so nothing within the distance is left out and the overshoot is under 0.2% of the distance.
/// A region definition must be a valid geometry (MapLibre counts a region's tiles from it, and
/// overlapping parts of a MultiPolygon are invalid), so the parts are then united with
/// `CoveringUnion`, which only ever adds area: the result holds every point of the parts. Distances are on a sphere of the Earth's
/// mean radius (within 0.5% of the ellipsoid), and lines are densified in Mercator space (where
/// covers draw them straight) to pieces no longer than the distance.
public enum GeodesicBuffer {
    /// The Earth's mean radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8
    /// Vertices of each disc.
    static let discVertices = 64
    /// The most pieces a line is cut into; longer lines get longer pieces.
    static let maxPieces = 20_000

    /// Cells of `CoveringUnion`'s grid per buffer distance: the union exceeds the buffer by less
    /// than two cells, under 2% of the distance.
    static let cellsPerDistance = 128.0

    /// Valid polygons (no overlap, no self-intersection: `CoveringUnion`) that hold every point
    /// within `metres` of the lines, points and polygons given (latitudes are kept within Web
    /// Mercator's limit): what a region definition records and its tiles are counted from.
    public static func polygons(lines: [[LngLat]], points: [LngLat], polygons: [Polygon], metres: Double) -> [Polygon] {
        let parts = self.parts(lines: lines, points: points, polygons: polygons, metres: metres)
        // The Web Mercator width of the distance where it is smallest: nearest the equator.
        let latitudes = (lines.flatMap { $0 } + points + polygons.flatMap { $0.rings.flatMap { $0 } }).map { abs($0.lat) }
        let scale = cos(min(latitudes.min() ?? 0, WebMercator.maxLatitude) * .pi / 180)
        let width = metres / (2 * .pi * earthRadius * scale)
        return CoveringUnion.polygons(parts, cell: width / cellsPerDistance)
    }

    /// The overlapping polygons whose union holds every point within `metres` of the shapes.
    static func parts(lines: [[LngLat]], points: [LngLat], polygons: [Polygon], metres: Double) -> [Polygon] {
        var out = polygons.map { polygon in
            Polygon(rings: polygon.rings.enumerated().map { i, ring in i == 0 ? counterClockwise(ring) : counterClockwise(ring).reversed() })
        }
        for point in points { out.append(disc(point, metres)) }
        for line in lines { out += band(line, metres) }
        for polygon in polygons {
            for ring in polygon.rings { out += band(ring, metres) }
        }
        return out
    }

    /// The point `metres` from `p` along the initial bearing `bearing` (radians from north).
    static func destination(_ p: LngLat, _ metres: Double, bearing: Double) -> LngLat {
        let d = metres / earthRadius
        let lat1 = p.lat * .pi / 180, lng1 = p.lng * .pi / 180
        let lat2 = asin(sin(lat1) * cos(d) + cos(lat1) * sin(d) * cos(bearing))
        let lng2 = lng1 + atan2(sin(bearing) * sin(d) * cos(lat1), cos(d) - sin(lat1) * sin(lat2))
        let lat = min(max(lat2 * 180 / .pi, -WebMercator.maxLatitude), WebMercator.maxLatitude)
        return LngLat(lng: min(max(lng2 * 180 / .pi, -180), 180), lat: lat)
    }

    /// The initial bearing from `a` to `b` (radians from north).
    static func bearing(_ a: LngLat, _ b: LngLat) -> Double {
        let lat1 = a.lat * .pi / 180, lat2 = b.lat * .pi / 180, dLng = (b.lng - a.lng) * .pi / 180
        return atan2(sin(dLng) * cos(lat2), cos(lat1) * sin(lat2) - sin(lat1) * cos(lat2) * cos(dLng))
    }

    /// The great-circle distance between two points in metres.
    static func distance(_ a: LngLat, _ b: LngLat) -> Double {
        let lat1 = a.lat * .pi / 180, lat2 = b.lat * .pi / 180
        let h = pow(sin((lat2 - lat1) / 2), 2) + cos(lat1) * cos(lat2) * pow(sin((b.lng - a.lng) * .pi / 360), 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    /// A polygon around `p` that contains every point within `metres` of it.
    static func disc(_ p: LngLat, _ metres: Double) -> Polygon {
        let n = discVertices
        let radius = metres / cos(.pi / Double(n))  // circumscribed: its edges stay outside the circle
        var ring = (0..<n).map { i in destination(p, radius, bearing: -2 * .pi * Double(i) / Double(n)) }
        ring.append(ring[0])
        return Polygon(rings: [counterClockwise(ring)])
    }

    /// Discs at the vertices of `line` and a quadrilateral either side of every piece.
    ///
    /// Each segment of the line gets its own band: consecutive pieces of one segment share their
    /// offset points (at the mean of their bearings, which barely differ), and the disc at each
    /// vertex of the line fills the joint between two segments, however sharp the turn (sharing
    /// offsets across a hairpin would fold the band and leave points near it out).
    static func band(_ line: [LngLat], _ metres: Double) -> [Polygon] {
        var out = line.map { disc($0, metres) }
        let step = pieceLength(line, step: metres)
        for (start, end) in zip(line, line.dropFirst()) where start != end {
            let points = densified([start, end], step: step)
            guard points.count >= 2 else { continue }
            let bearings = zip(points, points.dropFirst()).map { bearing($0, $1) }
            func offsets(_ i: Int) -> (LngLat, LngLat) {
                let before = bearings[max(0, i - 1)], after = bearings[min(bearings.count - 1, i)]
                let mean = atan2(sin(before) + sin(after), cos(before) + cos(after))
                let reach = metres / max(0.5, cos((after - before) / 2))
                return (destination(points[i], reach, bearing: mean - .pi / 2), destination(points[i], reach, bearing: mean + .pi / 2))
            }
            var previous = offsets(0)
            for i in 1..<points.count {
                let next = offsets(i)
                guard points[i] != points[i - 1] else { continue }
                let quad = [previous.0, next.0, next.1, previous.1, previous.0]
                if abs(ringArea(quad)) > 0 { out.append(Polygon(rings: [counterClockwise(quad)])) }
                previous = next
            }
        }
        return out
    }

    /// The longest piece `densified` cuts `line` into: `step`, or longer for a line so long that
    /// it would otherwise be cut into more than `maxPieces`.
    static func pieceLength(_ line: [LngLat], step: Double) -> Double {
        let total = zip(line, line.dropFirst()).reduce(0) { $0 + distance($1.0, $1.1) }
        return max(step, total / Double(maxPieces))
    }

    /// `line` with points added so that no piece is longer than `step` metres, interpolated in
    /// Mercator space.
    static func densified(_ line: [LngLat], step: Double) -> [LngLat] {
        guard let first = line.first else { return [] }
        var out = [first]
        for (a, b) in zip(line, line.dropFirst()) {
            let pieces = max(1, Int((distance(a, b) / step).rounded(.up)))
            let ya = WebMercator.tileY(lat: a.lat, zoom: 0), yb = WebMercator.tileY(lat: b.lat, zoom: 0)
            for k in 1...pieces {
                let t = Double(k) / Double(pieces)
                out.append(LngLat(lng: a.lng + (b.lng - a.lng) * t, lat: WebMercator.lat(tileY: ya + (yb - ya) * t, zoom: 0)))
            }
        }
        return out
    }

    static func ringArea(_ ring: [LngLat]) -> Double {
        zip(ring, ring.dropFirst()).reduce(0) { $0 + $1.0.lng * $1.1.lat - $1.1.lng * $1.0.lat } / 2
    }

    static func counterClockwise(_ ring: [LngLat]) -> [LngLat] {
        ringArea(ring) < 0 ? ring.reversed() : ring
    }
}
