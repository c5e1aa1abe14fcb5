import XCTest
@testable import TileMath

/// A template compiled once expands as `replaceTokens` with the tile tokens does, whatever its
/// braces, for any tile.
final class TileURLTemplateTests: XCTestCase {
    func testCompiledTemplatesExpandTheirTokens() {
        let tile = TileID(z: 5, x: 17, y: 30)
        let cases: [(String, Int, String)] = [
            ("https://t/{z}/{x}/{y}.pbf", 1, "https://t/5/17/30.pbf"),
            ("{z}{x}{y}", 1, "51730"),
            ("https://t/{z}/{x}/{y}{ratio}.png", 2, "https://t/5/17/30@2x.png"),
            ("https://t/{z}/{x}/{y}{ratio}.png", 1, "https://t/5/17/30.png"),
            ("q/{quadkey}?p={prefix}", 1, "q/32221?p=1e"),
            ("https://{s}.t/{a-c}/{z}", 1, "https://{s}.t/{a-c}/5"),
            ("https://t/{z/{x}/{y}", 1, "https://t/{z/17/30"),
            ("https://t/{{z}}", 1, "https://t/{5}"),
            ("}{{x}}{", 1, "}{17}{"),
            ("{}", 1, "{}"),
            ("é/{z}/ü", 1, "é/5/ü"),
            ("", 1, ""),
            ("no tokens", 1, "no tokens"),
        ]
        for (template, ratio, expected) in cases {
            XCTAssertEqual(TileURLTemplate.Compiled(template).expand(tile: tile, pixelRatio: ratio), expected, template)
        }
    }

    /// Templates strung together from pieces that open, close and nest braces, against the
    /// token-by-token replacement, for tiles of several zooms.
    func testCompiledExpansionEqualsTokenReplacement() {
        let pieces = ["{z}", "{x}", "{y}", "{", "}", "{s}", "a", "/", "{quadkey}", "{ratio}", "{{y}}", "é", "{prefix}",
                      "{bbox-epsg-3857}", "{z", "x}", "?k=${KEY}"]
        var generator = SystemRandomNumberGenerator()
        let tiles = [TileID(z: 0, x: 0, y: 0), TileID(z: 3, x: 5, y: 2), TileID(z: 14, x: 8_190, y: 5_461)]
        for _ in 0..<500 {
            let template = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }
                .joined()
            let compiled = TileURLTemplate.Compiled(template)
            for tile in tiles {
                for ratio in [1, 2] {
                    let expected = TileURLTemplate.replaceTokens(template) { token in
                        switch token {
                        case "z": return String(tile.z)
                        case "x": return String(tile.x)
                        case "y": return String(tile.y)
                        case "quadkey": return tile.quadkey
                        case "bbox-epsg-3857": return TileTokens.bboxEPSG3857(tile)
                        case "prefix": return TileTokens.prefix(tile)
                        case "ratio": return ratio > 1 ? "@2x" : ""
                        default: return nil
                        }
                    }
                    XCTAssertEqual(compiled.expand(tile: tile, pixelRatio: ratio), expected, "\(template) \(tile)")
                }
            }
        }
    }
}
