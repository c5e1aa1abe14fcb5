import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 9: a style shaped like a hosted provider's (an attribution-only source, a vector source
/// by TileJSON URL, a 256-pixel raster-dem, a raster at the device's `{ratio}`, a GeoJSON URL,
/// fonts in expressions and a symbol layer without `text-font`) plans, says what it does, and
/// applies with exactly the glyph URLs a device looks up. The style is written here, not copied.
final class StyleWalkTests: WorkspaceTestCase {
    private let base = "https://tiles.provider.example/"
    private var styleURL: String { base + "styles/outdoor/style.json" }
    /// Paris at z10–11: the demo archive holds its vector tiles.
    private let zooms = 10...11

    private var style: JSONValue {
        [
            "version": 8, "name": "Outdoor (test)",
            "sources": [
                "maptiler_attribution": ["type": "vector", "attribution": "<a href=\"https://provider.example/\">© Provider</a>"],
                "outdoor": ["type": "vector", "url": .string(base + "tiles/outdoor.json")],
                "terrain": ["type": "raster-dem", "tiles": [.string(base + "tiles/terrain/{z}/{x}/{y}.png")], "tileSize": 256,
                            "encoding": "terrarium", "maxzoom": 12],
                "satellite": ["type": "raster", "tiles": [.string(base + "tiles/satellite/{z}/{x}/{y}{ratio}.jpg")],
                              "tileSize": 512, "maxzoom": 11],
                "huts": ["type": "geojson", "data": .string(base + "data/huts.geojson")],
            ],
            "glyphs": .string(base + "fonts/{fontstack}/{range}.pbf"),
            "sprite": .string(base + "styles/outdoor/sprite"),
            "layers": [
                ["id": "background", "type": "background"],
                ["id": "hillshade", "type": "hillshade", "source": "terrain"],
                ["id": "satellite", "type": "raster", "source": "satellite"],
                ["id": "place", "type": "symbol", "source": "outdoor", "source-layer": "place",
                 "layout": ["text-field": "{name}", "text-font": [
                    "match", ["get", "class"], "city", ["literal", ["Noto Sans Bold"]], ["literal", ["Noto Sans Regular"]]]]],
                ["id": "peak", "type": "symbol", "source": "outdoor", "source-layer": "mountain_peak",
                 "layout": ["text-field": ["get", "name"], "text-font": [
                    "step", ["zoom"], ["literal", ["Noto Sans Italic"]], 12, ["literal", ["Noto Sans Bold"]]]]],
                ["id": "hut", "type": "symbol", "source": "huts", "layout": ["text-field": "{name}"]],
                ["id": "poi-icon", "type": "symbol", "source": "outdoor", "source-layer": "poi",
                 "layout": ["icon-image": "dot", "text-font": ["Never Fetched"]]],
            ],
        ]
    }

