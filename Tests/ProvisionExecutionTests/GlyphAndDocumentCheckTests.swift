import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// Glyph ranges are checked against glyphs.proto; JSON documents against MapLibre's parser.
final class GlyphAndDocumentCheckTests: XCTestCase {
    /// A glyph range with one full glyph of every field.
    private func glyphs(glyph: PB? = nil, stackExtra: (inout PB) -> Void = { _ in }) -> Data {
        var full = PB()
        full.varint(1, 0x4e2d)
        full.bytesField(2, Data([0, 40, 80, 120]))
        full.varint(3, 2)
        full.varint(4, 2)
        full.varint(5, 3)  // left -2, zigzag
        full.varint(6, 50)  // top 25
        full.varint(7, 12)
        var stack = PB()
        stack.string(1, "Noto Sans Regular")
        stack.string(2, "19968-20223")
        stack.message(3, glyph ?? full)
        stackExtra(&stack)
        var top = PB()
        top.message(1, stack)
        return top.bytes
    }

    func testGlyphRangesOfEveryFieldAreAccepted() {
        accepts(glyphs(), .glyphs)
        accepts(glyphs { $0.varint(9, 1) }, .glyphs)  // an unknown fontstack field is skipped
        accepts(Data(), .glyphs)
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
        refuses(glyphs { $0.varint(3, 3) }, .glyphs, containing: "glyph has wire type 0")
        var otherTop = PB()
        otherTop.string(2, "x")
        refuses(otherTop.bytes, .glyphs, containing: "not a glyph PBF: top-level field 2")
    }

    func testATruncatedGlyphRangeIsRefused() {
        let range = glyphs()
        for length in 1..<range.count {
            refuses(range.prefix(length), .glyphs, containing: "glyph PBF")
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
