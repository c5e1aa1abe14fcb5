import ProvisionFoundation
import ProvisionModel
@testable import ProvisionPlanning
import TileMath
import XCTest

final class TileSourceTests: XCTestCase {
    private func source(_ template: String, scheme: TileSource.Scheme = .xyz, type: SourceType = .raster,
                        tileSize: Int = 512, minZoom: Int = 0, maxZoom: Int = 22) -> TileSource {
        TileSource(template: template, scheme: scheme, minZoom: minZoom, maxZoom: maxZoom, tileSize: tileSize, type: type)
    }

    // MARK: Token expansion (MapLibre test/storage/resource.test.cpp vectors)

    func testTileURLExpansionTable() {
        let cases: [(name: String, template: String, scheme: TileSource.Scheme, ratio: Int, tile: TileID, url: String)] = [
            ("ratio 2x", "http://example.com/{z}/{x}/{y}{ratio}.png", .xyz, 2, TileID(z: 3, x: 1, y: 2),
             "http://example.com/3/1/2@2x.png"),
            ("ratio 1x", "http://example.com/{z}/{x}/{y}{ratio}.png", .xyz, 1, TileID(z: 3, x: 1, y: 2),
             "http://example.com/3/1/2.png"),
            ("tms flip", "http://example.com/{z}/{x}/{y}{ratio}.png", .tms, 1, TileID(z: 3, x: 1, y: 2),
             "http://example.com/3/1/5.png"),
            ("quadkey z1", "http://example.com/{quadkey}.png", .xyz, 2, TileID(z: 1, x: 0, y: 0),
             "http://example.com/0.png"),
            ("quadkey z2", "http://example.com/{quadkey}.png", .xyz, 2, TileID(z: 2, x: 1, y: 1),
             "http://example.com/03.png"),
            ("quadkey z6", "http://example.com/{quadkey}.png", .xyz, 2, TileID(z: 6, x: 29, y: 3),
             "http://example.com/011123.png"),
            ("quadkey z17", "http://example.com/{quadkey}.png", .xyz, 2, TileID(z: 17, x: 22914, y: 52870),
             "http://example.com/02301322130000230.png"),
            ("quadkey z12 (mercantile)", "q/{quadkey}", .xyz, 1, TileID(z: 12, x: 1000, y: 2000), "q/023333121000"),
            ("quadkey z0 is empty", "q/{quadkey}.png", .xyz, 1, TileID(z: 0, x: 0, y: 0), "q/.png"),
            ("bbox z1", "http://example.com/?bbox={bbox-epsg-3857}", .xyz, 2, TileID(z: 1, x: 0, y: 0),
             "http://example.com/?bbox=-20037508.342789245,0,0,20037508.342789245"),
            ("prefix", "https://t/{prefix}/{z}/{x}/{y}", .xyz, 1, TileID(z: 5, x: 17, y: 30), "https://t/1e/5/17/30"),
            ("prefix uses stored row", "https://t/{prefix}", .tms, 1, TileID(z: 5, x: 17, y: 30), "https://t/11"),
            ("unknown tokens stay", "https://{s}.t/{a-c}/{z}/{x}/{y}.pbf", .xyz, 1, TileID(z: 1, x: 1, y: 0),
             "https://{s}.t/{a-c}/1/1/0.pbf"),
            ("unclosed brace stays", "https://t/{z/{x}/{y}", .xyz, 1, TileID(z: 1, x: 1, y: 0), "https://t/{z/1/0"),
            ("nested braces", "https://t/{{z}}", .xyz, 1, TileID(z: 4, x: 1, y: 0), "https://t/{4}"),
        ]
        for c in cases {
            XCTAssertEqual(source(c.template, scheme: c.scheme).url(for: c.tile, pixelRatio: c.ratio), c.url, c.name)
        }
    }

    func testBBoxAgreesWithMercantile() {
        // mercantile.xy_bounds(x, y, z): (left, bottom, right, top)
        let cases: [(TileID, [Double])] = [
            (TileID(z: 17, x: 22914, y: 52870), [-13031596.07828313, 3872299.8529270287, -13031290.330169989, 3872605.6010401696]),
            (TileID(z: 4, x: 5, y: 9), [-7514065.628545966, -5009377.08569731, -5009377.08569731, -2504688.542848654]),
            (TileID(z: 2, x: 1, y: 1), [-10018754.171394622, 0, 0, 10018754.171394622]),
        ]
        for (tile, expected) in cases {
            let text = TileURLTemplate.expand("{bbox-epsg-3857}", tile: tile, pixelRatio: 1)
            let values = text.split(separator: ",").compactMap { Double($0) }
            XCTAssertEqual(values.count, 4, text)
            for (a, b) in zip(values, expected) { XCTAssertEqual(a, b, accuracy: 1e-6, "\(tile) \(text)") }
        }
    }

