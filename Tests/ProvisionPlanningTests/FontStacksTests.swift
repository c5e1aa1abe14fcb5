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
