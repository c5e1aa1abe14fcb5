import TileMath

/// Planar checks on a linear ring in degrees: area and self-intersection.
enum RingGeometry {
    /// Areas below this many square degrees (about 3 mm by 3 mm at the equator) count as zero,
    /// so rounding in the shoelace sum of collinear points does not hide a degenerate ring.
    static let zeroArea = 1e-15

    /// The signed shoelace area of a ring, in square degrees (positive when counter-clockwise).
    static func area(_ ring: [LngLat]) -> Double {
        guard ring.count >= 3 else { return 0 }
        var sum = 0.0
        for i in 0..<ring.count {
            let a = ring[i]
            let b = ring[(i + 1) % ring.count]
            sum += a.lng * b.lat - b.lng * a.lat
        }
        return sum / 2
    }

    /// The indices (into `ring`) of the start positions of the first two non-adjacent edges found
    /// to cross properly, or of two collinear edges that overlap; nil when the ring is simple.
    ///
    /// Why a sort and not a full O(n²) scan: edges are sorted by their smallest longitude and an
    /// edge is only compared with edges whose longitude span overlaps its own, so rings of tens
    /// of thousands of vertices are checked quickly while the test stays exact. Repeated
    /// consecutive positions are skipped (they are zero-length edges, not crossings). Edges
    /// that merely touch at a point are not reported.
    static func firstSelfIntersection(_ ring: [LngLat]) -> (Int, Int)? {
        // Positions with consecutive duplicates removed, remembering their original index.
        var points: [(p: LngLat, index: Int)] = []
        for (i, p) in ring.enumerated() where points.last?.p != p {
            points.append((p, i))
        }
        let edgeCount = points.count - 1
        guard edgeCount >= 4 else { return nil }
        let isClosed = points.first?.p == points.last?.p
        let order = (0..<edgeCount).sorted { minLng(points, $0) < minLng(points, $1) }
        for (n, i) in order.enumerated() {
            let maxLngI = max(points[i].p.lng, points[i + 1].p.lng)
            for j in order[(n + 1)...] {
                if minLng(points, j) > maxLngI { break }
                let (a, b) = (min(i, j), max(i, j))
                if b == a + 1 || (isClosed && a == 0 && b == edgeCount - 1) { continue }
                if segmentsCross(points[a].p, points[a + 1].p, points[b].p, points[b + 1].p) {
                    return (points[a].index, points[b].index)
                }
            }
        }
        return nil
    }

    /// The start indices (into `a` and into `b`) of the first edge of `a` found crossing an edge of
    /// `b` (properly, or overlapping on a line); nil when the two rings' edges do not cross.
    /// Edges are swept by longitude as in `firstSelfIntersection`.
    static func firstCrossing(_ a: [LngLat], _ b: [LngLat]) -> (Int, Int)? {
        var edges: [(ring: Int, index: Int, p: LngLat, q: LngLat)] = []
        for (r, ring) in [a, b].enumerated() where ring.count >= 2 {
            for i in 0..<(ring.count - 1) where ring[i] != ring[i + 1] { edges.append((r, i, ring[i], ring[i + 1])) }
        }
        edges.sort { min($0.p.lng, $0.q.lng) < min($1.p.lng, $1.q.lng) }
        for (n, e) in edges.enumerated() {
            let maxLng = max(e.p.lng, e.q.lng)
            for f in edges[(n + 1)...] {
                if min(f.p.lng, f.q.lng) > maxLng { break }
                guard f.ring != e.ring, segmentsCross(e.p, e.q, f.p, f.q) else { continue }
                return e.ring == 0 ? (e.index, f.index) : (f.index, e.index)
            }
        }
        return nil
    }

    /// Whether `point` lies inside `ring` (even-odd rule); nil when it is on the ring's boundary.
    static func contains(_ ring: [LngLat], _ point: LngLat) -> Bool? {
        var inside = false
        for i in 0..<max(0, ring.count - 1) {
            let a = ring[i], b = ring[i + 1]
            if orientation(a, b, point) == 0 && min(a.lng, b.lng) <= point.lng && point.lng <= max(a.lng, b.lng)
                && min(a.lat, b.lat) <= point.lat && point.lat <= max(a.lat, b.lat) {
                return nil
            }
            if (a.lat > point.lat) != (b.lat > point.lat) {
                let lng = a.lng + (point.lat - a.lat) * (b.lng - a.lng) / (b.lat - a.lat)
                if point.lng < lng { inside.toggle() }
            }
        }
        return inside
    }

    private static func minLng(_ points: [(p: LngLat, index: Int)], _ edge: Int) -> Double {
        min(points[edge].p.lng, points[edge + 1].p.lng)
    }

    /// The cross product (b − a) × (c − a): positive when c is left of a→b.
    static func orientation(_ a: LngLat, _ b: LngLat, _ c: LngLat) -> Double {
        (b.lng - a.lng) * (c.lat - a.lat) - (b.lat - a.lat) * (c.lng - a.lng)
    }

    /// Whether segments p1p2 and p3p4 cross at a point inside both, or lie on one line and
    /// share more than a point.
    static func segmentsCross(_ p1: LngLat, _ p2: LngLat, _ p3: LngLat, _ p4: LngLat) -> Bool {
        let d1 = orientation(p3, p4, p1)
        let d2 = orientation(p3, p4, p2)
        let d3 = orientation(p1, p2, p3)
        let d4 = orientation(p1, p2, p4)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
            return true
        }
        if d1 == 0 && d2 == 0 && d3 == 0 && d4 == 0 {
            // Collinear: project on the axis with the larger extent and test for overlap of positive length.
            let useLng = abs(p2.lng - p1.lng) + abs(p4.lng - p3.lng) >= abs(p2.lat - p1.lat) + abs(p4.lat - p3.lat)
            let (a1, a2) = useLng ? (p1.lng, p2.lng) : (p1.lat, p2.lat)
            let (b1, b2) = useLng ? (p3.lng, p4.lng) : (p3.lat, p4.lat)
            let low = max(min(a1, a2), min(b1, b2))
            let high = min(max(a1, a2), max(b1, b2))
            return high > low
        }
        return false
    }
}
