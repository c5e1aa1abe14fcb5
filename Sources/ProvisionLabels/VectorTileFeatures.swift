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
    /// The geometry's command integers (MoveTo, LineTo, ClosePath and zigzag parameters), only
    /// when `forEachFeature` was asked for them; empty otherwise.
    public var geometry: [UInt32] = []
    /// The layer's extent (tile units per side, 4096 when the layer does not say).
    public var extent: Int = 4096

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
/// double 3, int64 4, uint64 5, sint64 6, bool 7; a layer's extent = 5, a feature's geometry = 4),
/// with their geometry's command integers only when asked.
public enum VectorTileFeatures {
    /// Calls `body` with the name and each feature of every layer whose name is in `layers`, in
    /// tile order. One layer's key and value tables are held at a time. With `geometry`, each
    /// feature carries its geometry's command integers and its layer's extent (the place index
    /// decodes them); without, geometry is skipped.
    ///
    /// - Throws: `ProtobufReader.Malformed` when the bytes are not a vector tile.
    public static func forEachFeature(in data: Data, layers: Set<String>, geometry: Bool = false,
                                      _ body: (String, TileFeature) throws -> Void) throws {
        try data.withUnsafeBytes { bytes in
            var tile = ProtobufReader(bytes)
            while let field = try tile.nextField() {
                guard field.number == 3, field.wireType == 2, let layer = field.payload else {
                    throw ProtobufReader.Malformed(description: "top-level field \(field.number) is not a layer")
                }
                try readLayer(bytes, layer, wanted: layers, geometry: geometry, body)
            }
        }
    }

    private static func readLayer(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, wanted: Set<String>,
                                  geometry: Bool, _ body: (String, TileFeature) throws -> Void) throws {
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
        var extent = 4096
        reader = ProtobufReader(bytes, range: range)
        while let field = try reader.nextField() {
            if field.number == 5, field.wireType == 0 { extent = Int(clamping: field.value) }
            guard let payload = field.payload else { continue }
            switch field.number {
            case 2: features.append(payload)
            case 3: keys.append(reader.string(payload))
            case 4: values.append(try value(bytes, payload))
            default: continue
            }
        }
        for feature in features {
            var decoded = try readFeature(bytes, feature, keys: keys, values: values, geometry: geometry)
            decoded.extent = extent
            try body(name, decoded)
        }
    }

    private static func readFeature(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, keys: [String],
                                    values: [ExpressionValue], geometry: Bool) throws -> TileFeature {
        var feature = TileFeature(properties: [:], geometryType: 0)
        var reader = ProtobufReader(bytes, range: range)
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, 0): feature.id = field.value
            case (3, 0): feature.geometryType = Int(field.value)
            case (4, 2):
                guard geometry, let payload = field.payload else { continue }
                var commands = ProtobufReader(bytes, range: payload)
                while !commands.isAtEnd {
                    feature.geometry.append(UInt32(truncatingIfNeeded: try commands.varint()))
                }
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
