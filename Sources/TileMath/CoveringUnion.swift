import Foundation

/// The union of overlapping polygons as valid polygons that contain every point of them: the
/// geometry a region definition can record (MapLibre computes a region's tile count, and any
/// re-download, from that geometry; OGC validity forbids overlapping parts of a MultiPolygon).
///
/// Why a raster and not polygon clipping: the parts of a buffer (discs, the bands along lines,
/// the shape itself) share edges exactly and cross at countless near-degenerate points, which is
/// where floating-point clipping goes wrong. Here every cell of a fine grid in Web Mercator space
/// (where covers draw edges straight) that any part touches is filled (conservatively: a cell is
/// filled when a part's edge passes through it or its centre is inside a part), cells touching
/// only at a corner get one more cell so that no ring touches itself or another, and the outline
/// of the filled cells is traced into rings with holes. So the result is valid by construction
/// and contains the union; it is then simplified only outward: a unit stair step is cut by its
/// diagonal on the outside, and collinear vertices are dropped. The result exceeds the union by
/// less than two cells. Grid lines fall halfway between those of the tiles of any zoom the cell
/// size is a power of two of, so outline edges do not lie on tile edges.
public enum CoveringUnion {
    /// Polygons (shells counter-clockwise, holes clockwise, in longitude/latitude) that contain
    /// every point of `polygons` and overlap nowhere, on a grid of cells at most `cell` wide in
    /// Web Mercator units (the world is 1 wide); at most `maxCells` cells along the longer side
    /// of the extent (the cell grows for larger extents).
    public static func polygons(_ polygons: [Polygon], cell: Double, maxCells: Int = 16_384) -> [Polygon] {
        let parts = polygons.map { $0.rings.map { $0.map(mercator) } }.filter { !$0.isEmpty && !$0[0].isEmpty }
        guard !parts.isEmpty else { return [] }
        let all = parts.flatMap { $0.flatMap { $0 } }
        let extent = max((all.map(\.x).max() ?? 0) - (all.map(\.x).min() ?? 0),
                         (all.map(\.y).max() ?? 0) - (all.map(\.y).min() ?? 0))
        let wanted = max(cell, extent / Double(max(1, maxCells)), 1.0 / Double(1 << 40))
        let size = pow(2, (log2(wanted)).rounded(.down))  // a power of two: exact grid coordinates
        var grid = CellRows(cell: size)
        for part in parts { grid.fill(part) }
        grid.normalize()
        grid.removeCornerContacts()
        let rings = grid.outline().map(simplified)
        return assemble(rings, cell: size)
    }

    /// A point in Web Mercator units: x from the antimeridian eastward, y from the north, 0…1.
    struct Point: Equatable {
        var x: Double
        var y: Double
    }

    static func mercator(_ p: LngLat) -> Point {
        Point(x: (p.lng + 180) / 360, y: WebMercator.tileY(lat: p.lat, zoom: 0))
    }

    /// A grid vertex `(i, j)` in longitude and latitude (grid lines are at (i + ½) cells).
    static func lngLat(_ v: Vertex, cell: Double) -> LngLat {
        let x = min(max((Double(v.i) + 0.5) * cell, 0), 1)
        let y = min(max((Double(v.j) + 0.5) * cell, 0), 1)
        return LngLat(lng: x * 360 - 180, lat: WebMercator.lat(tileY: y, zoom: 0))
    }

    /// A grid vertex: column and row of grid lines.
    struct Vertex: Hashable {
        var i: Int
        var j: Int
    }

    /// `ring` (closed, first vertex repeated last) with unit stair steps cut on the outside and
    /// collinear vertices dropped.
    ///
    /// Rings keep the filled cells on their left (in grid coordinates, y down). A reflex vertex
    /// with a leg one cell long and convex neighbours is dropped: the triangle that adds lies in
    /// the row (or column) of empty cells along its longer leg, which no other ring enters.
    static func simplified(_ ring: [Vertex]) -> [Vertex] {
        var points = Array(ring.dropLast())
        points = withoutCollinear(points)
        let n = points.count
        guard n > 4 else { return points + [points[0]] }
        func turn(_ k: Int) -> Int {
            let a = points[(k + n - 1) % n], b = points[k], c = points[(k + 1) % n]
            return (b.i - a.i) * (c.j - b.j) - (b.j - a.j) * (c.i - b.i)
        }
        // With the filled cells on the left (grid coordinates, y down), the cross product of a
        // corner's two edges is negative where the outline turns toward them (a convex corner)
        // and positive where it turns away (a reflex one).
        var drop = [Bool](repeating: false, count: n)
        for k in 0..<n where turn(k) > 0 && turn((k + n - 1) % n) < 0 && turn((k + 1) % n) < 0 {
            let a = points[(k + n - 1) % n], b = points[k], c = points[(k + 1) % n]
            let legs = (abs(a.i - b.i) + abs(a.j - b.j), abs(c.i - b.i) + abs(c.j - b.j))
            if min(legs.0, legs.1) == 1 && !drop[(k + n - 1) % n] { drop[k] = true }
        }
        if drop[n - 1] && drop[0] { drop[n - 1] = false }
        let kept = withoutCollinear(points.indices.filter { !drop[$0] }.map { points[$0] })
        return kept + [kept[0]]
    }

