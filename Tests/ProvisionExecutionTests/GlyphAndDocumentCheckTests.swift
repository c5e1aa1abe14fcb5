import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// Glyph ranges are checked against glyphs.proto; JSON documents against MapLibre's parser.
final class GlyphAndDocumentCheckTests: XCTestCase {
    private let url = "https://fonts.example.com/Noto%20Sans%20Regular/19968-20223.pbf"

    /// A glyph range with one full glyph of every field (2×2, so its bitmap is 8×8 with the border).
    private func glyphs(glyph: PB? = nil, name: String? = "Noto Sans Regular", range: String? = "19968-20223",
                        stackExtra: (inout PB) -> Void = { _ in }) -> Data {
        var stack = PB()
        if let name { stack.string(1, name) }
        if let range { stack.string(2, range) }
        stack.message(3, glyph ?? fullGlyph())
        stackExtra(&stack)
        var top = PB()
        top.message(1, stack)
        return top.bytes
    }

    /// A glyph of every field, with `change` applied to its (field, value) list before writing.
    private func fullGlyph(bitmap: Int = 64, _ change: (inout [(Int, UInt64)]) -> Void = { _ in }) -> PB {
        var fields: [(Int, UInt64)] = [(1, 0x4e2d), (3, 2), (4, 2), (5, 3), (6, 50), (7, 12)]  // left -2, top 25 (zigzag)
        change(&fields)
        var glyph = PB()
        for (field, value) in fields where field == 1 { glyph.varint(field, value) }
        glyph.bytesField(2, Data(repeating: 9, count: bitmap))
        for (field, value) in fields where field != 1 { glyph.varint(field, value) }
        return glyph
    }

    func testGlyphRangesOfEveryFieldAreAccepted() {
        accepts(glyphs(), .glyphs, url: url)
        accepts(glyphs(), .glyphs)
        accepts(glyphs { $0.varint(9, 1) }, .glyphs, url: url)  // an unknown fontstack field is skipped
        accepts(glyphs(glyph: fullGlyph(bitmap: 0) { $0[1].1 = 0 }), .glyphs, url: url)  // a space: no bitmap
        accepts(Data(), .glyphs, url: url)  // a range with no glyphs, as MapLibre reads an empty body
        var empty = PB()
        empty.string(1, "Noto Sans Regular")
        empty.string(2, "19968-20223")
        var top = PB()
        top.message(1, empty)
        accepts(top.bytes, .glyphs, url: url)
    }

    /// Every range of the demo font (the glyphs MapLibre renders in the demo) is accepted under its own URL.
    func testTheDemoFontsRangesAreAccepted() throws {
        let fonts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/demo/fonts")
            .standardizedFileURL
        var checked = 0
        for stack in try FileManager.default.contentsOfDirectory(atPath: fonts.path) {
            for file in try FileManager.default.contentsOfDirectory(atPath: fonts.appendingPathComponent(stack).path) {
                let data = try Data(contentsOf: fonts.appendingPathComponent(stack).appendingPathComponent(file))
                accepts(data, .glyphs, url: "https://tiles.example.com/demo/fonts/\(stack)/\(file)")
                checked += 1
            }
        }
        XCTAssertEqual(checked, 256)
    }

    /// Issue 20 #6: a fontstack of 1,000 nested messages (its name not UTF-8, no range, no glyph).
    func testANestedMessageBombIsRefused() {
        var nested = PB()
        for _ in 0..<1_000 {
            var outer = PB()
            outer.message(1, nested)
            nested = outer
        }
        var top = PB()
        top.message(1, nested)
        refuses(top.bytes, .glyphs, containing: "glyph PBF fontstack 1: name is not UTF-8", url: url)
        refuses(top.bytes, .glyphs, containing: "name is not UTF-8")
    }

    func testNamesMustBeUTF8WithoutControlCharacters() {
        var bad = PB()
        bad.bytesField(1, Data([0x4e, 0xff, 0xfe]))
        bad.string(2, "19968-20223")
        var top = PB()
        top.message(1, bad)
        refuses(top.bytes, .glyphs, containing: "name is not UTF-8", url: url)
        refuses(glyphs(name: "Noto\u{0A}Sans"), .glyphs, containing: "name holds control characters", url: url)
        refuses(glyphs(name: nil), .glyphs, containing: "no font name", url: url)
        refuses(glyphs(name: ""), .glyphs, containing: "no font name", url: url)
        refuses(glyphs { $0.string(1, "Other") }, .glyphs, containing: "name appears twice", url: url)
        accepts(glyphs(name: "Noto Sans CJK 日本語 Regular,Arial Unicode MS Regular"), .glyphs, url: url)
    }

    func testTheRangeMustBeTheOneAskedFor() {
        refuses(glyphs(range: nil), .glyphs, containing: "\"Noto Sans Regular\" has no range", url: url)
        refuses(glyphs(range: nil), .glyphs, containing: "has no range")
        refuses(glyphs(range: "0-255"), .glyphs,
                containing: "has range \"0-255\" where 19968-20223 was asked for", url: url)
        for malformed in ["19968-20224", "19969-20224", "abc", "19968", "-19968-20223", "19968 - 20223", "65536-65791"] {
            refuses(glyphs(range: malformed), .glyphs, containing: "expected START-END of 256 code points")
        }
        refuses(glyphs { $0.string(2, "19968-20223") }, .glyphs, containing: "range appears twice", url: url)
    }

