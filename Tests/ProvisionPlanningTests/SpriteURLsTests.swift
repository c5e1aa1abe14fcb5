import ProvisionModel
import ProvisionPlanning
import XCTest

final class SpriteURLsTests: XCTestCase {
    func testTable() {
        let cases: [(base: String, ratio: Int, kind: ResourceKind, url: String)] = [
            ("http://example.com/sprite", 2, .spriteImage, "http://example.com/sprite@2x.png"),
            ("http://example.com/sprite?query=true", 2, .spriteImage, "http://example.com/sprite@2x.png?query=true"),
            ("http://example.com/sprite?query=true", 2, .spriteJSON, "http://example.com/sprite@2x.json?query=true"),
            ("http://example.com/sprite?query=true", 1, .spriteJSON, "http://example.com/sprite.json?query=true"),
            ("https://t/sprites/v1?key=${KEY}#frag", 1, .spriteImage, "https://t/sprites/v1.png?key=${KEY}"),
            ("mapbox://sprites/mapbox/streets-v8", 2, .spriteImage, "mapbox://sprites/mapbox/streets-v8@2x.png"),
            ("mapbox://sprites/mapbox/streets-v8", 1, .spriteJSON, "mapbox://sprites/mapbox/streets-v8.json"),
        ]
        for c in cases {
            XCTAssertEqual(SpriteURLs.url(base: c.base, ratio: c.ratio, kind: c.kind), c.url, c.base)
        }
    }

    func testAlwaysFourFilesAtBothRatios() {
        XCTAssertEqual(SpriteURLs.resources(base: "https://t/sprite"), [
            ResourceRef(url: "https://t/sprite.png", kind: .spriteImage),
            ResourceRef(url: "https://t/sprite@2x.png", kind: .spriteImage),
            ResourceRef(url: "https://t/sprite.json", kind: .spriteJSON),
            ResourceRef(url: "https://t/sprite@2x.json", kind: .spriteJSON),
        ])
        XCTAssertEqual(SpriteURLs.resources(base: ""), [])
    }
}
