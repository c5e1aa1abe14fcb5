import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// Vector tiles are walked field by field: a tile MapLibre's parser would choke on is refused.
final class VectorTileCheckTests: XCTestCase {
    typealias MVT = VectorTileEncoder

    private func tile(keys: [String] = ["class"], values: [MVT.Value] = [.string("a")], _ features: [MVT.Feature]) -> Data {
        MVT.tile([MVT.Layer(name: "roads", keys: keys, values: values, features: features)])
    }

    private let square = MVT.ring([(0, 0), (10, 0), (0, 10), (-10, 0)])

    func testRealisticTilesAndEveryValueTypeAreAccepted() {
        let realistic = MVT.realistic()
        XCTAssertGreaterThan(realistic.count, 15_000)
        accepts(realistic, .tile)
        let values: [MVT.Value] = [.string("x"), .float(1.5), .double(-2.25), .int(-7), .uint(7), .sint(-3), .bool(false)]
        accepts(tile(keys: ["a", "b"], values: values, [MVT.Feature(id: 1, tags: [0, 6, 1, 3], geometry: square),
                                                        MVT.Feature(tags: [], type: 0, geometry: [])]), .tile)
        accepts(MVT.tile([MVT.Layer(name: "empty")]), .tile)
        accepts(Data(), .tile)
    }

    func testATruncatedTileIsRefused() {
        let realistic = MVT.realistic()
        for length in [1, 2, 100, realistic.count / 3, realistic.count / 2, realistic.count - 10, realistic.count - 1] {
            refuses(realistic.prefix(length), .tile, containing: "vector tile")
        }
    }

    func testTagIndexesMustNameKeysAndValuesOfTheLayer() {
        refuses(tile([MVT.Feature(tags: [1, 0], geometry: square)]), .tile,
                containing: "vector tile layer 1: feature 1: tag key index 1 past the layer's 1 keys")
        refuses(tile([MVT.Feature(geometry: square), MVT.Feature(tags: [0, 1], geometry: square)]), .tile,
                containing: "feature 2: tag value index 1 past the layer's 1 values")
        refuses(tile([MVT.Feature(tags: [0, 0, 0], geometry: square)]), .tile, containing: "odd number of tag indexes")
        // Keys listed after the features still count.
        var layer = PB()
        layer.varint(15, 2)
        layer.string(1, "late")
        layer.message(2, MVT.Feature(tags: [0, 0], geometry: square).message)
        layer.string(3, "class")
        layer.message(4, MVT.Value.bool(true).message)
        var late = PB()
        late.message(3, layer)
        accepts(late.bytes, .tile)
    }

    func testWrongWireTypesAreRefused() {
        var geometryAsVarint = MVT.Feature().message
        geometryAsVarint.varint(4, 9)
        refuses(tile([]) + layerWith(feature: geometryAsVarint), .tile, containing: "geometry (field 4) has wire type 0")
        var tagsAsVarint = PB()
        tagsAsVarint.varint(2, 0)
        refuses(layerWith(feature: tagsAsVarint), .tile, containing: "tags (field 2) has wire type 0")
        var typeAsBytes = PB()
        typeAsBytes.string(3, "polygon")
        refuses(layerWith(feature: typeAsBytes), .tile, containing: "type (field 3) has wire type 2")
        var layer = PB()
        layer.varint(15, 2)
        layer.string(1, "roads")
        layer.varint(3, 1)
        var keyAsVarint = PB()
        keyAsVarint.message(3, layer)
        refuses(keyAsVarint.bytes, .tile, containing: "key (field 3) has wire type 0")
    }

    /// A tile of one layer holding `feature`.
    private func layerWith(feature: PB) -> Data {
        var layer = PB()
        layer.varint(15, 2)
        layer.string(1, "roads")
        layer.message(2, feature)
        var tile = PB()
        tile.message(3, layer)
        return tile.bytes
    }

    func testValuesHoldExactlyOneKnownFieldOfItsWireType() {
        var two = MVT.Value.string("a").message
        two.varint(7, 1)
        refuses(valueTile(two), .tile, containing: "value 1: 2 typed fields, expected exactly one")
        var none = PB()
        none.varint(9, 1)
        refuses(valueTile(none), .tile, containing: "0 typed fields")
        var stringAsVarint = PB()
        stringAsVarint.varint(1, 5)
        refuses(valueTile(stringAsVarint), .tile, containing: "field 1 has wire type 0")
        var doubleAsFloat = PB()
        doubleAsFloat.key(3, 5)
        doubleAsFloat.bytes.append(contentsOf: [0, 0, 0, 0])
        refuses(valueTile(doubleAsFloat), .tile, containing: "field 3 has wire type 5")
    }

    private func valueTile(_ value: PB) -> Data {
        var layer = PB()
        layer.varint(15, 2)
        layer.string(1, "roads")
        layer.message(4, value)
        var tile = PB()
        tile.message(3, layer)
        return tile.bytes
    }

    func testGeometryTypeAndCommandStreamAreChecked() {
        refuses(tile([MVT.Feature(type: 4, geometry: square)]), .tile, containing: "geometry type 4")
        refuses(tile([MVT.Feature(geometry: [MVT.command(3, count: 1), 2, 2])]), .tile, containing: "command id 3")
        refuses(tile([MVT.Feature(geometry: [MVT.command(1, count: 1), 2, 2, MVT.command(2, count: 3), 1, 1, 1, 1, 1])]), .tile,
                containing: "command LineTo of 3 points runs past the stream")
        refuses(tile([MVT.Feature(geometry: [MVT.command(1, count: 1), 2])]), .tile, containing: "MoveTo")
        accepts(tile([MVT.Feature(type: 1, geometry: [MVT.command(1, count: 2), 2, 2, 4, 4])]), .tile)
    }
}
