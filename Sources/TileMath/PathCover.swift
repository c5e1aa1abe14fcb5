import Foundation

/// The tiles that lines and points pass through at one zoom, as sorted columns.
///
/// Semantics: tiles are half-open squares `[x, x+1) × [y, y+1)` in fractional tile coordinates
/// (``WebMercator``), the rule bbox and polygon covers use for their west and north edges, so
/// every point of a line or a point position belongs to exactly one tile: a line running along a
/// tile boundary belongs to the tiles east or south of it, and a line through a tile corner to the
/// tile whose north-west corner it is. Segments are straight in Mercator space, as MapLibre draws
/// them. Longitudes are not wrapped: a line crossing the antimeridian must be split at ±180 (RFC
/// 7946 §3.1.9); a position at longitude 180 or at the southern limit belongs to the last column or row.
///
/// Memory is the number of tiles covered, which for a line grows with its length in tiles (a
/// 1,000 km route at z16 is about 1,700 tiles), not with the area around it.
enum PathCover {
    /// The columns, west to east, each with sorted, disjoint, non-adjacent row ranges.
    static func columns(lines: [[LngLat]], points: [LngLat], zoom: Int) -> [TileCover.Column] {
        let n = 1 << zoom
        var rowsByColumn: [Int: [ClosedRange<Int>]] = [:]
        func add(_ x: Int, _ rows: ClosedRange<Int>) {
            let column = Swift.min(Swift.max(x, 0), n - 1)
            let clamped = Swift.max(rows.lowerBound, 0)...Swift.min(rows.upperBound, n - 1)
            rowsByColumn[column, default: []].append(clamped)
        }
        func project(_ p: LngLat) -> (x: Double, y: Double) {
            (WebMercator.tileX(lng: p.lng, zoom: zoom), WebMercator.tileY(lat: p.lat, zoom: zoom))
        }
        for point in points {
            let p = project(point)
            add(Int(floor(p.x)), Int(floor(p.y))...Int(floor(p.y)))
        }
        for line in lines {
            let projected = line.map(project)
            if projected.count == 1, let p = projected.first { add(Int(floor(p.x)), Int(floor(p.y))...Int(floor(p.y))) }
            for (a, b) in zip(projected, projected.dropFirst()) {
                for (x, rows) in segmentCells(a, b) { add(x, rows) }
            }
        }
        return rowsByColumn.keys.sorted().map { x in
            TileCover.Column(x: x, rows: merged(rowsByColumn[x] ?? []))
        }
    }

    /// Per column, the rows that the closed segment a–b passes through.
    static func segmentCells(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> [(Int, ClosedRange<Int>)] {
        let dx = b.x - a.x, dy = b.y - a.y
        func rows(_ low: Double, _ high: Double, highOpen: Bool) -> ClosedRange<Int>? {
            let first = Int(floor(low))
            let last = highOpen && high == floor(high) ? Int(high) - 1 : Int(floor(high))
            return first <= last ? first...last : nil
        }
        if dx == 0 {
            return rows(Swift.min(a.y, b.y), Swift.max(a.y, b.y), highOpen: false).map { [(Int(floor(a.x)), $0)] } ?? []
        }
        var out: [(Int, ClosedRange<Int>)] = []
        for k in Int(floor(Swift.min(a.x, b.x)))...Int(floor(Swift.max(a.x, b.x))) {
            // The part of the segment with k <= x < k + 1, as a parameter interval [t0, t1].
            let tAtK = (Double(k) - a.x) / dx, tAtNext = (Double(k + 1) - a.x) / dx
            var t0: Double, t1: Double, open0 = false, open1 = false
            if dx > 0 {
                t0 = Swift.max(0, tAtK)
                t1 = tAtNext <= 1 ? tAtNext : 1
                open1 = tAtNext <= 1
            } else {
                t0 = tAtNext >= 0 ? tAtNext : 0
                open0 = tAtNext >= 0
                t1 = Swift.min(1, tAtK)
            }
            guard t0 < t1 || (t0 == t1 && !open0 && !open1) else { continue }
            let y0 = a.y + t0 * dy, y1 = a.y + t1 * dy
            let (low, high, highOpen) = y0 <= y1 ? (y0, y1, open1) : (y1, y0, open0)
            if let range = rows(low, high, highOpen: highOpen && low < high) { out.append((k, range)) }
        }
        return out
    }

    /// Sorted, disjoint, non-adjacent half-open ranges from closed ones.
    static func merged(_ ranges: [ClosedRange<Int>]) -> [Range<Int>] {
        var out: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound..<Swift.max(last.upperBound, range.upperBound + 1)
            } else {
                out.append(range.lowerBound..<(range.upperBound + 1))
            }
        }
        return out
    }
}
