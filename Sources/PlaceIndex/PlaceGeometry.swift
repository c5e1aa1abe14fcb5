import Foundation

/// Plane geometry on world points: ring tests, interior points, positions along lines.
enum PlaceGeometry {
    /// Whether `p` is inside the polygon (exterior ring then holes), by the even-odd rule.
    static func contains(_ polygon: [[WorldPoint]], _ p: WorldPoint) -> Bool {
        var inside = false
        for ring in polygon {
            var j = ring.count - 1
            for i in ring.indices {
                let a = ring[i], b = ring[j]
                if (a.y > p.y) != (b.y > p.y), p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                j = i
            }
        }
        return inside
    }

    /// The absolute area of a polygon (exterior minus holes).
    static func area(_ polygon: [[WorldPoint]]) -> Double {
        var total = 0.0
        for (index, ring) in polygon.enumerated() {
            var sum = 0.0
            for k in ring.indices {
                let a = ring[k], b = ring[(k + 1) % ring.count]
                sum += a.x * b.y - b.x * a.y
            }
            total += index == 0 ? abs(sum) / 2 : -abs(sum) / 2
        }
        return total
    }

    /// A point inside the polygon, never outside: on each of a few horizontal lines through the
    /// ring's box, the crossings with every ring are sorted and paired (even-odd), and the middle
    /// of the widest inside interval of all lines is taken. Nil only for a degenerate polygon.
    static func interiorPoint(_ polygon: [[WorldPoint]]) -> WorldPoint? {
        guard let exterior = polygon.first, !exterior.isEmpty else { return nil }
        let minY = exterior.map(\.y).min()!, maxY = exterior.map(\.y).max()!
        var best: (width: Double, point: WorldPoint)?
        let lines = 15
        for k in 0..<lines {
            // Odd sixteenths avoid running exactly through vertices on a regular grid.
            let y = minY + (maxY - minY) * (Double(2 * k + 1) / Double(2 * lines))
            var crossings: [Double] = []
            for ring in polygon {
                var j = ring.count - 1
                for i in ring.indices {
                    let a = ring[i], b = ring[j]
                    if (a.y > y) != (b.y > y) { crossings.append((b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x) }
                    j = i
                }
            }
            crossings.sort()
            var index = 0
            while index + 1 < crossings.count {
                let width = crossings[index + 1] - crossings[index]
                if width > (best?.width ?? 0) {
                    best = (width, WorldPoint(x: (crossings[index] + crossings[index + 1]) / 2, y: y))
                }
                index += 2
            }
        }
        return best?.point
    }

    /// The length of a polyline.
    static func length(_ line: [WorldPoint]) -> Double {
        zip(line, line.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
    }

    /// The point at half the lines' total length, walking them in the order given: a point on
    /// a segment of the feature.
    static func midpoint(_ lines: [[WorldPoint]]) -> WorldPoint {
        var remaining = lines.reduce(0) { $0 + length($1) } / 2
        for line in lines {
            for (a, b) in zip(line, line.dropFirst()) {
                let d = a.distance(to: b)
                if d > 0, remaining <= d {
                    let t = remaining / d
                    return WorldPoint(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t)
                }
                remaining -= d
            }
        }
        return lines[lines.count - 1].last!
    }
}
