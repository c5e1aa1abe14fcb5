import Foundation
import TileMath

/// The segments and polygon interiors of an area, swept row by row against a level's grid to give
/// the exact columns an area meets in a row strip (``GraphTileCover``).
///
/// A closed set meets a half-open cell exactly when its boundary passes through the cell or the
/// cell's south-west corner (a point of the cell) lies inside it: if no boundary point is in the
/// cell, the cell (connected) lies wholly inside or wholly outside, and its corner decides which.
/// So a row's columns are those the segments' clipped stretches reach, plus those whose corners on
/// the row's south edge fall inside a polygon (even-odd over its rings, so holes are holes).
struct GraphShapes: Sendable {
    struct Segment: Sendable {
        var ax: Double, ay: Double, bx: Double, by: Double
    }

    /// Every boundary segment: polygon edges (rings closed), line segments, points (zero length).
    let segments: [Segment]
    /// Per polygon, the edges of all its rings (for the inside test).
    let polygonEdges: [[Segment]]

    init(polygons: [[[LngLat]]], lines: [[LngLat]], points: [LngLat]) {
        var segments: [Segment] = []
        var polygonEdges: [[Segment]] = []
        func clamp(_ p: LngLat) -> (Double, Double) { (min(max(p.lng, -180), 180), min(max(p.lat, -90), 90)) }
        for rings in polygons {
            var edges: [Segment] = []
            for ring in rings {
                for (i, point) in ring.enumerated() {
                    let (ax, ay) = clamp(point), (bx, by) = clamp(ring[(i + 1) % ring.count])
                    edges.append(Segment(ax: ax, ay: ay, bx: bx, by: by))
                }
            }
            segments += edges
            polygonEdges.append(edges)
        }
        for line in lines {
            if line.count == 1, let point = line.first {
                let (x, y) = clamp(point)
                segments.append(Segment(ax: x, ay: y, bx: x, by: y))
            }
            for (a, b) in zip(line, line.dropFirst()) {
                let (ax, ay) = clamp(a), (bx, by) = clamp(b)
                segments.append(Segment(ax: ax, ay: ay, bx: bx, by: by))
            }
        }
        for point in points {
            let (x, y) = clamp(point)
            segments.append(Segment(ax: x, ay: y, bx: x, by: y))
        }
        self.segments = segments
        self.polygonEdges = polygonEdges
    }

    /// The smallest and largest latitude of any vertex, or nil for no vertex.
    var latitudeRange: (Double, Double)? {
        guard !segments.isEmpty else { return nil }
        var south = Double.infinity, north = -Double.infinity
        for segment in segments {
            south = min(south, segment.ay, segment.by)
            north = max(north, segment.ay, segment.by)
        }
        return (south, north)
    }

    /// One end of a parameter or coordinate interval: its value and whether it is excluded.
    struct Bound {
        var value: Double
        var isOpen: Bool
    }

    /// The columns of `level` the shapes meet in row `row`: sorted, disjoint, merged spans.
    func columns(inRow row: Int, level: GraphLevel) -> [ClosedRange<Int>] {
        let south = Double(row) * level.tileSize - 90, north = south + level.tileSize
        let isLastRow = row == level.rows - 1
        var spans: [ClosedRange<Int>] = []
        for segment in segments {
            guard let (west, east) = clip(segment, south: south, north: north, closedNorth: isLastRow) else { continue }
            let first = level.column(lng: west.value)
            var last = level.column(lng: east.value)
            // An open east end exactly on a column boundary stops short of that column.
            if east.isOpen, last > first, Double(last) * level.tileSize - 180 == east.value { last -= 1 }
            spans.append(first...last)
        }
        for edges in polygonEdges {
            var crossings: [Double] = []
            for edge in edges where (edge.ay <= south) != (edge.by <= south) {
                let t = (south - edge.ay) / (edge.by - edge.ay)
                crossings.append(edge.ax + t * (edge.bx - edge.ax))
            }
            crossings.sort()
            var i = 0
            while i + 1 < crossings.count {
                // Corners strictly between two crossings are inside; corners on a crossing are on the
                // boundary, whose segment already put their cell in.
                let (lo, hi) = (crossings[i], crossings[i + 1])
                let first = max(Int(((lo + 180) / level.tileSize).rounded(.down)) + 1, 0)
                let last = min(Int(((hi + 180) / level.tileSize).rounded(.up)) - 1, level.columns - 1)
                if first <= last { spans.append(first...last) }
                i += 2
            }
        }
        return GraphShapes.merged(spans)
    }

    /// The stretch of `segment` with `south <= y < north` (`<= north` on the last row), as its
    /// westmost and eastmost longitudes with their openness, or nil when the segment misses the strip.
    func clip(_ segment: Segment, south: Double, north: Double, closedNorth: Bool) -> (Bound, Bound)? {
        var lo = Bound(value: 0, isOpen: false), hi = Bound(value: 1, isOpen: false)
        func raise(_ value: Double, open: Bool) {
            if value > lo.value || (value == lo.value && open) { lo = Bound(value: value, isOpen: open) }
        }
        func lower(_ value: Double, open: Bool) {
            if value < hi.value || (value == hi.value && open) { hi = Bound(value: value, isOpen: open) }
        }
        let dy = segment.by - segment.ay
        if dy == 0 {
            let y = segment.ay
            guard y >= south, closedNorth ? y <= north : y < north else { return nil }
        } else {
            let tSouth = (south - segment.ay) / dy, tNorth = (north - segment.ay) / dy
            if dy > 0 {
                raise(tSouth, open: false)
                lower(tNorth, open: !closedNorth)
            } else {
                lower(tSouth, open: false)
                raise(tNorth, open: !closedNorth)
            }
        }
        guard lo.value < hi.value || (lo.value == hi.value && !lo.isOpen && !hi.isOpen) else { return nil }
        func x(_ t: Double) -> Double {
            t == 0 ? segment.ax : t == 1 ? segment.bx : segment.ax + t * (segment.bx - segment.ax)
        }
        let (x0, x1) = (x(lo.value), x(hi.value))
        if x0 == x1 { return (Bound(value: x0, isOpen: false), Bound(value: x0, isOpen: false)) }
        return x0 < x1 ? (Bound(value: x0, isOpen: lo.isOpen), Bound(value: x1, isOpen: hi.isOpen))
                       : (Bound(value: x1, isOpen: hi.isOpen), Bound(value: x0, isOpen: lo.isOpen))
    }

    /// Sorted spans with overlapping or adjacent ones joined.
    static func merged(_ spans: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var result: [ClosedRange<Int>] = []
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, span.lowerBound <= last.upperBound + 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else {
                result.append(span)
            }
        }
        return result
    }
}
