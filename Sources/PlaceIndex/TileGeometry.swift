import Foundation
import TileMath

/// A position in world units: Web Mercator at zoom 0, `x` east from the antimeridian and `y` south
/// from the northern limit, both in 0...1 (buffers may reach a little past).
struct WorldPoint: Hashable, Comparable {
    var x: Double
    var y: Double

    static func < (a: WorldPoint, b: WorldPoint) -> Bool { (a.x, a.y) < (b.x, b.y) }

    func distance(to other: WorldPoint) -> Double { hypot(x - other.x, y - other.y) }

    /// The geographic position (rounded to 1e-7°, about a centimetre, so output is stable).
    var lngLat: LngLat {
        let lng = x * 360 - 180
        let lat = WebMercator.lat(tileY: y, zoom: 0)
        return LngLat(lng: (lng * 1e7).rounded() / 1e7, lat: (lat * 1e7).rounded() / 1e7)
    }

    init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    init(_ p: LngLat) {
        x = WebMercator.tileX(lng: p.lng, zoom: 0)
        y = WebMercator.tileY(lat: p.lat, zoom: 0)
    }
}

/// A feature's geometry decoded from its MVT commands into world units.
enum DecodedGeometry {
    /// One or more points.
    case points([WorldPoint])
    /// One or more line strings, each cut to the tile's own square (no buffer), so that the
    /// pieces of one street in neighbouring tiles meet end to end on the shared edge.
    case lines([[WorldPoint]])
    /// One or more polygons, each an exterior ring followed by its holes (buffer kept: a buffered
    /// polygon is still part of the real one).
    case polygons([[[WorldPoint]]])
}

/// Decodes MVT 2.1 geometry (§4.3): command integers `id | count << 3` (MoveTo 1, LineTo 2,
/// ClosePath 7), zigzag-encoded deltas from a cursor that starts at (0, 0) for each feature.
enum TileGeometry {
    /// The geometry of a feature of type `type` (1 point, 2 line, 3 polygon) in `tile`, or nil
    /// when it is broken: an unknown command, a count past the end, a LineTo before any MoveTo, a
    /// line of fewer than two distinct points, a ring of fewer than three or of zero area, a
    /// coordinate more than a tile's width outside the tile, or an unknown geometry type.
    static func decode(_ commands: [UInt32], type: Int, tile: TileID, extent: Int) -> DecodedGeometry? {
        guard extent > 0, !commands.isEmpty else { return nil }
        var paths: [(points: [(Int, Int)], closed: Bool)] = []
        var cx = 0, cy = 0
        var i = 0
        while i < commands.count {
            let command = commands[i] & 7
            let count = Int(commands[i] >> 3)
            i += 1
            switch command {
            case 1, 2:
                guard count > 0, count <= (commands.count - i) / 2 else { return nil }
                if command == 2 && paths.isEmpty { return nil }
                for _ in 0..<count {
                    cx += zigzag(commands[i])
                    cy += zigzag(commands[i + 1])
                    i += 2
                    guard abs(cx) <= 2 * extent, abs(cy) <= 2 * extent else { return nil }
                    if command == 1 { paths.append(([(cx, cy)], false)) } else { paths[paths.count - 1].points.append((cx, cy)) }
                }
            case 7:
                guard count == 1, !paths.isEmpty else { return nil }
                paths[paths.count - 1].closed = true
            default:
                return nil
            }
        }
        let scale = Double(1 << tile.z)
        func world(_ p: (Int, Int)) -> WorldPoint {
            WorldPoint(x: (Double(tile.x) + Double(p.0) / Double(extent)) / scale,
                       y: (Double(tile.y) + Double(p.1) / Double(extent)) / scale)
        }
        switch type {
        case 1:
            guard paths.allSatisfy({ $0.points.count == 1 && !$0.closed }) else { return nil }
            return .points(paths.map { world($0.points[0]) })
        case 2:
            var lines: [[WorldPoint]] = []
            for path in paths {
                var distinct: [(Int, Int)] = []
                for p in path.points where distinct.last.map({ $0 != p }) ?? true { distinct.append(p) }
                guard distinct.count >= 2 else { return nil }
                lines += clip(distinct, extent: extent).map { $0.map { TileGeometry.world($0, tile: tile, extent: extent) } }
            }
            // A line wholly in the buffer belongs to the neighbouring tile: nothing here.
            return .lines(lines)
        case 3:
            var polygons: [[[WorldPoint]]] = []
            var exteriorSign = 0.0
            for path in paths {
                guard path.closed, path.points.count >= 3 else { return nil }
                let area = signedArea(path.points)
                guard area != 0 else { return nil }
                if exteriorSign == 0 { exteriorSign = area > 0 ? 1 : -1 }
                let ring = path.points.map(world)
                if area * exteriorSign > 0 {
                    polygons.append([ring])
                } else {
                    polygons[polygons.count - 1].append(ring)
                }
            }
            return .polygons(polygons)
        default:
            return nil
        }
    }

    static func zigzag(_ value: UInt32) -> Int {
        Int(Int32(bitPattern: (value >> 1) ^ (0 &- (value & 1))))
    }

    /// Twice the surveyor's-formula area in tile coordinates (positive for an MVT exterior ring).
    static func signedArea(_ ring: [(Int, Int)]) -> Double {
        var sum = 0.0
        for k in ring.indices {
            let a = ring[k], b = ring[(k + 1) % ring.count]
            sum += Double(a.0) * Double(b.1) - Double(b.0) * Double(a.1)
        }
        return sum
    }

    /// The parts of a polyline inside the square 0...extent (Liang–Barsky per segment), as
    /// fractional tile coordinates in tile units.
    static func clip(_ line: [(Int, Int)], extent: Int) -> [[(Double, Double)]] {
        let e = Double(extent)
        var parts: [[(Double, Double)]] = []
        var current: [(Double, Double)] = []
        for k in 0..<(line.count - 1) {
            let x0 = Double(line[k].0), y0 = Double(line[k].1)
            let dx = Double(line[k + 1].0) - x0, dy = Double(line[k + 1].1) - y0
            var t0 = 0.0, t1 = 1.0
            var inside = true
            for (p, q) in [(-dx, x0), (dx, e - x0), (-dy, y0), (dy, e - y0)] {
                if p == 0 {
                    if q < 0 { inside = false }
                } else {
                    let r = q / p
                    if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
                }
            }
            guard inside, t0 < t1 else {
                if current.count >= 2 { parts.append(current) }
                current = []
                continue
            }
            let a = (x0 + t0 * dx, y0 + t0 * dy), b = (x0 + t1 * dx, y0 + t1 * dy)
            if let last = current.last, last == a {
                current.append(b)
            } else {
                if current.count >= 2 { parts.append(current) }
                current = [a, b]
            }
            if t1 < 1 {
                parts.append(current)
                current = []
            }
        }
        if current.count >= 2 { parts.append(current) }
        return parts
    }
}

extension TileGeometry {
    /// World points of fractional tile coordinates.
    static func world(_ p: (Double, Double), tile: TileID, extent: Int) -> WorldPoint {
        let scale = Double(1 << tile.z)
        return WorldPoint(x: (Double(tile.x) + p.0 / Double(extent)) / scale,
                          y: (Double(tile.y) + p.1 / Double(extent)) / scale)
    }
}
