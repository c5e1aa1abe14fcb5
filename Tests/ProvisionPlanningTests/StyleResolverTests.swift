import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import XCTest

final class StyleResolverTests: XCTestCase {
    private let styleURL = "https://maps.example.com/styles/demo.json"

    private func resolve(_ style: JSONValue, glyphs: GlyphPolicy = .ideographsLocal) throws -> ResolvedStyle {
        try StyleResolver.resolve(styleURL: styleURL, style: style,
                                  pack: StylePack(id: "demo", style: styleURL, pixelRatio: 2, glyphs: glyphs))
    }

    private var fullStyle: JSONValue {
        [
            "version": 8,
            "sprite": "https://maps.example.com/sprites/demo?key=${KEY}",
            "glyphs": "https://maps.example.com/fonts/{fontstack}/{range}.pbf",
            "sources": [
                "streets": ["type": "vector", "url": "https://maps.example.com/tiles/streets.json"],
                "sat": ["type": "raster", "url": "mapbox://mapbox.satellite", "tileSize": 256],
                "hillshade": ["type": "raster-dem", "tiles": ["https://dem.example.com/{z}/{x}/{y}.png"], "maxzoom": 12,
                              "scheme": "tms"],
                "inline": ["type": "vector", "tiles": ["https://v.example.com/{z}/{x}/{y}.pbf"], "minzoom": 2,
                           "tileSize": 256],
                "points": ["type": "geojson", "data": "https://maps.example.com/points.geojson"],
                "shapes": ["type": "geojson", "data": ["type": "FeatureCollection", "features": []]],
                "overlay": ["type": "image", "url": "https://maps.example.com/overlay.png",
                            "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]],
                "clip": ["type": "video", "urls": ["https://maps.example.com/v.mp4"]],
                "streets-again": ["type": "vector", "url": "https://maps.example.com/tiles/streets.json"],
            ],
            "layers": [
                ["id": "labels", "type": "symbol", "source": "streets", "layout": ["text-field": "{name}"]],
                ["id": "pois", "type": "symbol", "source": "streets",
                 "layout": ["text-field": "{name}", "text-font": ["Noto Sans Bold"]]],
                ["id": "icons", "type": "symbol", "source": "streets", "layout": ["icon-image": "dot"]],
            ],
        ]
    }

    func testResourcesFollowMapLibreOrder() throws {
        let resolved = try resolve(fullStyle)
        let head = Array(resolved.resources.prefix(5))
        XCTAssertEqual(head, [
            ResourceRef(url: styleURL, kind: .style),
            ResourceRef(url: "https://maps.example.com/tiles/streets.json", kind: .source),
            ResourceRef(url: "mapbox://mapbox.satellite", kind: .source),
            ResourceRef(url: "https://maps.example.com/points.geojson", kind: .source),
            ResourceRef(url: "https://maps.example.com/overlay.png", kind: .image),
        ])
        // 2 font stacks × 130 ranges, then 4 sprite files.
        XCTAssertEqual(resolved.fontStacks, [["Noto Sans Bold"], FontStacks.defaultStack])
        let glyphs = resolved.resources.filter { $0.kind == .glyphs }
        XCTAssertEqual(glyphs.count, 260)
        XCTAssertEqual(glyphs.first?.url, "https://maps.example.com/fonts/Noto%20Sans%20Bold/0-255.pbf")
        XCTAssertEqual(glyphs[130].url,
                       "https://maps.example.com/fonts/Open%20Sans%20Regular%2cArial%20Unicode%20MS%20Regular/0-255.pbf")
        XCTAssertEqual(Array(resolved.resources.suffix(4)), [
            ResourceRef(url: "https://maps.example.com/sprites/demo.png?key=${KEY}", kind: .spriteImage),
            ResourceRef(url: "https://maps.example.com/sprites/demo@2x.png?key=${KEY}", kind: .spriteImage),
            ResourceRef(url: "https://maps.example.com/sprites/demo.json?key=${KEY}", kind: .spriteJSON),
            ResourceRef(url: "https://maps.example.com/sprites/demo@2x.json?key=${KEY}", kind: .spriteJSON),
        ])
        XCTAssertEqual(resolved.resources.count, 5 + 260 + 4, "the repeated TileJSON URL is listed once")
        XCTAssertEqual(resolved.tileJSONURLs, ["https://maps.example.com/tiles/streets.json", "mapbox://mapbox.satellite"])
    }

    func testAllGlyphPolicyFetches256RangesPerStack() throws {
        let resolved = try resolve(fullStyle, glyphs: .all)
        XCTAssertEqual(resolved.resources.filter { $0.kind == .glyphs }.count, 512)
    }

    func testSources() throws {
        let resolved = try resolve(fullStyle)
        let sources = resolved.sources
        XCTAssertEqual(sources.map(\.name),
                       ["streets", "sat", "hillshade", "inline", "points", "shapes", "overlay", "streets-again"],
                       "the video source is skipped")
        XCTAssertEqual(sources[0], SourceRef(name: "streets", type: .vector,
                                             tileJSONURL: "https://maps.example.com/tiles/streets.json", tileSize: 512))
        XCTAssertEqual(sources[1], SourceRef(name: "sat", type: .raster, tileJSONURL: "mapbox://mapbox.satellite", tileSize: 256))
        XCTAssertEqual(sources[2].tileset, TileSource(template: "https://dem.example.com/{z}/{x}/{y}.png", scheme: .tms,
                                                      minZoom: 0, maxZoom: 12, tileSize: 512, type: .rasterDEM))
        // A vector source's tileSize is always 512, whatever the style says.
        XCTAssertEqual(sources[3].tileset, TileSource(template: "https://v.example.com/{z}/{x}/{y}.pbf", minZoom: 2,
                                                      tileSize: 512, type: .vector))
        XCTAssertEqual(sources[4], SourceRef(name: "points", type: .geojson, dataURL: "https://maps.example.com/points.geojson"))
        XCTAssertEqual(sources[5], SourceRef(name: "shapes", type: .geojson))
        XCTAssertEqual(sources[6].dataURL, "https://maps.example.com/overlay.png")
        XCTAssertEqual(resolved.overview.sources.map(\.name),
                       ["streets", "sat", "hillshade", "inline", "points", "shapes", "overlay", "clip", "streets-again"])
        XCTAssertEqual(resolved.overview.sources.map(\.fetch.name),
                       ["tiles", "tiles", "tiles", "tiles", "resource", "nothing", "resource", "skipped", "tiles"])
        XCTAssertEqual(resolved.overview.sources[7].type, "video")
        XCTAssertEqual(resolved.notes.map(\.subject), ["stylePack 'demo'"])
        XCTAssertTrue(resolved.notes[0].message.contains("source 'clip' (/sources/clip) is skipped"), resolved.notes[0].message)
        XCTAssertEqual(resolved.overview.fontStacks, [["Noto Sans Bold"], FontStacks.defaultStack])
        XCTAssertEqual(resolved.overview.glyphRangesPerStack, 130)
        XCTAssertEqual(resolved.overview.glyphsTemplate, "https://maps.example.com/fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(resolved.overview.sprites, ["https://maps.example.com/sprites/demo?key=${KEY}"])
    }

    func testTileJSONSourceResolvesWithTheStyleTileSizeAndCanonicalisation() throws {
        let sat = try resolve(fullStyle).sources[1]
        let tileJSON: JSONValue = ["tiles": ["https://a.tiles.mapbox.com/v4/mapbox.satellite/{z}/{x}/{y}.png?access_token=pk.1"],
                                   "maxzoom": 19]
        let tileset = try sat.resolvedTileset(tileJSON: tileJSON)
        XCTAssertEqual(tileset, TileSource(template: "mapbox://tiles/mapbox.satellite/{z}/{x}/{y}{ratio}.png", scheme: .xyz,
                                           minZoom: 0, maxZoom: 19, tileSize: 256, type: .raster))
        XCTAssertEqual(tileset?.zoomRange(regionMin: 0, regionMax: 15), 1...16)
        XCTAssertNil(try sat.resolvedTileset(tileJSON: nil))
    }

    func testSpriteArrayFormFetchesEachSprite() throws {
        var style = fullStyle.objectValue ?? JSONObject()
        style["sprite"] = [["id": "default", "url": "https://s/a"], ["id": "extra", "url": "mapbox://sprites/u/s"]]
        style["glyphs"] = nil
        let resolved = try resolve(.object(style))
        XCTAssertEqual(resolved.spriteBases, ["https://s/a", "mapbox://sprites/u/s"])
        XCTAssertEqual(resolved.resources.filter { $0.kind == .spriteImage || $0.kind == .spriteJSON }.map(\.url), [
            "https://s/a.png", "https://s/a@2x.png", "https://s/a.json", "https://s/a@2x.json",
            "mapbox://sprites/u/s.png", "mapbox://sprites/u/s@2x.png", "mapbox://sprites/u/s.json", "mapbox://sprites/u/s@2x.json",
        ])
        XCTAssertTrue(resolved.resources.allSatisfy { $0.kind != .glyphs }, "no glyphs without a glyphs template")
        XCTAssertEqual(resolved.fontStacks, [])
    }

    func testMinimalStyleHasOnlyItself() throws {
        let resolved = try resolve(["version": 8, "sources": [:], "layers": []])
        XCTAssertEqual(resolved.resources, [ResourceRef(url: styleURL, kind: .style)])
        XCTAssertEqual(resolved.sources, [])
    }

    func testErrorsCarryAPointer() {
        let cases: [(name: String, style: JSONValue, pointer: String, says: String)] = [
            ("not an object", [1, 2], "", "expected a style object, found an array"),
            ("a string root", "style", "", "expected a style object, found a string"),
            ("no version", ["sources": [:]], "", "version"),
            ("wrong version", ["version": 7, "sources": [:]], "/version", "expected 8"),
            ("no sources", ["version": 8], "", "sources"),
            ("sources not an object", ["version": 8, "sources": []], "/sources", "expected an object of sources"),
            ("url not a string", ["version": 8, "sources": ["s": ["type": "vector", "url": 3]]], "/sources/s/url",
             "expected a TileJSON URL string"),
            ("url empty", ["version": 8, "sources": ["s": ["type": "vector", "url": ""]]], "/sources/s/url",
             "found an empty string"),
            ("url not a url", ["version": 8, "sources": ["s": ["type": "vector", "url": "not a url"]]], "/sources/s/url",
             "expected an absolute http://, https:// or mapbox:// URL, found \"not a url\""),
            ("url relative", ["version": 8, "sources": ["a/b": ["type": "raster", "url": "tiles/sat.json"]]],
             "/sources/a~1b/url", "does not resolve URLs in a style against the style's own URL"),
            ("url of another scheme", ["version": 8, "sources": ["s": ["type": "vector", "url": "pmtiles://x.pmtiles"]]],
             "/sources/s/url", "found a pmtiles: URL"),
            ("url with a space", ["version": 8, "sources": ["s": ["type": "vector", "url": "https://a b/t.json"]]],
             "/sources/s/url", "without spaces"),
            ("bad tile", ["version": 8, "sources": ["s": ["type": "vector", "tiles": ["ok", nil]]]], "/sources/s/tiles/1",
             "URL template string"),
            ("relative tile template", ["version": 8, "sources": ["s": ["type": "vector", "tiles": ["{z}/{x}/{y}.pbf"]]]],
             "/sources/s/tiles/0", "absolute"),
            ("bad tileSize", ["version": 8, "sources": ["s": ["type": "raster", "url": "https://u/t.json", "tileSize": "256"]]],
             "/sources/s/tileSize", "tile size"),
            ("geojson data number", ["version": 8, "sources": ["g": ["type": "geojson", "data": 1]]], "/sources/g/data",
             "expected a GeoJSON URL or object"),
            ("geojson data relative", ["version": 8, "sources": ["g": ["type": "geojson", "data": "points.geojson"]]],
             "/sources/g/data", "absolute"),
            ("image url number", ["version": 8, "sources": ["i": ["type": "image", "url": 1, "coordinates": []]]],
             "/sources/i/url", "image URL string"),
            ("image url relative", ["version": 8, "sources": ["i": ["type": "image", "url": "a.png", "coordinates": []]]],
             "/sources/i/url", "absolute"),
            ("glyphs not a string", ["version": 8, "sources": [:], "glyphs": 1], "/glyphs", "found a number"),
            ("glyphs without tokens", ["version": 8, "sources": [:], "glyphs": "https://f/{fontstack}.pbf"], "/glyphs",
             "which has no {range}"),
            ("glyphs relative", ["version": 8, "sources": [:], "glyphs": "fonts/{fontstack}/{range}.pbf"], "/glyphs",
             "absolute"),
            ("sprite number", ["version": 8, "sources": [:], "sprite": 1], "/sprite", "found a number"),
            ("sprite object", ["version": 8, "sources": [:], "sprite": ["url": "https://s/a"]], "/sprite", "found an object"),
            ("sprite relative", ["version": 8, "sources": [:], "sprite": "sprites/a"], "/sprite", "absolute"),
            ("sprite entry not an object", ["version": 8, "sources": [:], "sprite": ["https://s/a"]], "/sprite/0",
             "found a string"),
            ("sprite entry without id", ["version": 8, "sources": [:], "sprite": [["url": "https://s/a"]]], "/sprite/0",
             "with an \"id\""),
            ("sprite entry id number", ["version": 8, "sources": [:], "sprite": [["id": 1, "url": "https://s/a"]]],
             "/sprite/0/id", "sprite id string"),
            ("sprite entry without url", ["version": 8, "sources": [:], "sprite": [["id": "a"]]], "/sprite/0",
             "with a \"url\""),
            ("sprite entry url relative", ["version": 8, "sources": [:], "sprite": [["id": "a", "url": "https://s/a"],
                                                                                  ["id": "b", "url": "b"]]],
             "/sprite/1/url", "absolute"),
            ("duplicate sprite id", ["version": 8, "sources": [:],
                                     "sprite": [["id": "a", "url": "https://s/u"], ["id": "a", "url": "https://s/v"]]],
             "/sprite/1/id", "unique"),
        ]
        for c in cases {
            XCTAssertThrowsError(try resolve(c.style), c.name) { error in
                guard let e = error as? DocumentProblem else { return XCTFail("\(c.name): \(error)") }
                XCTAssertEqual(e.pointer, c.pointer, c.name)
                XCTAssertEqual(e.document, self.styleURL, c.name)
                XCTAssertTrue(e.message.contains(c.says), "\(c.name): \(e.message)")
                XCTAssertTrue(e.description.hasPrefix("\(self.styleURL): \(c.pointer.isEmpty ? "/" : c.pointer): "), c.name)
            }
        }
    }
}