    // MARK: Keys

    func testTMSKeyStoresFlippedRow() {
        let key = source("http://example.com/{z}/{x}/{y}{ratio}.png", scheme: .tms).tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 1)
        XCTAssertEqual(key, TileKey(urlTemplate: "http://example.com/{z}/{x}/{y}{ratio}.png", pixelRatio: 1,
                                    tile: TileID(z: 3, x: 1, y: 5)))
        let xyz = source("t/{z}/{x}/{y}").tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 1)
        XCTAssertEqual(xyz.tile, TileID(z: 3, x: 1, y: 2))
    }

    func testKeyPixelRatioIsTwoOnlyWithRatioTokenAndRetinaPack() {
        let withRatio = source("t/{z}/{x}/{y}{ratio}.png")
        let without = source("t/{z}/{x}/{y}.mvt", type: .vector)
        XCTAssertEqual(withRatio.tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 2).pixelRatio, 2)
        XCTAssertEqual(withRatio.tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 3).pixelRatio, 2)
        XCTAssertEqual(withRatio.tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 1).pixelRatio, 1)
        XCTAssertEqual(without.tileKey(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 2).pixelRatio, 1)
        XCTAssertEqual(without.url(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 2), "t/3/1/2.mvt")
        XCTAssertEqual(withRatio.pixelRatio(forPack: StylePack(id: "p", style: "s", pixelRatio: 2)), 2)
        XCTAssertEqual(withRatio.pixelRatio(forPack: StylePack(id: "p", style: "s", pixelRatio: 1)), 1)
        XCTAssertEqual(without.pixelRatio(forPack: StylePack(id: "p", style: "s", pixelRatio: 3)), 1)
    }

    func testFetchRequestCarriesKeyAndGeographicTile() {
        let tms = source("t/{z}/{x}/{y}.png", scheme: .tms)
        let request = tms.fetchRequest(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 1)
        XCTAssertEqual(request.url, "t/3/1/5.png")
        XCTAssertEqual(request.kind, .tile)
        XCTAssertEqual(request.tile, TileID(z: 3, x: 1, y: 2))
        XCTAssertEqual(request.tileKey?.tile, TileID(z: 3, x: 1, y: 5))
    }

    // MARK: Zoom ranges

    func testZoomRangeTable() {
        let cases: [(name: String, type: SourceType, size: Int, min: Int, max: Int, region: (Int, Int), expected: ClosedRange<Int>?)] = [
            ("vector 512 same zooms", .vector, 512, 0, 22, (0, 15), 0...15),
            ("vector clamps to maxzoom", .vector, 512, 0, 14, (0, 16), 0...14),
            ("vector clamps to minzoom", .vector, 512, 4, 14, (0, 10), 4...10),
            ("raster 256 shifts up", .raster, 256, 0, 22, (0, 15), 1...16),
            ("raster 256 clamped to maxzoom", .raster, 256, 0, 14, (0, 15), 1...14),
            ("raster 512 same", .raster, 512, 0, 22, (3, 9), 3...9),
            ("raster-dem 256 floors", .rasterDEM, 256, 0, 22, (0, 15), 1...16),
            ("raster 1024 shifts down", .raster, 1024, 0, 22, (0, 15), 0...14),
            ("raster-dem 1024 at z0 is empty", .rasterDEM, 1024, 0, 22, (0, 0), nil),
            ("region above tileset", .vector, 512, 0, 10, (12, 14), nil),
            ("region below tileset", .vector, 512, 8, 14, (2, 5), nil),
        ]
        for c in cases {
            let s = source("t", type: c.type, tileSize: c.size, minZoom: c.min, maxZoom: c.max)
            XCTAssertEqual(s.zoomRange(regionMin: c.region.0, regionMax: c.region.1, overzoom: false), c.expected, c.name)
        }
    }

    /// MapLibre's `coveringZoomRange` for every tiled source type at 256 and 512 pixels: the
    /// covering levels of the region's zooms, clamped to the source's range, and how many tiles
    /// of a fixed box that fetches. Without overzoom this is exactly what its offline download asks for.
    func testCoveringZoomRangeTableByTypeAndTileSize() {
        let box = CoverArea.bbox(BoundingBox(west: 2.25, south: 48.8, east: 2.42, north: 48.9))  // Paris
        let cases: [(type: SourceType, size: Int, min: Int, max: Int, region: (Int, Int), zooms: ClosedRange<Int>?)] = [
            (.vector, 512, 0, 14, (10, 13), 10...13),
            (.vector, 512, 0, 14, (10, 16), 10...14),
            (.vector, 512, 11, 14, (10, 13), 11...13),
            (.raster, 512, 0, 22, (10, 13), 10...13),
            (.raster, 256, 0, 22, (10, 13), 11...14),
            (.raster, 256, 0, 12, (10, 13), 11...12),
            (.raster, 256, 12, 22, (10, 13), 12...14),
            (.rasterDEM, 512, 0, 15, (10, 13), 10...13),
            (.rasterDEM, 256, 0, 22, (10, 13), 11...14),
            (.rasterDEM, 256, 0, 13, (10, 13), 11...13),
            (.raster, 256, 0, 22, (0, 0), 1...1),
            (.vector, 512, 0, 22, (0, 0), 0...0),
            (.raster, 256, 0, 10, (10, 13), nil),
        ]
        for c in cases {
            let s = source("t/{z}/{x}/{y}", type: c.type, tileSize: c.size, minZoom: c.min, maxZoom: c.max)
            let name = "\(c.type.rawValue) \(c.size) source z\(c.min)-\(c.max), region z\(c.region.0)-\(c.region.1)"
            let zooms = s.zoomRange(regionMin: c.region.0, regionMax: c.region.1, overzoom: false)
            XCTAssertEqual(zooms, c.zooms, name)
            // The tiles fetched: z by z, the box's cover, counted independently from the fractional tile edges.
            let fetched = zooms.map { $0.reduce(0) { $0 + TileCover.count(box, zoom: $1) } } ?? 0
            let expected = (c.zooms.map { Array($0) } ?? []).reduce(0) { total, z in
                let n = Double(1 << z)
                let columns = Int(ceil((180 + 2.42) / 360 * n)) - Int(floor((180 + 2.25) / 360 * n))
                func row(_ lat: Double) -> Double { (1 - log(tan(lat * .pi / 180) + 1 / cos(lat * .pi / 180)) / .pi) / 2 * n }
                let rows = Int(ceil(row(48.8))) - Int(floor(row(48.9)))
                return total + columns * rows
            }
            XCTAssertEqual(fetched, expected, name)
        }
    }

    func testOverzoomFetchesMaxzoomOnlyWhenTheWholeRegionIsAboveIt() {
        let landcover = source("t/{z}/{x}/{y}", type: .vector, maxZoom: 6)
        XCTAssertEqual(landcover.zoomRange(regionMin: 10, regionMax: 13), 6...6)
        XCTAssertEqual(landcover.zoomRange(regionMin: 10, regionMax: 13, overzoom: false), nil)
        XCTAssertTrue(landcover.isOverzoomed(regionMin: 10, regionMax: 13))
        // A region reaching below maxzoom already gets tiles up to maxzoom: nothing extra.
        XCTAssertEqual(landcover.zoomRange(regionMin: 4, regionMax: 13), 4...6)
        XCTAssertEqual(landcover.zoomRange(regionMin: 4, regionMax: 13, overzoom: false), 4...6)
        XCTAssertFalse(landcover.isOverzoomed(regionMin: 4, regionMax: 13))
        XCTAssertEqual(landcover.zoomRange(regionMin: 6, regionMax: 9), 6...6)
        XCTAssertFalse(landcover.isOverzoomed(regionMin: 6, regionMax: 9))
        // A 256-pixel raster covers region z5 with z6: above maxzoom 5 from region z5 on.
        let raster = source("t/{z}/{x}/{y}", type: .raster, tileSize: 256, maxZoom: 5)
        XCTAssertEqual(raster.zoomRange(regionMin: 5, regionMax: 8), 5...5)
        XCTAssertEqual(raster.zoomRange(regionMin: 4, regionMax: 8), 5...5)
        XCTAssertFalse(raster.isOverzoomed(regionMin: 4, regionMax: 8))
        // Below minzoom nothing is drawn, so nothing is fetched, overzoom or not.
        XCTAssertNil(source("t/{z}/{x}/{y}", type: .vector, minZoom: 8, maxZoom: 14).zoomRange(regionMin: 2, regionMax: 5))
        // A refused tileset has no zooms at all.
        var refused = landcover
        refused.refusal = "bounds"
        XCTAssertNil(refused.zoomRange(regionMin: 0, regionMax: 6))
    }

    func testCoveringZoomLevelRoundsRasterAndFloorsOthers() {
        // 384 px: log2(512/384) ≈ 0.415.
        XCTAssertEqual(source("t", type: .raster, tileSize: 384).coveringZoomLevel(3.2), 4)
        XCTAssertEqual(source("t", type: .rasterDEM, tileSize: 384).coveringZoomLevel(3.2), 3)
        XCTAssertEqual(source("t", type: .vector, tileSize: 512).coveringZoomLevel(3.9), 3)
    }

    // MARK: TileJSON

    func testTileJSONDefaultsAndFirstTemplateOnly() throws {
        let json: JSONValue = ["tiles": ["https://a.t/{z}/{x}/{y}.pbf", "https://b.t/{z}/{x}/{y}.pbf"]]
        let s = try TileSource.from(tileJSON: json, sourceURL: "https://t/tiles.json", type: .vector, tileSize: 512)
        XCTAssertEqual(s, TileSource(template: "https://a.t/{z}/{x}/{y}.pbf", scheme: .xyz, minZoom: 0, maxZoom: 22,
                                     tileSize: 512, type: .vector, templateCount: 2))
    }

    func testTileJSONSchemeZoomsAndTruncation() throws {
        let json: JSONValue = ["tiles": ["t/{z}/{x}/{y}.png"], "scheme": "tms", "minzoom": 2.7, "maxzoom": 14.9,
                               "bounds": [-10, -10, 10, 10]]
        let s = try TileSource.from(tileJSON: json, sourceURL: "https://t/tiles.json", type: .raster, tileSize: 256)
        XCTAssertEqual(s.scheme, .tms)
        XCTAssertEqual(s.minZoom, 2)
        XCTAssertEqual(s.maxZoom, 14)
        XCTAssertEqual(s.tileSize, 256)
        let other = try TileSource.from(tileJSON: ["tiles": ["t/{z}/{x}/{y}"], "scheme": "xyz-ish"],
                                        sourceURL: "https://t/u", type: .vector, tileSize: 512)
        XCTAssertEqual(other.scheme, .xyz)
    }

    func testTileJSONErrorsPointAtTheProblem() {
        let ok: JSONValue = "https://t/{z}/{x}/{y}.pbf"
        let cases: [(JSONValue, String, String)] = [
            ([1, 2], "", "TileJSON object"),
            ("tiles", "", "TileJSON object"),
            (["minzoom": 0], "", "\"tiles\""),
            (["tiles": "t/{z}"], "/tiles", "array"),
            (["tiles": []], "/tiles", "at least one"),
            (["tiles": [ok, 3]], "/tiles/1", "string"),
            (["tiles": ["file:///data/{z}/{x}/{y}.pbf"]], "/tiles/0", "scheme file:"),
            (["tiles": ["ftp://t/{z}/{x}/{y}.pbf"]], "/tiles/0", "scheme ftp:"),
            (["tiles": ["asset://t/{z}/{x}/{y}.pbf"]], "/tiles/0", "http"),
            (["tiles": ["https://t/tiles/0/0/0.pbf"]], "/tiles/0", "{z}"),
            (["tiles": ["https://t/{x}/{y}.pbf"]], "/tiles/0", "{z}"),
            (["tiles": [ok], "minzoom": -1], "/minzoom", "zoom level"),
            (["tiles": [ok], "maxzoom": "22"], "/maxzoom", "zoom level"),
            (["tiles": [ok], "maxzoom": 256], "/maxzoom", "zoom level"),
            (["tiles": [ok], "scheme": 1], "/scheme", "\"tms\""),
            (["tiles": [ok], "bounds": "world"], "/bounds", "[west, south, east, north]"),
            (["tiles": [ok], "bounds": [0, 0, 1]], "/bounds", "[west, south, east, north]"),
            (["tiles": [ok], "bounds": [0, 0, 1, "2"]], "/bounds", "four numbers"),
        ]
        for (json, pointer, words) in cases {
            XCTAssertThrowsError(try TileSource.from(tileJSON: json, sourceURL: "https://t/a.json", type: .vector,
                                                     tileSize: 512)) { error in
                let e = error as? DocumentProblem
                XCTAssertEqual(e?.pointer, pointer, "\(json)")
                XCTAssertEqual(e?.document, "https://t/a.json")
                XCTAssertTrue(e?.message.contains(words) == true, "\(json): \(e?.message ?? "\(error)")")
            }
        }
        // Only the template MapLibre uses is checked: a bad mirror after it is never requested.
        XCTAssertNoThrow(try TileSource.from(tileJSON: ["tiles": [ok, "ftp://m/{z}"]], sourceURL: "https://t/a.json",
                                             type: .vector, tileSize: 512))
        // Inline sources in a style resolve nothing: a relative template is refused there.
        XCTAssertThrowsError(try TileSource.from(inlineSource: ["tiles": ["{z}/{x}/{y}.pbf"]], styleURL: "https://t/s.json",
                                                 pointer: "/sources/v", type: .vector, tileSize: 512)) { error in
            XCTAssertEqual((error as? DocumentProblem)?.pointer, "/sources/v/tiles/0")
        }
    }

    // MARK: Relative templates, tokens, queries

    func testRelativeTemplatesResolveAgainstTheTileJSONURL() throws {
        let cases: [(base: String, written: String, stored: String)] = [
            ("https://h.example/tiles/v3", "{z}/{x}/{y}.pbf", "https://h.example/tiles/{z}/{x}/{y}.pbf"),
            ("https://h.example/tiles/v3/", "{z}/{x}/{y}.pbf", "https://h.example/tiles/v3/{z}/{x}/{y}.pbf"),
            ("https://h.example/data/planet", "/tiles/{z}/{x}/{y}.pbf", "https://h.example/tiles/{z}/{x}/{y}.pbf"),
            ("https://h.example/a/b/tiles.json", "../t/{z}/{x}/{y}.png", "https://h.example/a/t/{z}/{x}/{y}.png"),
            ("https://h.example/a/tiles.json?v=2", "./{z}/{x}/{y}.pbf?key=abc", "https://h.example/a/{z}/{x}/{y}.pbf?key=abc"),
            ("https://h.example/a/tiles.json", "//cdn.example/{z}/{x}/{y}.pbf", "https://cdn.example/{z}/{x}/{y}.pbf"),
            ("http://h.example:8080/tiles.json", "{quadkey}.jpeg", "http://h.example:8080/{quadkey}.jpeg"),
            ("https://h.example/wms", "?bbox={bbox-epsg-3857}&fmt=png", "https://h.example/wms?bbox={bbox-epsg-3857}&fmt=png"),
            // Absolute templates are kept exactly as written, query and all.
            ("https://h.example/t.json", "https://x.example/{z}/{x}/{y}.pbf?key=abc&lang={ratio}",
             "https://x.example/{z}/{x}/{y}.pbf?key=abc&lang={ratio}"),
        ]
        for c in cases {
            let s = try TileSource.from(tileJSON: ["tiles": [.string(c.written)]], sourceURL: c.base, type: .vector,
                                        tileSize: 512)
            XCTAssertEqual(s.template, c.stored, "\(c.written) against \(c.base)")
        }
        let stored = try TileSource.from(tileJSON: ["tiles": ["{z}/{x}/{y}.pbf?key=abc"]], sourceURL: "https://h/v3",
                                         type: .vector, tileSize: 512)
        XCTAssertEqual(stored.url(for: TileID(z: 3, x: 1, y: 2), pixelRatio: 1), "https://h/3/1/2.pbf?key=abc")
    }

    func testRelativeMapboxTemplatesResolveAgainstTheAPIBeforeCanonicalising() throws {
        let json: JSONValue = ["tiles": ["mapbox.streets/{z}/{x}/{y}.vector.pbf?access_token=pk.x"]]
        let s = try TileSource.from(tileJSON: json, sourceURL: "mapbox://mapbox.streets", type: .vector, tileSize: 512)
        XCTAssertEqual(s.template, "mapbox://tiles/mapbox.streets/{z}/{x}/{y}.vector.pbf")
        let rooted = try TileSource.from(tileJSON: ["tiles": ["/v4/mapbox.satellite/{z}/{x}/{y}.png"]],
                                         sourceURL: "mapbox://mapbox.satellite", type: .raster, tileSize: 256)
        XCTAssertEqual(rooted.template, "mapbox://tiles/mapbox.satellite/{z}/{x}/{y}{ratio}.png")
    }

    func testTileJSONWithSeveralTemplatesKeepsTheFirstAndCountsThem() throws {
        let json: JSONValue = ["tiles": ["a/{z}/{x}/{y}.pbf", "https://b.t/{z}/{x}/{y}.pbf", "https://c.t/{z}/{x}/{y}.pbf"]]
        let s = try TileSource.from(tileJSON: json, sourceURL: "https://t/v3", type: .vector, tileSize: 512)
        XCTAssertEqual(s.template, "https://t/a/{z}/{x}/{y}.pbf")
        XCTAssertEqual(s.templateCount, 3)
    }

    // MARK: Bounds

    func testBoundsAreReadAsMapLibreKeepsThem() throws {
        func read(_ bounds: JSONValue) throws -> TileSource {
            try TileSource.from(tileJSON: ["tiles": ["https://t/{z}/{x}/{y}.pbf"], "bounds": bounds],
                                sourceURL: "https://t/a.json", type: .vector, tileSize: 512)
        }
        let plain = try read([2.25, 48.8, 2.42, 48.9])
        XCTAssertEqual(plain.bounds, TileBounds(west: 2.25, south: 48.8, east: 2.42, north: 48.9))
        XCTAssertEqual(plain.readingNotes, [])
        XCTAssertNil(plain.refusal)
        // The TileJSON default (the whole Mercator world) limits nothing.
        XCTAssertNil(try read([-180, -85.051128779806604, 180, 85.051128779806604]).bounds)
        XCTAssertNil(try read([-180, -90, 180, 90]).bounds)
        // Out of range: clamped, with a note.
        let clamped = try read([-200, -95, 10, 20])
        XCTAssertEqual(clamped.bounds, TileBounds(west: -180, south: -90, east: 10, north: 20))
        XCTAssertEqual(clamped.readingNotes.count, 1)
        XCTAssertTrue(clamped.readingNotes[0].contains("clamped"), clamped.readingNotes[0])
        // What MapLibre refuses (the source then loads nothing): no zooms, and a note.
        for bad: JSONValue in [[170, -10, -170, 10], [0, 10, 1, 10], [0, 20, 1, 10], [0, 91, 1, 95]] {
            let refused = try read(bad)
            XCTAssertNotNil(refused.refusal, "\(bad)")
            XCTAssertNil(refused.zoomRange(regionMin: 0, regionMax: 14), "\(bad)")
            XCTAssertTrue(refused.readingNotes.first?.contains("MapLibre refuses") == true, "\(bad)")
        }
        XCTAssertTrue(try read([170, -10, -170, 10]).refusal?.contains("antimeridian") == true)
    }

    func testMapboxTileJSONIsCanonicalised() throws {
        let vector: JSONValue = ["tiles": ["http://a.tiles.mapbox.com/v4/mapbox.streets/{z}/{x}/{y}.vector.pbf?access_token=key"]]
        let v = try TileSource.from(tileJSON: vector, sourceURL: "mapbox://mapbox.streets", type: .vector, tileSize: 512)
        XCTAssertEqual(v.template, "mapbox://tiles/mapbox.streets/{z}/{x}/{y}.vector.pbf")

        let raster: JSONValue = ["tiles": ["http://a.tiles.mapbox.com/v4/mapbox.satellite/{z}/{x}/{y}.png?access_token=key"]]
        let r = try TileSource.from(tileJSON: raster, sourceURL: "mapbox://mapbox.satellite", type: .raster, tileSize: 256)
        XCTAssertEqual(r.template, "mapbox://tiles/mapbox.satellite/{z}/{x}/{y}{ratio}.png")
        XCTAssertEqual(r.tileKey(for: TileID(z: 1, x: 0, y: 0), pixelRatio: 2).pixelRatio, 2)

        // A TileJSON from a non-mapbox URL keeps its templates verbatim, key and all.
        let plain = try TileSource.from(tileJSON: raster, sourceURL: "https://example.com/sat.json", type: .raster,
                                        tileSize: 256)
        XCTAssertEqual(plain.template, "http://a.tiles.mapbox.com/v4/mapbox.satellite/{z}/{x}/{y}.png?access_token=key")
    }
}
