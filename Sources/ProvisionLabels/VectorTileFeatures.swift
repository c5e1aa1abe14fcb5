import Foundation
import ProvisionCodecs

/// One feature of a vector tile layer, as expressions see it.
public struct TileFeature: Sendable {
    /// The feature's properties (keys and values resolved through the layer's tables).
    public var properties: [String: ExpressionValue]
    /// The MVT geometry type: 1 point, 2 line string, 3 polygon, 0 unknown.
    public var geometryType: Int
    /// The feature id, when it has one.
    public var id: UInt64?

    /// A feature with the given parts.
    public init(properties: [String: ExpressionValue], geometryType: Int, id: UInt64? = nil) {
        self.properties = properties
        self.geometryType = geometryType
        self.id = id
    }

    /// `geometry-type` (and a legacy filter's `$type`): "Point", "LineString", "Polygon" or "Unknown".
    public var geometryTypeName: String {
        switch geometryType {
        case 1: return "Point"
        case 2: return "LineString"
        case 3: return "Polygon"
        default: return "Unknown"
        }
    }
}

/// Reads the features of a Mapbox Vector Tile 2.1 (layers = 3; a layer's name = 1, features = 2,
/// keys = 3, values = 4; a feature's id = 1, tags = 2, type = 3; a value's string 1, float 2,
/// double 3, int64 4, uint64 5, sint64 6, bool 7), without their geometry.
public enum VectorTileFeatures {
    /// Calls `body` with the name and each feature of every layer whose name is in `layers`, in
    /// tile order. One layer's key and value tables are held at a time.
    ///
    /// - Throws: `ProtobufReader.Malformed` when the bytes are not a vector tile.
    public static func forEachFeature(in data: Data, layers: Set<String>,
                                      _ body: (String, TileFeature) throws -> Void) throws {
        try data.withUnsafeBytes { bytes in
            var tile = ProtobufReader(bytes)
            while let field = try tile.nextField() {
                guard field.number == 3, field.wireType == 2, let layer = field.payload else {
                    throw ProtobufReader.Malformed(description: "top-level field \(field.number) is not a layer")
                }
                try readLayer(bytes, layer, wanted: layers, body)
            }
        }
    }

    private static func readLayer(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, wanted: Set<String>,
                                  _ body: (String, TileFeature) throws -> Void) throws {
        var reader = ProtobufReader(bytes, range: range)
        var name: String?
        while let field = try reader.nextField() {
            if field.number == 1, let payload = field.payload {
                name = reader.string(payload)
                break
            }
        }
        guard let name, wanted.contains(name) else { return }
        var keys: [String] = []
        var values: [ExpressionValue] = []
        var features: [Range<Int>] = []
        reader = ProtobufReader(bytes, range: range)
        while let field = try reader.nextField() {
            guard let payload = field.payload else { continue }
            switch field.number {
            case 2: features.append(payload)
            case 3: keys.append(reader.string(payload))
            case 4: values.append(try value(bytes, payload))
            default: continue
            }
        }
        for feature in features {
            try body(name, try readFeature(bytes, feature, keys: keys, values: values))
        }
    }

    private static func readFeature(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, keys: [String],
                                    values: [ExpressionValue]) throws -> TileFeature {
        var feature = TileFeature(properties: [:], geometryType: 0)
        var reader = ProtobufReader(bytes, range: range)
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, 0): feature.id = field.value
            case (3, 0): feature.geometryType = Int(field.value)
            case (2, 2):
                guard let tags = field.payload else { continue }
                var pairs = ProtobufReader(bytes, range: tags)
                while !pairs.isAtEnd {
                    let k = try pairs.varint()
                    guard !pairs.isAtEnd else { throw ProtobufReader.Malformed(description: "odd number of tag indexes") }
                    let v = try pairs.varint()
                    guard k < UInt64(keys.count), v < UInt64(values.count) else {
                        throw ProtobufReader.Malformed(description: "tag index past the layer's keys or values")
                    }
                    feature.properties[keys[Int(k)]] = values[Int(v)]
                }
            default:
                continue
            }
        }
        return feature
    }

    private static func value(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> ExpressionValue {
        var reader = ProtobufReader(bytes, range: range)
        var result = ExpressionValue.null
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, 2): if let payload = field.payload { result = .string(reader.string(payload)) }
            case (2, 5): result = .number(Double(Float(bitPattern: UInt32(truncatingIfNeeded: field.value))))
            case (3, 1): result = .number(Double(bitPattern: field.value))
            case (4, 0): result = .number(Double(Int64(bitPattern: field.value)))
            case (5, 0): result = .number(Double(field.value))
            case (6, 0):
                let zigzag = field.value
                result = .number(Double(Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))))
            case (7, 0): result = .bool(field.value != 0)
            default: continue
            }
        }
        return result
    }
}
