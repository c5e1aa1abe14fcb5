import Foundation

/// One polygon edge in fractional tile coordinates, oriented so that the fill lies on a
/// consistent side (outer rings and holes wind opposite ways).
struct PolygonEdge: Sendable {
    var x0: Double, y0: Double, x1: Double, y1: Double
    var minX: Double { min(x0, x1) }
    var maxX: Double { max(x0, x1) }

    /// The y of the edge's line at `x`, exact at the end points.
    func y(atX x: Double) -> Double {
        if x == x0 { return y0 }
        if x == x1 { return y1 }
        return y0 + (x - x0) * (y1 - y0) / (x1 - x0)
    }
}

/// The edges of a multipolygon projected to tile space at one zoom, sorted by their west end.
///
/// Why columns and not rows (MapLibre scans rows): consumers merge-join covers against stores
/// sorted by (z, x, y), so tiles must come out column by column.
struct PolygonEdges: Sendable {
    let zoom: Int
    /// Edges sorted by `minX`.
    let edges: [PolygonEdge]
    /// The unwrapped columns any edge reaches: `floor(min x) ..< ceil(max x)`.
    let columnRange: Range<Int>

    var isEmpty: Bool { edges.isEmpty }
    var tilesPerSide: Int { 1 << zoom }

    init(_ polygons: [Polygon], zoom: Int) {
        self.zoom = zoom
        var edges: [PolygonEdge] = []
        for polygon in polygons {
            for (index, ring) in polygon.rings.enumerated() {
                // A hole only counts inside a polygon that has an outer ring with area.
                let points = PolygonEdges.project(ring, zoom: zoom)
                let area = PolygonEdges.signedArea(points)
                guard points.count >= 3, area != 0, area.isFinite else {
                    if index == 0 { break } else { continue }
                }
                // Outer rings positive, holes negative, so the non-zero rule cuts holes out.
                let reverse = (index == 0) != (area > 0)
                let ordered = reverse ? points.reversed() : points
                for i in ordered.indices {
                    let a = ordered[i]
                    let b = ordered[(i + 1) % ordered.count]
                    if a != b {
                        edges.append(PolygonEdge(x0: a.x, y0: a.y, x1: b.x, y1: b.y))
                    }
                }
            }
        }
        edges.sort { $0.minX < $1.minX }
        self.edges = edges
        let west = edges.map(\.minX).min() ?? 0
        let east = edges.map(\.maxX).max() ?? 0
        columnRange = Int(floor(west))..<max(Int(ceil(east)), Int(floor(west)))
    }

    /// Projects a ring, dropping a repeated closing vertex and non-finite points.
    static func project(_ ring: [LngLat], zoom: Int) -> [SIMD2<Double>] {
        var points: [SIMD2<Double>] = []
        points.reserveCapacity(ring.count)
        for vertex in ring where vertex.lng.isFinite && vertex.lat.isFinite {
            points.append(SIMD2(WebMercator.tileX(lng: vertex.lng, zoom: zoom),
                                WebMercator.tileY(lat: vertex.lat, zoom: zoom)))
        }
        if points.count > 1, points.first == points.last {
            points.removeLast()
        }
        return points
    }

    /// Twice the signed area (shoelace); positive for clockwise rings on screen (y grows south).
    static func signedArea(_ points: [SIMD2<Double>]) -> Double {
        guard points.count >= 3 else { return 0 }
        var sum = 0.0
        for i in points.indices {
            let a = points[i]
            let b = points[(i + 1) % points.count]
            sum += a.x * b.y - b.x * a.y
        }
        return sum
    }

    /// The covered rows of unwrapped column `column`, given every edge that reaches into it.
    ///
    /// A tile is covered when the boundary passes through its interior (then polygon interior is
    /// next to it), or when its centre is inside (no boundary inside the tile means the whole tile
    /// is in or out, and the centre decides). Together that is exactly "the tile's interior meets
    /// the polygon's interior".
    func rows<S: Sequence>(inColumn column: Int, edges active: S) -> [Range<Int>] where S.Element == PolygonEdge {
        let left = Double(column)
        let right = left + 1
        let middle = left + 0.5
        var ranges: [Range<Int>] = []
        var crossings: [(y: Double, winding: Int)] = []
        for edge in active where edge.minX < right && edge.maxX > left {
            let ya: Double
            let yb: Double
            if edge.x0 == edge.x1 {
                ya = edge.y0
                yb = edge.y1
            } else {
                ya = edge.y(atX: max(edge.minX, left))
                yb = edge.y(atX: min(edge.maxX, right))
            }
            let low = min(ya, yb)
            let high = max(ya, yb)
            if low < high {
                PolygonEdges.append(Int(floor(low))..<Int(ceil(high)), to: &ranges)
            } else if floor(low) != low {
                PolygonEdges.append(Int(floor(low))..<(Int(floor(low)) + 1), to: &ranges)
            }
            if (edge.x0 <= middle) != (edge.x1 <= middle) {
                crossings.append((edge.y(atX: middle), edge.x1 > edge.x0 ? 1 : -1))
            }
        }
        crossings.sort { $0.y < $1.y }
        var winding = 0
        var insideFrom = 0.0
        for crossing in crossings {
            let before = winding
            winding += crossing.winding
            if before == 0 && winding != 0 {
                insideFrom = crossing.y
            } else if before != 0 && winding == 0 {
                // Rows whose centre r + 0.5 lies strictly between the two crossings.
                let first = Int(floor(insideFrom - 0.5)) + 1
                let end = Int(ceil(crossing.y - 0.5))
                PolygonEdges.append(first..<max(first, end), to: &ranges)
            }
        }
        return PolygonEdges.merged(ranges, limit: tilesPerSide)
    }

    /// The covered rows of a in-world column, over every world copy the polygons reach.
    func rows(inWorldColumn x: Int) -> [Range<Int>] {
        let n = tilesPerSide
        var all: [Range<Int>] = []
        let firstCopy = Int(floor(Double(columnRange.lowerBound) / Double(n)))
        let lastCopy = Int(floor(Double(columnRange.upperBound) / Double(n)))
        for copy in firstCopy...max(firstCopy, lastCopy) {
            let column = x + copy * n
            guard columnRange.contains(column) else { continue }
            all += rows(inColumn: column, edges: edges)
        }
        return PolygonEdges.merged(all, limit: n)
    }

    private static func append(_ range: Range<Int>, to ranges: inout [Range<Int>]) {
        if !range.isEmpty { ranges.append(range) }
    }

    /// Clamps ranges to `0..<limit`, sorts them and joins overlapping or adjacent ones.
    static func merged(_ ranges: [Range<Int>], limit: Int) -> [Range<Int>] {
        let clamped = ranges.compactMap { range -> Range<Int>? in
            let low = max(range.lowerBound, 0)
            let high = min(range.upperBound, limit)
            return low < high ? low..<high : nil
        }.sorted { $0.lowerBound < $1.lowerBound }
        var result: [Range<Int>] = []
        for range in clamped {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
