import Foundation
import ProvisionFoundation
@testable import ProvisionLabels
import ProvisionModel
import XCTest

/// The evaluator, operator by operator, over one feature: each case is an expression (as JSON),
/// the zoom, and the value MapLibre gives (nil: evaluation fails).
final class ExpressionTests: XCTestCase {
    static let feature = TileFeature(properties: [
        "name": .string("Москва"), "name:en": .string("Moscow"), "rank": .number(2), "class": .string("city"),
        "capital": .bool(true), "pop": .number(12_600_000), "ref": .string("M10"),
    ], geometryType: 1, id: 42)

    struct Case {
        var name: String
        var json: String
        var zoom: Double = 10
        var expected: ExpressionValue?
    }

    static let cases: [Case] = [
        Case(name: "literal string", json: #""Tokyo""#, expected: .string("Tokyo")),
        Case(name: "literal array", json: #"["literal", ["a", 1]]"#, expected: .array([.string("a"), .number(1)])),
        Case(name: "get", json: #"["get", "name"]"#, expected: .string("Москва")),
        Case(name: "get missing", json: #"["get", "name:ar"]"#, expected: .null),
        Case(name: "get from object", json: #"["get", "a", ["literal", {"a": "x"}]]"#, expected: .string("x")),
        Case(name: "has", json: #"["has", "ref"]"#, expected: .bool(true)),
        Case(name: "has missing", json: #"["has", "name:ar"]"#, expected: .bool(false)),
        Case(name: "id", json: #"["id"]"#, expected: .number(42)),
        Case(name: "geometry-type", json: #"["geometry-type"]"#, expected: .string("Point")),
        Case(name: "zoom", json: #"["zoom"]"#, zoom: 12, expected: .number(12)),
        Case(name: "== string", json: #"["==", ["get", "class"], "city"]"#, expected: .bool(true)),
        Case(name: "== unlike types", json: #"["==", ["get", "rank"], "2"]"#, expected: .bool(false)),
        Case(name: "!=", json: #"["!=", ["get", "class"], "town"]"#, expected: .bool(true)),
        Case(name: "<", json: #"["<", ["get", "rank"], 3]"#, expected: .bool(true)),
        Case(name: "<=", json: #"["<=", ["get", "rank"], 2]"#, expected: .bool(true)),
        Case(name: ">", json: #"[">", ["get", "pop"], 1000000]"#, expected: .bool(true)),
        Case(name: ">=", json: #"[">=", ["zoom"], 11]"#, zoom: 10, expected: .bool(false)),
        Case(name: "< unlike types fails", json: #"["<", ["get", "class"], 3]"#, expected: nil),
        Case(name: "!", json: #"["!", ["has", "ref"]]"#, expected: .bool(false)),
        Case(name: "all", json: #"["all", ["has", "ref"], ["==", ["get", "class"], "city"]]"#, expected: .bool(true)),
        Case(name: "all false", json: #"["all", ["has", "ref"], ["==", ["get", "class"], "town"]]"#, expected: .bool(false)),
        Case(name: "any", json: #"["any", ["has", "x"], ["get", "capital"]]"#, expected: .bool(true)),
        Case(name: "in array", json: #"["in", ["get", "class"], ["literal", ["city", "town"]]]"#, expected: .bool(true)),
        Case(name: "in string", json: #"["in", "os", ["get", "name:en"]]"#, expected: .bool(true)),
        Case(name: "case", json: #"["case", ["==", ["get", "rank"], 1], "one", ["==", ["get", "rank"], 2], "two", "many"]"#,
             expected: .string("two")),
        Case(name: "case fallback", json: #"["case", false, "no", "yes"]"#, expected: .string("yes")),
        Case(name: "match", json: #"["match", ["get", "class"], ["town", "village"], "small", "city", "big", "other"]"#,
             expected: .string("big")),
        Case(name: "match fallback", json: #"["match", ["get", "rank"], 1, "first", "other"]"#, expected: .string("other")),
        Case(name: "coalesce", json: #"["coalesce", ["get", "name:ar"], ["get", "name:en"]]"#, expected: .string("Moscow")),
        Case(name: "coalesce all null", json: #"["coalesce", ["get", "a"], ["get", "b"]]"#, expected: .null),
        Case(name: "step below", json: #"["step", ["zoom"], "a", 11, "b", 13, "c"]"#, zoom: 10, expected: .string("a")),
        Case(name: "step between", json: #"["step", ["zoom"], "a", 11, "b", 13, "c"]"#, zoom: 12, expected: .string("b")),
        Case(name: "step above", json: #"["step", ["zoom"], "a", 11, "b", 13, "c"]"#, zoom: 13, expected: .string("c")),
        Case(name: "let var", json: #"["let", "n", ["get", "name"], ["concat", ["var", "n"], "!"]]"#, expected: .string("Москва!")),
        Case(name: "concat", json: #"["concat", ["get", "ref"], " ", ["get", "rank"]]"#, expected: .string("M10 2")),
        Case(name: "format", json: #"["format", ["get", "name"], {"font-scale": 1.2}, "\n", {}, ["get", "name:en"], {"text-font": ["literal", ["Noto Sans Italic"]]}]"#,
             expected: .formatted([FormattedSection(text: "Москва"), FormattedSection(text: "\n"),
                                   FormattedSection(text: "Moscow", fontStack: ["Noto Sans Italic"])])),
        Case(name: "image draws no glyph", json: #"["image", "star"]"#, expected: .formatted([])),
        Case(name: "to-string number", json: #"["to-string", ["get", "rank"]]"#, expected: .string("2")),
        Case(name: "to-string bool", json: #"["to-string", ["get", "capital"]]"#, expected: .string("true")),
        Case(name: "to-string null", json: #"["to-string", ["get", "none"]]"#, expected: .string("")),
        Case(name: "to-number", json: #"["to-number", "3.5"]"#, expected: .number(3.5)),
        Case(name: "to-boolean", json: #"["to-boolean", ["get", "name"]]"#, expected: .bool(true)),
        Case(name: "string assertion", json: #"["string", ["get", "rank"], ["get", "ref"]]"#, expected: .string("M10")),
        Case(name: "number assertion fails", json: #"["number", ["get", "name"]]"#, expected: nil),
        Case(name: "typeof", json: #"["typeof", ["get", "pop"]]"#, expected: .string("number")),
        Case(name: "length", json: #"["length", ["get", "name"]]"#, expected: .number(6)),
        Case(name: "upcase", json: #"["upcase", ["get", "name"]]"#, expected: .string("МОСКВА")),
        Case(name: "downcase", json: #"["downcase", ["get", "ref"]]"#, expected: .string("m10")),
        Case(name: "upcase ß", json: #"["upcase", "Straße"]"#, expected: .string("STRASSE")),
        Case(name: "+", json: #"["+", ["get", "rank"], 1, 0.5]"#, expected: .number(3.5)),
        Case(name: "- binary", json: #"["-", ["zoom"], 3]"#, zoom: 12, expected: .number(9)),
        Case(name: "- unary", json: #"["-", ["get", "rank"]]"#, expected: .number(-2)),
        Case(name: "* / %", json: #"["%", ["/", ["*", ["get", "rank"], 10], 3], 4]"#, expected: .number(20.0 / 3 - 4)),
        Case(name: "min max", json: #"["max", ["min", 4, ["get", "rank"]], 1]"#, expected: .number(2)),
        Case(name: "round floor ceil", json: #"["+", ["round", 2.5], ["floor", 2.7], ["ceil", 2.1]]"#, expected: .number(8)),
        Case(name: "arithmetic on a string fails", json: #"["+", ["get", "name"], 1]"#, expected: nil),
        Case(name: "filter over arithmetic", json: #"["<=", ["get", "rank"], ["-", ["zoom"], 9]]"#, zoom: 11, expected: .bool(true)),
    ]

    func testEveryOperatorEvaluatesAsMapLibreDoes() throws {
        for c in Self.cases {
            let expression = try Expression.compile(try JSONValue.parse(Data(c.json.utf8)))
            let value = try? expression.evaluate(EvaluationContext(feature: Self.feature, zoom: c.zoom))
            XCTAssertEqual(value, c.expected, c.name)
        }
    }

    func testUnsupportedOperatorsAreRefusedAtCompileTime() throws {
        let unsupported = [
            #"["number-format", ["get", "pop"], {}]"#, #"["interpolate", ["linear"], ["zoom"], 0, 1, 10, 2]"#,
            #"["==", ["get", "name"], "x", ["collator", {}]]"#, #"["within", {}]"#, #"["/", 1]"#,
            #"["case", true]"#, #"["match", ["get", "a"], 1]"#, #"{"a": 1}"#, #"[1, 2]"#,
        ]
        for json in unsupported {
            XCTAssertThrowsError(try Expression.compile(try JSONValue.parse(Data(json.utf8))), json)
        }
    }

    func testZoomDependenceIsSeen() throws {
        XCTAssertTrue(try Expression.compile(try JSONValue.parse(Data(#"["step", ["zoom"], "a", 11, "b"]"#.utf8))).usesZoom)
        XCTAssertTrue(try Expression.compile(try JSONValue.parse(Data(#"["all", [">=", ["zoom"], 3]]"#.utf8))).usesZoom)
        XCTAssertFalse(try Expression.compile(try JSONValue.parse(Data(#"["get", "name"]"#.utf8))).usesZoom)
    }
}
