import Foundation
import TileMath

/// A property value of a test feature.
public enum TestValue: Sendable {
    case string(String)
    case int(Int)
}

/// The geometry of a test feature, in degrees (true positions), or raw commands for broken input.
public enum TestGeometry: Sendable {
    case point(LngLat)
    case line([LngLat])
    /// Rings, the exterior first; winding is fixed by the encoder.
    case polygon([[LngLat]])
    /// Command integers written as given, with the MVT geometry type.
    case raw(type: Int, commands: [UInt32])
}

/// A named feature of the test world: which layer it is in and from which zoom on it appears.
public struct TestFeature: Sendable {
    public var layer: String
    public var properties: [String: TestValue]
    public var geometry: TestGeometry
    public var minZoom: Int = 0

    /// A feature of `layer` with these properties and geometry, shown from `minZoom` on.
    public init(layer: String, properties: [String: TestValue], geometry: TestGeometry, minZoom: Int = 0) {
        self.layer = layer
        self.properties = properties
        self.geometry = geometry
        self.minZoom = minZoom
    }
}

/// Writes Mapbox Vector Tiles 2.1 from the specification (github.com/mapbox/vector-tile-spec,
/// vector_tile.proto): geometry clipped to the tile and its buffer, rounded to the extent's grid,
/// exterior rings with positive surveyor's area in tile coordinates and holes negative.
public enum VectorTileEncoder {
    public static func encode(_ tile: TileID, features: [TestFeature], extent: Int = 4096, buffer: Int = 64) -> Data {
        var layers: [String: [TestFeature]] = [:]
        for f in features where f.minZoom <= tile.z { layers[f.layer, default: []].append(f) }
        var out = Data()
        for name in layers.keys.sorted() {
            var keys: [String] = [], values: [String] = [], valueBytes: [Data] = []
            var featureMessages: [Data] = []
            for feature in layers[name]! {
                guard let (type, commands) = geometry(feature.geometry, tile: tile, extent: extent, buffer: buffer) else { continue }
                var tags: [UInt64] = []
                for key in feature.properties.keys.sorted() {
                    let (valueKey, bytes) = valueMessage(feature.properties[key]!)
                    let k = keys.firstIndex(of: key) ?? { keys.append(key); return keys.count - 1 }()
                    let v = values.firstIndex(of: valueKey) ?? { values.append(valueKey); valueBytes.append(bytes); return values.count - 1 }()
                    tags += [UInt64(k), UInt64(v)]
                }
                var message = Data()
                message += field(2, packed(tags))
                message += varintField(3, UInt64(type))
                message += field(4, packed(commands.map(UInt64.init)))
                featureMessages.append(message)
            }
            guard !featureMessages.isEmpty else { continue }
            var layer = varintField(15, 2)
            layer += field(1, Data(name.utf8))
            for m in featureMessages { layer += field(2, m) }
            for k in keys { layer += field(3, Data(k.utf8)) }
            for v in valueBytes { layer += field(4, v) }
            layer += varintField(5, UInt64(extent))
            out += field(3, layer)
        }
        return out
    }

    /// Tile coordinates (fractional) of a position.
    public static func local(_ p: LngLat, _ tile: TileID, _ extent: Int) -> (Double, Double) {
        ((WebMercator.tileX(lng: p.lng, zoom: tile.z) - Double(tile.x)) * Double(extent),
         (WebMercator.tileY(lat: p.lat, zoom: tile.z) - Double(tile.y)) * Double(extent))
    }

    public static func geometry(_ g: TestGeometry, tile: TileID, extent: Int, buffer: Int) -> (Int, [UInt32])? {
        let lo = Double(-buffer), hi = Double(extent + buffer)
        var commands: [UInt32] = []
        var cursor = (0, 0)
        func move(_ points: [(Int, Int)], lineTo: Bool, close: Bool) {
            commands.append(command(1, 1))
            commands += delta(points[0], &cursor)
            if points.count > 1 {
                commands.append(command(2, points.count - 1))
                for p in points.dropFirst() { commands += delta(p, &cursor) }
            }
            if close { commands.append(command(7, 1)) }
        }
        switch g {
        case .raw(let type, let raw):
            return (type, raw)
        case .point(let p):
            let (x, y) = local(p, tile, extent)
            guard x >= lo, x <= hi, y >= lo, y <= hi else { return nil }
            move([(Int(x.rounded()), Int(y.rounded()))], lineTo: false, close: false)
            return (1, commands)
        case .line(let line):
            let points = line.map { local($0, tile, extent) }
            for part in clipLine(points, lo: lo, hi: hi) {
                let rounded = dedup(part.map { (Int($0.0.rounded()), Int($0.1.rounded())) })
                if rounded.count >= 2 { move(rounded, lineTo: true, close: false) }
            }
            return commands.isEmpty ? nil : (2, commands)
        case .polygon(let rings):
            for (index, ring) in rings.enumerated() {
                var clipped = dedup(clipRing(ring.map { local($0, tile, extent) }, lo: lo, hi: hi)
                    .map { (Int($0.0.rounded()), Int($0.1.rounded())) })
                if clipped.count > 1, clipped.first! == clipped.last! { clipped.removeLast() }
                guard clipped.count >= 3 else {
                    if index == 0 { return nil } else { continue }
                }
                let area = surveyor(clipped)
                if area == 0 { if index == 0 { return nil } else { continue } }
                if (index == 0) != (area > 0) { clipped.reverse() }
                move(clipped, lineTo: true, close: true)
            }
            return commands.isEmpty ? nil : (3, commands)
        }
    }

