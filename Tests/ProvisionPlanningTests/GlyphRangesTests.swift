import ProvisionModel
import ProvisionPlanning
import XCTest

final class GlyphRangesTests: XCTestCase {
    func testAllPolicyHas256RangesOfTheBMP() {
        let all = GlyphRanges.ranges(for: .all)
        XCTAssertEqual(all.count, 256)
        XCTAssertEqual(all.first?.description, "0-255")
        XCTAssertEqual(all.last?.description, "65280-65535")
    }

    func testIdeographsLocalKeeps130AndSkipsExactlyCJKAndHangulRanges() {
        let kept = GlyphRanges.ranges(for: .ideographsLocal)
        XCTAssertEqual(kept.count, 130)
        let skippedIndices = Set(0..<256).subtracting(kept.map { $0.start / 256 })
        XCTAssertEqual(skippedIndices, Set(78...159).union(172...215))
        XCTAssertEqual(skippedIndices.count, 126)
        // 0x3000 (CJK symbols, Hiragana, Katakana) starts outside the blocks and is kept.
        XCTAssertTrue(kept.contains(GlyphRange(start: 0x3000)))
        XCTAssertFalse(kept.contains(GlyphRange(start: 19968)))
        XCTAssertFalse(kept.contains(GlyphRange(start: 55040)))
        XCTAssertTrue(kept.contains(GlyphRange(start: 55296)))
    }

    func testFontStackIsJoinedAndPercentEncodedWithLowercaseHex() {
        let url = GlyphRanges.url(template: "https://g/{fontstack}/{range}.pbf",
                                  fontStack: FontStacks.defaultStack, range: GlyphRange(start: 256))
        XCTAssertEqual(url, "https://g/Open%20Sans%20Regular%2cArial%20Unicode%20MS%20Regular/256-511.pbf")
        XCTAssertEqual(GlyphRanges.url(template: "http://example.com/{fontstack}/{range}", fontStack: ["stack"],
                                       range: GlyphRange(start: 0)), "http://example.com/stack/0-255")
        XCTAssertEqual(GlyphRanges.url(template: "g/{fontstack}/{range}{key}", fontStack: ["Noto Sans/Ö"],
                                       range: GlyphRange(start: 0)), "g/Noto%20Sans%2f%c3%96/0-255{key}")
    }

    func testURLsEnumerateStacksThenRanges() {
        let urls = GlyphRanges.urls(template: "g/{fontstack}/{range}", fontStacks: [["A"], ["B"]], policy: .ideographsLocal)
        XCTAssertEqual(urls.count, 260)
        XCTAssertEqual(urls[0], "g/A/0-255")
        XCTAssertEqual(urls[129], "g/A/65280-65535")
        XCTAssertEqual(urls[130], "g/B/0-255")
    }
}
