import Foundation
import ProvisionCodecs

/// The structural check of a Mapbox Vector Tile 2.1 that MapLibre's tile parser relies on.
///
/// A tile is repeated `layers = 3`. A layer has `version = 15` and `name = 1`, `keys = 3`
/// (strings), `values = 4` (Value messages with exactly one of string 1, float 2, double 3,
/// int64 4, uint64 5, sint64 6, bool 7), `extent = 5` and `features = 2`. A feature has
/// `id = 1`, `tags = 2` (packed key/value index pairs, each index below the layer's key or value
/// count), `type = 3` (0...3) and `geometry = 4` (a packed command stream of MoveTo 1, LineTo 2
/// and ClosePath 7 whose parameters are all there). Known fields of the wrong wire type are
/// refused; unknown fields inside a layer, feature or value are skipped, as the parser does.
/// Every integer of the tile is read once, nothing is allocated.
enum VectorTileCheck {
    /// Why `data` is not a usable vector tile, or nil when it is. Empty data is not checked here.
    static func problem(_ data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            var tile = ProtobufReader(bytes)
            var layerNumber = 0
            do {
                while let field = try tile.nextField() {
                    guard field.number == 3, field.wireType == 2, let layer = field.payload else {
                        return "not a vector tile: top-level field \(field.number) (wire type \(field.wireType))"
                    }
                    layerNumber += 1
                    if let problem = try layerProblem(bytes, layer) {
                        return "vector tile layer \(layerNumber): \(problem)"
                    }
                }
            } catch {
                return layerNumber == 0 ? "not a vector tile: \(error)" : "vector tile layer \(layerNumber): \(error)"
            }
            return nil
        }
    }

    /// Field numbers of a Layer message.
    private enum LayerField {
        static let name: UInt64 = 1, features: UInt64 = 2, keys: UInt64 = 3, values: UInt64 = 4
        static let extent: UInt64 = 5, version: UInt64 = 15
    }

    /// The problem of one layer: a first walk counts keys and checks values, a second checks
    /// features against those counts (a layer may list its keys after its features).
    private static func layerProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> String? {
        var hasName = false
        var hasVersion = false
        var keyCount: UInt64 = 0
        var valueCount: UInt64 = 0
        var layer = ProtobufReader(bytes, range: range)
        while let field = try layer.nextField() {
            switch field.number {
            case LayerField.name:
                guard field.wireType == 2 else { return wrongWireType("name", field) }
                hasName = true
            case LayerField.version:
                guard field.wireType == 0 else { return wrongWireType("version", field) }
                hasVersion = true
            case LayerField.extent:
                guard field.wireType == 0 else { return wrongWireType("extent", field) }
            case LayerField.keys:
                guard field.wireType == 2 else { return wrongWireType("key", field) }
                keyCount += 1
            case LayerField.values:
                guard field.wireType == 2, let value = field.payload else { return wrongWireType("value", field) }
                valueCount += 1
                if let problem = try valueProblem(bytes, value) { return "value \(valueCount): \(problem)" }
            case LayerField.features:
                guard field.wireType == 2 else { return wrongWireType("feature", field) }
            default:
                continue
            }
        }
        guard hasName else { return "no name" }
        guard hasVersion else { return "no version" }
        var featureNumber = 0
        layer = ProtobufReader(bytes, range: range)
        while let field = try layer.nextField() {
            guard field.number == LayerField.features, let feature = field.payload else { continue }
            featureNumber += 1
            if let problem = try featureProblem(bytes, feature, keyCount: keyCount, valueCount: valueCount) {
                return "feature \(featureNumber): \(problem)"
            }
        }
        return nil
    }

    /// A Value message holds exactly one known field, of its wire type.
    private static func valueProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> String? {
        var known = 0
        var value = ProtobufReader(bytes, range: range)
        while let field = try value.nextField() {
            guard (1...7).contains(field.number) else { continue }
            // string 1 is length-delimited, float 2 fixed32, double 3 fixed64, the rest varints.
            let expected: UInt8 = field.number == 1 ? 2 : field.number == 2 ? 5 : field.number == 3 ? 1 : 0
            guard field.wireType == expected else { return "field \(field.number) has wire type \(field.wireType)" }
            known += 1
        }
        return known == 1 ? nil : "\(known) typed fields, expected exactly one"
    }

    private static func featureProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
                                       keyCount: UInt64, valueCount: UInt64) throws -> String? {
        var feature = ProtobufReader(bytes, range: range)
        while let field = try feature.nextField() {
            switch field.number {
            case 1:
                guard field.wireType == 0 else { return wrongWireType("id", field) }
            case 2:
                guard field.wireType == 2, let tags = field.payload else { return wrongWireType("tags", field) }
                var reader = ProtobufReader(bytes, range: tags)
                while !reader.isAtEnd {
                    let key = try reader.varint()
                    guard !reader.isAtEnd else { return "odd number of tag indexes" }
                    let value = try reader.varint()
                    if key >= keyCount { return "tag key index \(key) past the layer's \(keyCount) keys" }
                    if value >= valueCount { return "tag value index \(value) past the layer's \(valueCount) values" }
                }
            case 3:
                guard field.wireType == 0 else { return wrongWireType("type", field) }
                if field.value > 3 { return "geometry type \(field.value)" }
            case 4:
                guard field.wireType == 2, let geometry = field.payload else { return wrongWireType("geometry", field) }
                if let problem = try geometryProblem(bytes, geometry) { return "geometry \(problem)" }
            default:
                continue
            }
        }
        return nil
    }

    /// The command stream decodes: MoveTo and LineTo are followed by two integers per count.
    private static func geometryProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> String? {
        var reader = ProtobufReader(bytes, range: range)
        while !reader.isAtEnd {
            let command = try reader.varint()
            let id = command & 7
            let count = command >> 3
            switch id {
            case 1, 2:
                guard reader.skipVarints(count * 2) else {
                    return "command \(id == 1 ? "MoveTo" : "LineTo") of \(count) points runs past the stream"
                }
            case 7:
                continue
            default:
                return "command id \(id)"
            }
        }
        return nil
    }

    private static func wrongWireType(_ name: String, _ field: ProtobufReader.Field) -> String {
        "\(name) (field \(field.number)) has wire type \(field.wireType)"
    }
}
