import Foundation

/// Writes Mapbox Vector Tile 2.1 messages field by field, so tests can build valid tiles and
/// damage exactly one thing in them.
struct VectorTileEncoder {
    /// One Value message.
    enum Value {
        case string(String), float(Float), double(Double), int(Int64), uint(UInt64), sint(Int64), bool(Bool)

        /// The Value message bytes: exactly one field.
        var message: PB {
            var pb = PB()
            switch self {
            case .string(let s): pb.string(1, s)
            case .float(let f): pb.key(2, 5); pb.bytes.append(contentsOf: withUnsafeBytes(of: f.bitPattern.littleEndian, Array.init))
            case .double(let d): pb.key(3, 1); pb.bytes.append(contentsOf: withUnsafeBytes(of: d.bitPattern.littleEndian, Array.init))
            case .int(let i): pb.varint(4, UInt64(bitPattern: i))
            case .uint(let u): pb.varint(5, u)
            case .sint(let i): pb.varint(6, UInt64(bitPattern: (i << 1) ^ (i >> 63)))
            case .bool(let b): pb.varint(7, b ? 1 : 0)
            }
            return pb
        }
    }

    /// One feature: tag index pairs, a geometry type and its command stream.
    struct Feature {
        var id: UInt64? = nil
        var tags: [UInt32] = []
        var type: UInt64 = 3
        var geometry: [UInt32] = []

        /// The Feature message bytes.
        var message: PB {
            var pb = PB()
            if let id { pb.varint(1, id) }
            if !tags.isEmpty { pb.packed(2, tags.map(UInt64.init)) }
            pb.varint(3, type)
            pb.packed(4, geometry.map(UInt64.init))
            return pb
        }
    }

    /// One layer.
    struct Layer {
        var name: String
        var keys: [String] = []
        var values: [Value] = []
        var features: [Feature] = []
        var extent: UInt64 = 4096
        var version: UInt64 = 2

        /// The Layer message bytes, in the order the spec lists the fields.
        var message: PB {
            var pb = PB()
            pb.varint(15, version)
            pb.string(1, name)
            for feature in features { pb.message(2, feature.message) }
            for key in keys { pb.string(3, key) }
            for value in values { pb.message(4, value.message) }
            pb.varint(5, extent)
            return pb
        }
    }

    /// The tile bytes of `layers`.
    static func tile(_ layers: [Layer]) -> Data {
        var tile = PB()
        for layer in layers { tile.message(3, layer.message) }
        return tile.bytes
    }

    /// A command integer.
    static func command(_ id: UInt32, count: UInt32) -> UInt32 { id & 7 | count << 3 }

    /// A zigzag-encoded parameter integer.
    static func zigzag(_ n: Int32) -> UInt32 { UInt32(bitPattern: (n << 1) ^ (n >> 31)) }

    /// A closed ring of `points` relative moves as a polygon command stream.
    static func ring(_ points: [(Int32, Int32)]) -> [UInt32] {
        guard let first = points.first else { return [] }
        var stream = [command(1, count: 1), zigzag(first.0), zigzag(first.1), command(2, count: UInt32(points.count - 1))]
        for (dx, dy) in points.dropFirst() { stream += [zigzag(dx), zigzag(dy)] }
        return stream + [command(7, count: 1)]
    }

    /// A tile of about `targetBytes` that looks like real data: three layers (buildings
    /// polygons, roads lines, places points) with shared keys and values.
    static func realistic(targetBytes: Int = 15_000) -> Data {
        var buildings = Layer(name: "building", keys: ["height", "class"],
                              values: [.double(12.5), .string("house"), .string("garage"), .int(3)])
        var roads = Layer(name: "transportation", keys: ["class", "oneway", "name"],
                          values: [.string("primary"), .bool(true), .string("High Street"), .uint(7)])
        var places = Layer(name: "place", keys: ["name", "rank"], values: [.string("Old Town"), .sint(-4), .float(1.5)])
        var n: Int32 = 0
        while n % 8 != 0 || tile([buildings, roads, places]).count < targetBytes {
            n += 1
            let size = 8 + n % 40
            buildings.features.append(Feature(id: UInt64(n), tags: [0, UInt32(n % 4 == 0 ? 0 : 3), 1, UInt32(1 + n % 2)],
                                              geometry: ring([(n * 13 % 4000, n * 7 % 4000), (size, 0), (0, size), (-size, 0)])))
            if n % 2 == 0 {
                var line = [command(1, count: 1), zigzag(n % 4000), zigzag(n * 3 % 4000), command(2, count: 6)]
                for step in 0..<6 { line += [zigzag(Int32(step * 17 - 40)), zigzag(Int32(25 - step * 9))] }
                roads.features.append(Feature(id: UInt64(n), tags: [0, 0, 1, 1, 2, 2], type: 2, geometry: line))
            }
            if n % 5 == 0 {
                places.features.append(Feature(tags: [0, 0, 1, 1], type: 1,
                                               geometry: [command(1, count: 1), zigzag(n), zigzag(-n)]))
            }
        }
        return tile([buildings, roads, places])
    }
}

extension PB {
    /// A packed repeated varint field.
    mutating func packed(_ field: Int, _ values: [UInt64]) {
        var inner = PB()
        for value in values { inner.writeVarint(value) }
        bytesField(field, inner.bytes)
    }
}
