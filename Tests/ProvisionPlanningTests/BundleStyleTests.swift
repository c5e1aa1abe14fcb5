import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import XCTest

/// A style rewritten for a bundle: tiled sources read archives, sprites and glyphs are
/// relative, everything else is left as it was.
final class BundleStyleTests: XCTestCase {
    private let style: JSONValue = [
        "version": 8,
        "sprite": [["id": "base", "url": "https://example.com/sprites/base"], ["id": "extra", "url": "https://other.example/s"]],
        "glyphs": "https://example.com/fonts/{fontstack}/{range}.pbf",
        "sources": [
            "streets": ["type": "vector", "url": "https://example.com/streets.json", "attribution": "© Example",
                        "promoteId": "id"],
            "hills": ["type": "raster-dem", "tiles": ["https://example.com/dem/{z}/{x}/{y}.png"], "scheme": "tms",
                      "tileSize": 256, "encoding": "terrarium", "minzoom": 2, "maxzoom": 12, "bounds": [-10, -10, 10, 10]],
            "points": ["type": "geojson", "data": "https://example.com/points.geojson"],
        ],
        "layers": [["id": "water", "type": "fill", "source": "streets", "source-layer": "water"]],
    ]

    func testTiledSourcesReadTheirArchivesAndKeepTheirOtherProperties() throws {
        let rewritten = BundleStyle.rewrite(style, archives: ["streets": "streets.pmtiles", "hills": "hills.pmtiles"],
                                            sprites: ["https://example.com/sprites/base": "sprites/base"],
                                            glyphs: "fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(rewritten["sources"]?["streets"],
                       ["type": "vector", "url": "pmtiles://streets.pmtiles", "attribution": "© Example", "promoteId": "id"])
        XCTAssertEqual(rewritten["sources"]?["hills"],
                       ["type": "raster-dem", "url": "pmtiles://hills.pmtiles", "tileSize": 256, "encoding": "terrarium"],
                       "tiles, scheme, zooms and bounds are the archive header's")
        XCTAssertEqual(rewritten["sources"]?["points"], style["sources"]?["points"], "a source without an archive is left")
        XCTAssertEqual(rewritten["sprite"], [["id": "base", "url": "sprites/base"], ["id": "extra", "url": "https://other.example/s"]])
        XCTAssertEqual(rewritten["glyphs"], "fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(rewritten["layers"], style["layers"])
        XCTAssertEqual(rewritten["version"], 8)
        XCTAssertEqual(rewritten.objectValue?.keys, style.objectValue?.keys, "members keep their order")
    }

    func testAStringSpriteAndAStyleWithoutGlyphs() {
        let plain: JSONValue = ["version": 8, "sprite": "https://example.com/sprite", "sources": [:], "layers": []]
        let rewritten = BundleStyle.rewrite(plain, archives: [:], sprites: ["https://example.com/sprite": "sprites/sprite"],
                                            glyphs: "fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(rewritten["sprite"], "sprites/sprite")
        XCTAssertNil(rewritten["glyphs"], "no glyphs are added to a style that has none")
    }
}