    /// `points` (an open ring) without the vertices on the line through their neighbours.
    static func withoutCollinear(_ points: [Vertex]) -> [Vertex] {
        var out = points
        var changed = true
        while changed && out.count > 3 {
            changed = false
            var next: [Vertex] = []
            let n = out.count
            for k in 0..<n {
                let a = next.last ?? out[(k + n - 1) % n], b = out[k], c = out[(k + 1) % n]
                if (b.i - a.i) * (c.j - b.j) - (b.j - a.j) * (c.i - b.i) == 0 { changed = true; continue }
                next.append(b)
            }
            if next.count < 3 { break }
            out = next
        }
        return out
    }

    /// Twice the signed area of a closed ring in grid coordinates (y down): negative for shells.
    static func doubleArea(_ ring: [Vertex]) -> Int {
        zip(ring, ring.dropFirst()).reduce(0) { $0 + $1.0.i * $1.1.j - $1.1.i * $1.0.j }
    }

    /// Shells with the holes inside them, in longitude and latitude.
    static func assemble(_ rings: [[Vertex]], cell: Double) -> [Polygon] {
        var shells: [(ring: [Vertex], area: Int, holes: [[Vertex]])] = []
        var holes: [[Vertex]] = []
        for ring in rings where ring.count >= 4 {
            let area = doubleArea(ring)
            if area < 0 { shells.append((ring, -area, [])) } else if area > 0 { holes.append(ring) }
        }
        shells.sort { $0.area < $1.area }
        for hole in holes {
            // The smallest shell around a vertex of the hole holds it (rings never touch).
            if let index = shells.firstIndex(where: { contains($0.ring, hole[0]) }) { shells[index].holes.append(hole) }
        }
        shells.sort { ($0.ring[0].j, $0.ring[0].i) < ($1.ring[0].j, $1.ring[0].i) }
        return shells.map { shell in
            Polygon(rings: ([shell.ring] + shell.holes).map { $0.map { lngLat($0, cell: cell) } })
        }
    }

    /// Whether grid vertex `v` (on no edge of `ring`) is inside `ring`.
    static func contains(_ ring: [Vertex], _ v: Vertex) -> Bool {
        var inside = false
        let (px, py) = (Double(v.i) + 0.25, Double(v.j) + 0.25)  // off every grid line
        for (a, b) in zip(ring, ring.dropFirst()) where (Double(a.j) > py) != (Double(b.j) > py) {
            let x = Double(a.i) + (py - Double(a.j)) * Double(b.i - a.i) / Double(b.j - a.j)
            if px < x { inside.toggle() }
        }
        return inside
    }
}

/// The filled cells of a grid, as sorted runs of columns per row.
struct CellRows {
    let cell: Double
    /// Row → runs of filled columns (closed ranges), unsorted until `normalize`.
    var rows: [Int: [ClosedRange<Int>]] = [:]

    init(cell: Double) {
        self.cell = cell
    }

    /// The column (or row) of the cell holding coordinate `t`: cell `i` spans (i + ½)…(i + 1½) cells.
    func index(_ t: Double) -> Int {
        Int((t / cell - 0.5).rounded(.down))
    }

    /// Fills every cell the polygon (rings in Web Mercator) touches.
    mutating func fill(_ rings: [[CoveringUnion.Point]]) {
        var edges: [(CoveringUnion.Point, CoveringUnion.Point)] = []
        for ring in rings {
            for (a, b) in zip(ring, ring.dropFirst()) where a != b { edges.append((a, b)) }
            if let first = ring.first, let last = ring.last, first != last { edges.append((last, first)) }
        }
        // This polygon's runs, merged per row before they join the others' (one run per row for
        // the convex parts of a buffer), so the grid holds few runs however many parts overlap.
        var part = CellRows(cell: cell)
        part.fillRuns(edges)
        for (row, runs) in part.rows { rows[row, default: []] += Self.merged(runs) }
    }

