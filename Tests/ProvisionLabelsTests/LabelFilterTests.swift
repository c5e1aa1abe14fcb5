import Foundation
import ProvisionFoundation
@testable import ProvisionLabels
import ProvisionModel
import XCTest

/// Filters in both forms: each case is a filter, a feature (properties, geometry type) and a
/// zoom, and whether MapLibre draws the feature.
final class LabelFilterTests: XCTestCase {
    static let city = TileFeature(properties: ["class": .string("city"), "rank": .number(1), "name": .string("Paris")],
                                  geometryType: 1, id: 7)
    static let road = TileFeature(properties: ["class": .string("primary"), "ref": .string("A1")], geometryType: 2)

    struct Case {
        var name: String
        var filter: String
        var feature: TileFeature
        var zoom = 10
        var passes: Bool
    }

    static let cases: [Case] = [
        // Legacy forms.
        Case(name: "legacy ==", filter: #"["==", "class", "city"]"#, feature: city, passes: true),
        Case(name: "legacy == other", filter: #"["==", "class", "town"]"#, feature: city, passes: false),
        Case(name: "legacy !=", filter: #"["!=", "class", "town"]"#, feature: city, passes: true),
        Case(name: "legacy $type", filter: #"["==", "$type", "LineString"]"#, feature: road, passes: true),
        Case(name: "legacy $type other", filter: #"["==", "$type", "Polygon"]"#, feature: road, passes: false),
        Case(name: "legacy $id", filter: #"["==", "$id", 7]"#, feature: city, passes: true),
        Case(name: "legacy <", filter: #"["<", "rank", 3]"#, feature: city, passes: true),
        Case(name: "legacy > unlike types is false", filter: #"[">", "class", 3]"#, feature: city, passes: false),
        Case(name: "legacy ! of unlike types", filter: #"["none", [">", "class", 3]]"#, feature: city, passes: true),
        Case(name: "legacy in", filter: #"["in", "class", "town", "city"]"#, feature: city, passes: true),
        Case(name: "legacy in $type", filter: #"["in", "$type", "Point", "Polygon"]"#, feature: road, passes: false),
        Case(name: "legacy !in", filter: #"["!in", "class", "town", "village"]"#, feature: city, passes: true),
        Case(name: "legacy has", filter: #"["has", "ref"]"#, feature: road, passes: true),
        Case(name: "legacy !has", filter: #"["!has", "ref"]"#, feature: road, passes: false),
        Case(name: "legacy all", filter: #"["all", ["==", "$type", "Point"], ["has", "name"]]"#, feature: city, passes: true),
        Case(name: "legacy any", filter: #"["any", ["==", "class", "town"], ["==", "rank", 1]]"#, feature: city, passes: true),
        Case(name: "legacy none", filter: #"["none", ["==", "class", "town"], ["==", "rank", 5]]"#, feature: city, passes: true),
        // Expression forms.
        Case(name: "expression ==", filter: #"["==", ["get", "class"], "city"]"#, feature: city, passes: true),
        Case(name: "expression !=", filter: #"["!=", ["get", "ref"], "A1"]"#, feature: road, passes: false),
        Case(name: "expression in", filter: #"["in", ["get", "class"], ["literal", ["primary", "secondary"]]]"#,
             feature: road, passes: true),
        Case(name: "expression has", filter: #"["has", "name"]"#, feature: road, passes: false),
        Case(name: "expression all", filter: #"["all", ["==", ["geometry-type"], "Point"], ["<", ["get", "rank"], 2]]"#,
             feature: city, passes: true),
        Case(name: "expression any", filter: #"["any", ["==", ["geometry-type"], "Polygon"], [">", ["get", "rank"], 2]]"#,
             feature: city, passes: false),
        Case(name: "expression !", filter: #"["!", ["has", "ref"]]"#, feature: city, passes: true),
        Case(name: "expression zoom below", filter: #"[">=", ["zoom"], 12]"#, feature: city, zoom: 11, passes: false),
        Case(name: "expression zoom at", filter: #"[">=", ["zoom"], 12]"#, feature: city, zoom: 12, passes: true),
        Case(name: "expression step over zoom", filter: #"["<=", ["get", "rank"], ["step", ["zoom"], 0, 11, 1]]"#,
             feature: city, zoom: 11, passes: true),
        Case(name: "expression failing is false", filter: #"["<", ["get", "class"], 2]"#, feature: city, passes: false),
        Case(name: "true", filter: "true", feature: city, passes: true),
        Case(name: "false", filter: "false", feature: city, passes: false),
    ]

    func testLegacyAndExpressionFilters() throws {
        for c in Self.cases {
            let layer = LabelLayer(id: c.name, urlTemplate: "t", sourceMaxZoom: 14, sourceLayer: "l", minZoom: 0, maxZoom: 24,
                                   filter: try JSONValue.parse(Data(c.filter.utf8)), textField: "x", fontStacks: [["F"]])
            let program = try LabelProgram(layer)
            XCTAssertEqual(!program.sections(for: c.feature, zoom: c.zoom).isEmpty, c.passes, c.name)
        }
    }

    func testLegacyAndExpressionFormsAreToldApartAsTheSpecificationDoes() throws {
        let forms: [(String, Bool)] = [
            (#"["==", "class", "city"]"#, false), (#"["==", ["get", "class"], "city"]"#, true),
            (#"["in", "class", "a", "b"]"#, false), (#"["in", ["get", "class"], ["literal", ["a"]]]"#, true),
            (#"["has", "$type"]"#, false), (#"["has", "name"]"#, true), (#"["!has", "name"]"#, false),
            (#"["all", ["==", "a", 1], true]"#, false), (#"["all", ["==", ["get", "a"], 1], true]"#, true),
            (#"["none", ["==", "a", 1]]"#, false), (#"["!", ["has", "a"]]"#, true),
        ]
        for (json, isExpression) in forms {
            XCTAssertEqual(LabelFilter.isExpression(try JSONValue.parse(Data(json.utf8))), isExpression, json)
        }
    }

    func testUnknownLegacyFilterIsRefused() throws {
        XCTAssertThrowsError(try LabelFilter.compile(try JSONValue.parse(Data(#"["!in"]"#.utf8))))
        XCTAssertThrowsError(try LabelFilter.compile(try JSONValue.parse(Data(#"["within", {}]"#.utf8))))
    }
}
