import Foundation
import ProvisionFoundation
@testable import ProvisionLabels
import ProvisionModel
import XCTest

/// A layer's text per feature and zoom, and the features of a tile another encoder wrote.
final class LabelProgramTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/glyphs")

    func layer(_ textField: JSONValue, minZoom: Double = 0, maxZoom: Double = 24, filter: JSONValue? = nil) -> LabelLayer {
        LabelLayer(id: "l", urlTemplate: "t", sourceMaxZoom: 14, sourceLayer: "places", minZoom: minZoom, maxZoom: maxZoom,
                   filter: filter, textField: textField, fontStacks: [["Noto Sans Regular"]])
    }

    let feature = TileFeature(properties: ["name": .string("Арбат"), "ref": .string("M10"), "rank": .number(3)], geometryType: 1)

    func testLegacyTokenStringsReplaceEachTokenAndDropMissingOnes() throws {
        let program = try LabelProgram(layer("{ref}: {name} {missing}"))
        XCTAssertEqual(program.sections(for: feature, zoom: 10).map(\.text), ["M10: Арбат "])
        XCTAssertEqual(try LabelProgram(layer("Fixed")).sections(for: feature, zoom: 10).map(\.text), ["Fixed"])
    }

    func testLegacyFunctionsCountEveryOutput() throws {
        let function: JSONValue = ["stops": [[10, "{ref}"], [14, "{name}"]], "default": "—"]
        XCTAssertEqual(try LabelProgram(layer(function)).sections(for: feature, zoom: 10).map(\.text), ["M10", "Арбат", "—"])
        let identity: JSONValue = ["type": "identity", "property": "name"]
        XCTAssertEqual(try LabelProgram(layer(identity)).sections(for: feature, zoom: 10).map(\.text), ["Арбат"])
    }

    func testEmptyAndNullTextsMakeNoLabel() throws {
        XCTAssertTrue(try LabelProgram(layer(["get", "missing"])).sections(for: feature, zoom: 10).isEmpty)
        XCTAssertTrue(try LabelProgram(layer("")).sections(for: feature, zoom: 10).isEmpty)
        XCTAssertTrue(try LabelProgram(layer(["number", ["get", "name"]])).sections(for: feature, zoom: 10).isEmpty)
    }

    func testLayerZoomRangeDecidesWhichLayoutZoomsDrawIt() throws {
        // A tile laid out at z is drawn from z to z+1; the layer from minzoom up to maxzoom (exclusive).
        let program = try LabelProgram(layer(["get", "name"], minZoom: 11.5, maxZoom: 14))
        XCTAssertEqual((9...15).filter(program.isVisible(atZoom:)), [11, 12, 13])
        let whole = try LabelProgram(layer(["get", "name"], minZoom: 12, maxZoom: 12.5))
        XCTAssertEqual((9...15).filter(whole.isVisible(atZoom:)), [12])
    }

    func testUnsupportedTextOrFilterIsRefusedNamingWhich() throws {
        XCTAssertThrowsError(try LabelProgram(layer(["number-format", ["get", "rank"], [:]]))) { error in
            XCTAssertEqual((error as? UnsupportedExpression)?.description, "text-field: \"number-format\"")
        }
        XCTAssertThrowsError(try LabelProgram(layer("x", filter: ["within", [:]]))) { error in
            XCTAssertEqual((error as? UnsupportedExpression)?.description, "filter: \"within\"")
        }
    }

    func testFeaturesOfATileWrittenByMapboxVectorTileAreReadWithTheirProperties() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("sample.mvt"))
        let expected = try JSONValue.parse(Data(contentsOf: Self.fixtures.appendingPathComponent("sample.json")))
        var read: [String: [(String, [String: ExpressionValue])]] = [:]
        let names: [String: Int] = ["Point": 1, "LineString": 2, "Polygon": 3]
        try VectorTileFeatures.forEachFeature(in: data, layers: ["places", "roads", "water", "pois"]) { layer, feature in
            let type = names.first { $0.value == feature.geometryType }?.key ?? "?"
            read[layer, default: []].append((type, feature.properties))
        }
        let layers = try XCTUnwrap(expected.objectValue)
        XCTAssertEqual(Set(read.keys), Set(layers.keys))
        for (name, features) in layers.members {
            let want = try XCTUnwrap(features.arrayValue)
            let got = try XCTUnwrap(read[name])
            XCTAssertEqual(got.count, want.count, name)
            for (g, w) in zip(got, want) {
                XCTAssertEqual(g.0, w["type"]?.stringValue, name)
                XCTAssertEqual(g.1, ExpressionValue(json: w["properties"] ?? .null).objectMembers, name)
            }
        }
        var onlyPlaces = 0
        try VectorTileFeatures.forEachFeature(in: data, layers: ["places"]) { layer, _ in
            XCTAssertEqual(layer, "places")
            onlyPlaces += 1
        }
        XCTAssertEqual(onlyPlaces, layers["places"]?.arrayValue?.count)
    }

    func testTruncatedTileIsRefused() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("sample.mvt"))
        XCTAssertThrowsError(try VectorTileFeatures.forEachFeature(in: data.prefix(data.count - 9), layers: ["water"]) { _, _ in })
        XCTAssertThrowsError(try VectorTileFeatures.forEachFeature(in: Data("<html>".utf8), layers: ["water"]) { _, _ in })
    }
}

extension ExpressionValue {
    /// The members of an object value (empty for anything else).
    var objectMembers: [String: ExpressionValue] {
        if case .object(let members) = self { return members }
        return [:]
    }
}
