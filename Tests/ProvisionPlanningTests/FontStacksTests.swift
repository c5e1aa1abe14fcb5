import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import XCTest

final class FontStacksTests: XCTestCase {
    private func style(_ layers: [JSONValue]) -> JSONValue {
        ["version": 8, "sources": [:], "layers": .array(layers)]
    }

    private func symbol(_ id: String, layout: JSONValue) -> JSONValue {
        ["id": .string(id), "type": "symbol", "source": "s", "layout": layout]
    }

    func testTable() {
        let cases: [(name: String, layers: [JSONValue], expected: [[String]])] = [
            ("missing text-font uses the default stack",
             [symbol("a", layout: ["text-field": "{name}"])], [FontStacks.defaultStack]),
            ("null text-font uses the default stack",
             [symbol("a", layout: ["text-field": "{name}", "text-font": nil])], [FontStacks.defaultStack]),
            ("constant stack", [symbol("a", layout: ["text-field": "x", "text-font": ["Noto Sans Bold", "Noto Sans CJK"]])],
             [["Noto Sans Bold", "Noto Sans CJK"]]),
            ("no text-field adds nothing", [symbol("a", layout: ["icon-image": "x", "text-font": ["A"]])], []),
            ("no layout adds nothing", [["id": "a", "type": "symbol"]], []),
            ("non-symbol layer adds nothing", [["id": "a", "type": "line", "layout": ["text-field": "x"]]], []),
            ("match outputs",
             [symbol("a", layout: ["text-field": "x", "text-font": [
                "match", ["get", "class"], "city", ["literal", ["B Bold"]], ["town", "village"], ["literal", ["A Regular"]],
                ["literal", ["C Italic"]]]])],
             [["A Regular"], ["B Bold"], ["C Italic"]]),
            ("step and case outputs",
             [symbol("a", layout: ["text-field": "x", "text-font": [
                "step", ["zoom"], ["literal", ["Z0"]], 10, ["case", ["has", "n"], ["literal", ["Z10a"]], ["literal", ["Z10b"]]]]])],
             [["Z0"], ["Z10a"], ["Z10b"]]),
            ("coalesce stops at the first non-literal",
             [symbol("a", layout: ["text-field": "x", "text-font": [
                "coalesce", ["literal", ["First"]], ["get", "font"], ["literal", ["Never"]]]])],
             [["First"]]),
            ("literal expression", [symbol("a", layout: ["text-field": "x", "text-font": ["literal", ["L1", "L2"]]])],
             [["L1", "L2"]]),
            ("legacy zoom function", [symbol("a", layout: ["text-field": "x", "text-font": [
                "base": 1, "stops": [[0, ["S0"]], [12, ["S12"]]]]])], [["S0"], ["S12"]]),
            ("malformed text-font adds nothing", [symbol("a", layout: ["text-field": "x", "text-font": "Open Sans"])], []),
            ("bare array in an output adds nothing",
             [symbol("a", layout: ["text-field": "x", "text-font": ["step", ["zoom"], ["A"], 5, ["literal", ["B"]]]])], []),
            ("legacy {token} text-field counts as text", [symbol("a", layout: ["text-field": "{name_en}", "text-font": ["T"]])],
             [["T"]]),
            ("an empty text-field is still a text-field", [symbol("a", layout: ["text-field": "", "text-font": ["E"]])], [["E"]]),
            ("null text-field adds nothing", [symbol("a", layout: ["text-field": nil, "text-font": ["N"]])], []),
            ("case outputs with fallback",
             [symbol("a", layout: ["text-field": "x", "text-font": [
                "case", ["==", ["get", "rank"], 1], ["literal", ["Bold"]], ["literal", ["Regular"]]]])],
             [["Bold"], ["Regular"]]),
            ("let returns its body's outputs",
             [symbol("a", layout: ["text-field": "x", "text-font": ["let", "f", 1, ["literal", ["Let Font"]]]])],
             [["Let Font"]]),
            ("interpolate cannot output font stacks",
             [symbol("a", layout: ["text-field": "x", "text-font": [
                "interpolate", ["linear"], ["zoom"], 5, ["literal", ["A"]], 10, ["literal", ["B"]]]])], []),
            ("legacy function with a default", [symbol("a", layout: ["text-field": "x", "text-font": [
                "stops": [[0, ["S0"]]], "default": ["D"]]])], [["D"], ["S0"]]),
            ("legacy categorical property function", [symbol("a", layout: ["text-field": "x", "text-font": [
                "property": "class", "type": "categorical", "stops": [["city", ["City Bold"]], ["town", ["Town"]]]]])],
             [["City Bold"], ["Town"]]),
            ("legacy zoom-and-property function", [symbol("a", layout: ["text-field": "x", "text-font": [
                "property": "rank", "stops": [[["zoom": 0, "value": 1], ["Z0R1"]], [["zoom": 10, "value": 1], ["Z10R1"]]]]])],
             [["Z0R1"], ["Z10R1"]]),
            ("a symbol layer without source is dropped by the parser",
             [["id": "a", "type": "symbol", "layout": ["text-field": "x", "text-font": ["Gone"]]]], []),
            ("a layer repeating an earlier id is dropped",
             [symbol("a", layout: ["text-field": "x", "text-font": ["First"]]),
              symbol("a", layout: ["text-field": "x", "text-font": ["Second"]])], [["First"]]),
            ("a layer without a string id is dropped",
             [["id": 3, "type": "symbol", "source": "s", "layout": ["text-field": "x", "text-font": ["No Id"]]]], []),
            ("a ref layer shares its target's fonts",
             [symbol("a", layout: ["text-field": "x", "text-font": ["Base"]]),
              ["id": "b", "ref": "a", "layout": ["text-field": "x", "text-font": ["Ignored"]]]], [["Base"]]),
            ("sorted and unique across layers",
             [symbol("b", layout: ["text-field": "x", "text-font": ["b"]]),
              symbol("a", layout: ["text-field": "x", "text-font": ["a", "z"]]),
              symbol("c", layout: ["text-field": "x", "text-font": ["a"]]),
              symbol("d", layout: ["text-field": "x", "text-font": ["B"]]),
              symbol("e", layout: ["text-field": "x", "text-font": ["b"]])],
             [["B"], ["a"], ["a", "z"], ["b"]]),
        ]
        for c in cases {
            XCTAssertEqual(FontStacks.fontStacks(in: style(c.layers)), c.expected, c.name)
        }
    }

    func testSortingIsByteWiseLikeStdSet() {
        // "Z" (0x5A) < "a" (0x61) < "É" (0xC3 0x89) byte-wise.
        XCTAssertEqual(FontStacks.sorted([["É"], ["a"], ["Z"], ["a", "b"], ["a", "A"]]),
                       [["Z"], ["a"], ["a", "A"], ["a", "b"], ["É"]])
    }
}