    /// Adds the runs of the cells the polygon with these edges touches.
    private mutating func fillRuns(_ edges: [(CoveringUnion.Point, CoveringUnion.Point)]) {
        // Cells an edge passes through (a tiny margin keeps rounding on the safe side).
        let margin = cell * 1e-6
        for (a, b) in edges {
            let top = min(a.y, b.y), bottom = max(a.y, b.y)
            for row in index(top - margin)...index(bottom + margin) {
                let lower = max(top, (Double(row) + 0.5) * cell), upper = min(bottom, (Double(row) + 1.5) * cell)
                let xs = a.y == b.y ? [a.x, b.x] : [x(on: a, b, at: lower), x(on: a, b, at: upper)]
                add(row, index((xs.min() ?? 0) - margin)...index((xs.max() ?? 0) + margin))
            }
        }
        // Cells whose centre is inside (even-odd, as rings with holes are drawn): each edge adds
        // its crossing of the centre line of every row it spans.
        var crossings: [Int: [Double]] = [:]
        for (a, b) in edges where a.y != b.y {
            let low = min(a.y, b.y), high = max(a.y, b.y)
            for row in Int((low / cell - 1).rounded(.down))...Int((high / cell - 1).rounded(.up)) {
                let y = (Double(row) + 1) * cell
                if (a.y > y) != (b.y > y) { crossings[row, default: []].append(x(on: a, b, at: y)) }
            }
        }
        for (row, xs) in crossings {
            let sorted = xs.sorted()
            var k = 0
            while k + 1 < sorted.count {
                let first = Int((sorted[k] / cell - 1).rounded(.up)), last = Int((sorted[k + 1] / cell - 1).rounded(.down))
                if first <= last { add(row, first...last) }
                k += 2
            }
        }
    }

    /// The x of segment a–b (not horizontal) at height y (clamped to the segment).
    private func x(on a: CoveringUnion.Point, _ b: CoveringUnion.Point, at y: Double) -> Double {
        let t = min(max((y - a.y) / (b.y - a.y), 0), 1)
        return a.x + t * (b.x - a.x)
    }

    mutating func add(_ row: Int, _ columns: ClosedRange<Int>) {
        rows[row, default: []].append(columns)
    }

    /// Sorts each row's runs and merges those that overlap or touch.
    mutating func normalize() {
        for (row, runs) in rows { rows[row] = Self.merged(runs) }
    }

    static func merged(_ runs: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        for run in runs.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, run.lowerBound <= last.upperBound + 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, run.upperBound)
            } else {
                out.append(run)
            }
        }
        return out
    }

    /// Fills one more cell wherever two filled cells meet only at a corner, until none do.
    mutating func removeCornerContacts() {
        var changed = true
        while changed {
            changed = false
            for row in rows.keys.sorted() {
                let upper = rows[row] ?? [], lower = rows[row + 1] ?? []
                guard !upper.isEmpty, !lower.isEmpty else { continue }
                var fills: [Int] = []
                // A run above ending where one below begins, diagonally, or the mirror.
                let lowerStarts = Set(lower.map(\.lowerBound)), lowerEnds = Set(lower.map(\.upperBound))
                for run in upper {
                    if lowerStarts.contains(run.upperBound + 1) { fills.append(run.upperBound + 1) }
                    if lowerEnds.contains(run.lowerBound - 1) { fills.append(run.lowerBound - 1) }
                }
                if !fills.isEmpty {
                    rows[row] = Self.merged(upper + fills.map { $0...$0 })
                    changed = true
                }
            }
        }
    }

    /// The outline of the filled cells as closed rings of grid vertices, filled cells on the
    /// left walking in grid coordinates (y down).
    func outline() -> [[CoveringUnion.Vertex]] {
        typealias V = CoveringUnion.Vertex
        var next: [V: V] = [:]
        func edge(_ a: V, _ b: V) { next[a] = b }
        let keys = rows.keys.sorted()
        guard let first = keys.first, let last = keys.last else { return [] }
        for row in (first - 1)...last {
            let above = rows[row] ?? [], below = rows[row + 1] ?? []
            // Vertical sides of the runs of the row below.
            for run in below {
                edge(V(i: run.lowerBound, j: row + 1), V(i: run.lowerBound, j: row + 2))
                edge(V(i: run.upperBound + 1, j: row + 2), V(i: run.upperBound + 1, j: row + 1))
            }
            // The line between the two rows: filled below only (walk west), above only (walk east).
            for run in Self.difference(below, above) {
                edge(V(i: run.upperBound + 1, j: row + 1), V(i: run.lowerBound, j: row + 1))
            }
            for run in Self.difference(above, below) {
                edge(V(i: run.lowerBound, j: row + 1), V(i: run.upperBound + 1, j: row + 1))
            }
        }
        var rings: [[V]] = []
        var remaining = next
        while let start = remaining.keys.min(by: { ($0.j, $0.i) < ($1.j, $1.i) }) {
            var ring = [start]
            var current = start
            while let to = remaining.removeValue(forKey: current) {
                ring.append(to)
                current = to
                if to == start { break }
            }
            if ring.count >= 4, ring.last == start { rings.append(ring) }
        }
        return rings
    }

    /// The columns in `a` and not in `b` (both sorted, merged runs).
    static func difference(_ a: [ClosedRange<Int>], _ b: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        var k = 0
        for run in a {
            var start = run.lowerBound
            while k < b.count && b[k].upperBound < start { k += 1 }
            var m = k
            while start <= run.upperBound {
                guard m < b.count, b[m].lowerBound <= run.upperBound else {
                    out.append(start...run.upperBound)
                    break
                }
                if b[m].lowerBound > start { out.append(start...(b[m].lowerBound - 1)) }
                start = max(start, b[m].upperBound + 1)
                m += 1
            }
        }
        return out
    }
}