    func testGlyphsMapLibreWouldDropAreRefused() {
        refuses(glyphs(glyph: fullGlyph { $0.removeAll { $0.0 == 7 } }), .glyphs, containing: "glyph 1 has no advance", url: url)
        refuses(glyphs(glyph: fullGlyph { $0.removeAll { $0.0 == 1 } }), .glyphs, containing: "glyph 1 has no id", url: url)
        refuses(glyphs(glyph: fullGlyph { $0[0].1 = 65 }), .glyphs, containing: "has id 65, outside the range 19968-20223",
                url: url)
        refuses(glyphs(glyph: fullGlyph(bitmap: 4)), .glyphs, containing: "has a bitmap of 4 bytes, expected 64", url: url)
        refuses(glyphs(glyph: fullGlyph(bitmap: 63 * 64) { $0[1].1 = 300; $0[2].1 = 2 }), .glyphs,
                containing: "metrics out of bounds: width 300", url: url)
        refuses(glyphs(glyph: fullGlyph { $0[4].1 = 300 }), .glyphs, containing: "top 150", url: url)
        refuses(glyphs(glyph: fullGlyph { $0[0].1 = 1 << 33 }), .glyphs, containing: "field 1 does not fit 32 bits", url: url)
    }

    func testTheRangeAskedForIsReadFromTheURL() {
        XCTAssertEqual(GlyphCheck.requestedRange(in: "https://x/fonts/Noto%20Sans/0-255.pbf?key=1-2"), 0...255)
        XCTAssertEqual(GlyphCheck.requestedRange(in: "https://x/fonts/65280-65535"), 65_280...65_535)
        XCTAssertEqual(GlyphCheck.requestedRange(in: "https://x/256-511/Noto.pbf"), 256...511)
        XCTAssertNil(GlyphCheck.requestedRange(in: "https://x/fonts/Noto/1-256.pbf"))
        XCTAssertNil(GlyphCheck.requestedRange(in: "https://x/fonts/Noto/glyphs.pbf"))
    }

    func testGlyphFieldsOfTheWrongWireTypeAreRefused() {
        var idAsBytes = PB()
        idAsBytes.string(1, "A")
        refuses(glyphs(glyph: idAsBytes), .glyphs, containing: "glyph 1 field 1 has wire type 2")
        var bitmapAsVarint = PB()
        bitmapAsVarint.varint(2, 1)
        refuses(glyphs(glyph: bitmapAsVarint), .glyphs, containing: "glyph 1 field 2 has wire type 0")
        var leftAsFixed = PB()
        leftAsFixed.key(5, 5)
        leftAsFixed.bytes.append(contentsOf: [1, 0, 0, 0])
        refuses(glyphs(glyph: leftAsFixed), .glyphs, containing: "field 5 has wire type 5")
        refuses(glyphs { $0.varint(1, 3) }, .glyphs, containing: "name has wire type 0")
        refuses(glyphs { $0.varint(2, 3) }, .glyphs, containing: "range has wire type 0")
        refuses(glyphs { $0.varint(3, 3) }, .glyphs, containing: "glyph has wire type 0")
        var otherTop = PB()
        otherTop.string(2, "x")
        refuses(otherTop.bytes, .glyphs, containing: "not a glyph PBF: top-level field 2")
    }

    func testATruncatedGlyphRangeIsRefused() {
        let range = glyphs()
        for length in 1..<range.count {
            refuses(range.prefix(length), .glyphs, containing: "glyph PBF", url: url)
        }
    }

    func testJSONDocumentsWithAByteOrderMarkAreUnusable() {
        let bom = Data([0xEF, 0xBB, 0xBF])
        for (body, kind) in [(Fixtures.style, ResourceKind.style), (Fixtures.tileJSON, .source), (Data("{}".utf8), .spriteJSON)] {
            accepts(body, kind)
            refuses(bom + body, kind, containing: "UTF-8 byte-order mark, which MapLibre's JSON parser does not accept",
                    document: true)
        }
    }

    func testJSONCapsMakeADocumentUnusableNamingThePointer() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let style = Data(#"{"version":8,"sources":{},"metadata":{"x":\#(deep)}}"#.utf8)
        refuses(style, .style, containing: "(at /metadata/x/0/0", document: true)
        refuses(style, .style, containing: "JSON past a parse cap (line 1, column 169 (at /metadata/x/0/0", document: true)
        refuses(style, .style, containing: "nesting deeper than the depth cap of 128 levels", document: true)
        // A 400,000-member metadata object is fine.
        let members = (0..<400_000).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        accepts(Data(#"{"version":8,"sources":{},"metadata":{\#(members)}}"#.utf8), .style)
        // An HTML page stays an invalid body, not a document problem.
        refuses(Fixtures.html, .style, containing: "HTML page instead of style")
    }
}