    /// Writes the provider's documents, glyphs, sprites and raster tiles into a directory the
    /// loopback server serves under `/provider/`.
    private func serveProvider(style: JSONValue) throws {
        let root = ws.root.appendingPathComponent("provider")
        func write(_ data: Data, _ path: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        try write(style.data(), "styles/outdoor/style.json")
        let tileJSON: JSONValue = ["tilejson": "3.0.0", "tiles": [.string(base + "tiles/outdoor/{z}/{x}/{y}.pbf"),
                                                                  "https://mirror.provider.example/outdoor/{z}/{x}/{y}.pbf"],
                                   "minzoom": 0, "maxzoom": 14]
        try write(tileJSON.data(.prettySorted), "tiles/outdoor.json")
        let huts: JSONValue = ["type": "FeatureCollection", "features": [
            ["type": "Feature", "properties": ["name": "Refuge"], "geometry": ["type": "Point", "coordinates": [2.36, 48.85]]]]]
        try write(huts.data(.prettySorted), "data/huts.geojson")
        let sprites = Demo.directory.appendingPathComponent("sprites")
        for suffix in [".png", "@2x.png", ".json", "@2x.json"] {
            try write(Data(contentsOf: sprites.appendingPathComponent("streets" + suffix)), "styles/outdoor/sprite" + suffix)
        }
        for stack in expectedStacks {
            for start in expectedRangeStarts {
                let range = "\(start)-\(start + 255).pbf"
                try write(Data(contentsOf: Demo.directory.appendingPathComponent("fonts/Noto Sans Regular/" + range)),
                          "fonts/\(stack)/" + range)
            }
        }
        // Whole images: bodies are checked deep (PNG chunks and CRCs) before they are stored.
        let png = FixturePNG.solid(width: 4, height: 4, rgb: (10, 20, 30))
        for tile in WebMercatorOracle.tiles(bbox: Demo.paris.bbox, zooms: 11...12) {
            try write(png, "tiles/terrain/\(tile.z)/\(tile.x)/\(tile.y).png")
        }
        for tile in WebMercatorOracle.tiles(bbox: Demo.paris.bbox, zooms: zooms) {
            try write(png, "tiles/satellite/\(tile.z)/\(tile.x)/\(tile.y)@2x.jpg")
        }
        ws.server.serveDirectory(root, at: "/provider/")
    }

    /// The font stacks a device asks for, as `{fontstack}` joins them, in std::set order.
    private let expectedStacks = ["Noto Sans Bold", "Noto Sans Italic", "Noto Sans Regular",
                                  "Open Sans Regular,Arial Unicode MS Regular"]
    /// The 130 ranges of `ideographs-local`: all 256 but CJK Unified Ideographs and Hangul Syllables.
    private var expectedRangeStarts: [Int] {
        (0..<256).filter { !(78...159).contains($0) && !(172...215).contains($0) }.map { $0 * 256 }
    }

    private func writeJob() throws -> String {
        let job: JSONValue = [
            "version": 1, "name": "provider", "store": "store",
            "stylePacks": [["id": "outdoor", "style": .string(styleURL), "pixelRatio": 2, "glyphs": "ideographs-local"]],
            "regions": [Demo.paris.region(zoom: zooms, stylePacks: ["outdoor"])],
            "origins": .object(JSONObject([
                (base + "tiles/outdoor/", .string("mbtiles:" + Demo.mbtiles.path)),
                (base, .string(ws.server.baseURL + "/provider/")),
            ])),
            "download": ["concurrency": 8, "retries": 1, "timeoutSeconds": 10],
        ]
        return try ws.write(job).path
    }

    func testProviderStylePlansWhatItDoesAndAppliesTheGlyphsADeviceLooksUp() throws {
        try serveProvider(style: style)
        let job = try writeJob()

        let plan = try ws.provision("plan", "--json", job)
        plan.expect(0, "plan")
        let document = try parseJSON(plan.stdout)
        let pack = document["stylePacks"]?.arrayValue?.first
        let sources = pack?["sources"]?.arrayValue ?? []
        guard sources.count == 5 else { return XCTFail("expected 5 sources: \(plan.stdout.prefix(3000)) \(plan.stderr)") }
        XCTAssertEqual(sources.compactMap { $0["name"]?.stringValue },
                       ["maptiler_attribution", "outdoor", "terrain", "satellite", "huts"])
        XCTAssertEqual(sources.compactMap { $0["type"]?.stringValue }, ["vector", "vector", "raster-dem", "raster", "geojson"])
        XCTAssertEqual(sources.compactMap { $0["fetch"]?.stringValue }, ["skipped", "tiles", "tiles", "tiles", "resource"])
        XCTAssertEqual(sources[0]["reason"]?.stringValue?.contains("neither \"url\" nor \"tiles\""), true, plan.stdout)
        XCTAssertEqual(sources[1]["templates"], 2, "the TileJSON listed two templates")
        XCTAssertEqual(sources[1]["tileset"]?["template"]?.stringValue, base + "tiles/outdoor/{z}/{x}/{y}.pbf")
        func fetched(_ source: JSONValue) -> [String] {
            (source["zooms"]?.arrayValue ?? []).map {
                "\($0["region"]?.stringValue ?? "?") \($0["min"]?.intValue ?? -1)-\($0["max"]?.intValue ?? -1)"
            }
        }
        XCTAssertEqual(fetched(sources[1]), ["paris 10-11"])
        XCTAssertEqual(fetched(sources[2]), ["paris 11-12"], "256-px raster-dem: one zoom up, capped by its maxzoom")
        XCTAssertEqual(fetched(sources[3]), ["paris 10-11"])
        XCTAssertEqual(sources[4]["url"]?.stringValue, base + "data/huts.geojson")
        XCTAssertEqual(pack?["fontStacks"]?.arrayValue?.compactMap { $0["fonts"]?.arrayValue?.compactMap { $0.stringValue } },
                       expectedStacks.map { $0.split(separator: ",").map(String.init) })
        XCTAssertEqual(pack?["fontStacks"]?.arrayValue?.first?["glyphRanges"], 130)
        let notes = document["notes"]?.arrayValue ?? []
        XCTAssertTrue(notes.contains { $0["subject"] == "stylePack 'outdoor'"
                && $0["message"]?.stringValue?.contains("'maptiler_attribution'") == true }, "\(notes)")

        let text = try ws.provision("plan", job)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("    source maptiler_attribution (vector): skipped: "), text.stdout)
        XCTAssertTrue(text.stdout.contains("    source terrain (raster-dem): tiles \(base)tiles/terrain/{z}/{x}/{y}.png, z11-12\n"),
                      text.stdout)
        XCTAssertTrue(text.stdout.contains("    fonts: 4 stacks × 130 glyph ranges: Noto Sans Bold; Noto Sans Italic; "),
                      text.stdout)

        try ws.provision("apply", "--quiet", job).expect(0, "apply")
        let glyphs = try ws.sqlite.rows("SELECT url FROM resources WHERE kind = 4 ORDER BY url").map { $0[0] }
        let expected = expectedStacks.flatMap { stack in
            expectedRangeStarts.map { start in
                base + "fonts/" + stack.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: ",", with: "%2c")
                    + "/\(start)-\(start + 255).pbf"
            }
        }
        XCTAssertEqual(glyphs, expected.sorted(), "exactly the glyph URLs a device looks up")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 2 AND url = '\(base)data/huts.geojson'"), 1)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE url LIKE '%Never%'"), 0)
        let satellite = try ws.sqlite.rows("SELECT DISTINCT pixel_ratio FROM tiles WHERE url_template LIKE '%satellite%'")
        XCTAssertEqual(satellite, [["2"]], "raster tiles with {ratio} are stored at the pack's ratio")
        let satellitePaths = ws.requests(under: "/provider/tiles/satellite/").map(\.path)
        XCTAssertEqual(Set(satellitePaths).count, WebMercatorOracle.tiles(bbox: Demo.paris.bbox, zooms: zooms).count)
        XCTAssertTrue(satellitePaths.allSatisfy { $0.hasSuffix("@2x.jpg") }, "\(satellitePaths)")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template LIKE '%terrain%'"),
                       WebMercatorOracle.tiles(bbox: Demo.paris.bbox, zooms: 11...12).count)
        try ws.provision("plan", "--detailed-exitcode", job).expect(0, "converged")
    }

    /// A style-level error names the style's URL, the style pack and the JSON pointer.
    func testStyleErrorsNameTheURLThePackAndThePointer() throws {
        let cases: [(pointer: String, value: JSONValue, says: String)] = [
            ("/sprite", 3, "expected a sprite URL or an array"),
            ("/sources/outdoor/url", "not a url", "expected an absolute http://, https:// or mapbox:// URL"),
            ("/glyphs", .string(base + "fonts/{fontstack}.pbf"), "{range}"),
        ]
        for c in cases {
            guard var broken = style.objectValue else { return XCTFail("the style is not an object") }
            if c.pointer == "/sources/outdoor/url" {
                broken["sources"] = ["outdoor": ["type": "vector", "url": c.value]]
            } else {
                broken[String(c.pointer.dropFirst())] = c.value
            }
            ws.server.setRoute("/provider/styles/outdoor/style.json", .ok(JSONValue.object(broken).data(),
                                                                          contentType: "application/json"))
            try serveProvider(style: style)
            let result = try ws.provision("plan", try writeJob())
            result.expect(65, c.pointer)
            XCTAssertTrue(result.stderr.contains("style \(styleURL) of style pack 'outdoor' cannot be used"), result.stderr)
            XCTAssertTrue(result.stderr.contains("\(styleURL): \(c.pointer): "), result.stderr)
            XCTAssertTrue(result.stderr.contains(c.says), result.stderr)
        }
        ws.server.setRoute("/provider/styles/outdoor/style.json", .ok(Data("[8]".utf8), contentType: "application/json"))
        let root = try ws.provision("plan", "--json", try writeJob())
        root.expect(65, "a root that is not an object")
        let error = try parseJSON(root.stdout)
        let diagnostic = error["diagnostics"]?.arrayValue?.first
        XCTAssertEqual(diagnostic?["file"]?.stringValue, styleURL)
        XCTAssertEqual(diagnostic?["pointer"], "")
        XCTAssertEqual(diagnostic?["message"]?.stringValue?.contains("expected an object"), true, root.stdout)
        XCTAssertTrue(root.stderr.contains("style \(styleURL) of style pack 'outdoor' cannot be used"), root.stderr)
    }
}