    public static func surveyor(_ ring: [(Int, Int)]) -> Double {
        var s = 0.0
        for k in ring.indices {
            let a = ring[k], b = ring[(k + 1) % ring.count]
            s += Double(a.0) * Double(b.1) - Double(b.0) * Double(a.1)
        }
        return s
    }

    public static func dedup(_ points: [(Int, Int)]) -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        for p in points where out.last.map({ $0 != p }) ?? true { out.append(p) }
        return out
    }

    public static func clipLine(_ line: [(Double, Double)], lo: Double, hi: Double) -> [[(Double, Double)]] {
        var parts: [[(Double, Double)]] = []
        var current: [(Double, Double)] = []
        for k in 0..<(line.count - 1) {
            let (x0, y0) = line[k]
            let dx = line[k + 1].0 - x0, dy = line[k + 1].1 - y0
            var t0 = 0.0, t1 = 1.0, inside = true
            for (p, q) in [(-dx, x0 - lo), (dx, hi - x0), (-dy, y0 - lo), (dy, hi - y0)] {
                if p == 0 { if q < 0 { inside = false } } else {
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
            if let last = current.last, last == a { current.append(b) } else {
                if current.count >= 2 { parts.append(current) }
                current = [a, b]
            }
            if t1 < 1 { parts.append(current); current = [] }
        }
        if current.count >= 2 { parts.append(current) }
        return parts
    }

    /// Sutherland–Hodgman against the four edges of the square lo...hi.
    public static func clipRing(_ ring: [(Double, Double)], lo: Double, hi: Double) -> [(Double, Double)] {
        var points = ring
        let edges: [((Double, Double)) -> Double] = [{ $0.0 - lo }, { hi - $0.0 }, { $0.1 - lo }, { hi - $0.1 }]
        for inside in edges {
            guard !points.isEmpty else { break }
            var out: [(Double, Double)] = []
            for k in points.indices {
                let a = points[k], b = points[(k + 1) % points.count]
                let da = inside(a), db = inside(b)
                if da >= 0 { out.append(a) }
                if (da >= 0) != (db >= 0) {
                    let t = da / (da - db)
                    out.append((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t))
                }
            }
            points = out
        }
        return points
    }

    public static func command(_ id: UInt32, _ count: Int) -> UInt32 { id | UInt32(count) << 3 }

    public static func delta(_ p: (Int, Int), _ cursor: inout (Int, Int)) -> [UInt32] {
        let d = (p.0 - cursor.0, p.1 - cursor.1)
        cursor = p
        return [zigzag(d.0), zigzag(d.1)]
    }

    public static func zigzag(_ n: Int) -> UInt32 { UInt32(bitPattern: Int32((n << 1) ^ (n >> 31))) }

    public static func valueMessage(_ v: TestValue) -> (String, Data) {
        switch v {
        case .string(let s): return ("s" + s, field(1, Data(s.utf8)))
        case .int(let i): return ("i\(i)", varintField(4, UInt64(bitPattern: Int64(i))))
        }
    }

    public static func varint(_ value: UInt64) -> Data {
        var v = value
        var out = Data()
        while v >= 0x80 {
            out.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    public static func field(_ number: Int, _ payload: Data) -> Data {
        varint(UInt64(number << 3 | 2)) + varint(UInt64(payload.count)) + payload
    }

    public static func varintField(_ number: Int, _ value: UInt64) -> Data { varint(UInt64(number << 3)) + varint(value) }

    public static func packed(_ values: [UInt64]) -> Data { values.reduce(into: Data()) { $0 += varint($1) } }
}
