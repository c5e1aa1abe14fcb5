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
            XCTAssertEqual(s.zoomRange(regionMin: c.region.0, regionMax: c.region.1), c.expected, c.name)
        }
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
                                     tileSize: 512, type: .vector))
    }

    func testTileJSONSchemeZoomsAndTruncation() throws {
        let json: JSONValue = ["tiles": ["t/{z}/{x}/{y}.png"], "scheme": "tms", "minzoom": 2.7, "maxzoom": 14.9,
                               "bounds": [-10, -10, 10, 10]]
        let s = try TileSource.from(tileJSON: json, sourceURL: "https://t/tiles.json", type: .raster, tileSize: 256)
        XCTAssertEqual(s.scheme, .tms)
        XCTAssertEqual(s.minZoom, 2)
        XCTAssertEqual(s.maxZoom, 14)
        XCTAssertEqual(s.tileSize, 256)
        let other = try TileSource.from(tileJSON: ["tiles": ["t"], "scheme": "xyz-ish"], sourceURL: "u", type: .vector,
                                        tileSize: 512)
        XCTAssertEqual(other.scheme, .xyz)
    }

    func testTileJSONErrorsPointAtTheProblem() {
        let cases: [(JSONValue, String)] = [
            ([1, 2], ""),
            (["minzoom": 0], ""),
            (["tiles": "t/{z}"], "/tiles"),
            (["tiles": []], "/tiles"),
            (["tiles": ["ok", 3]], "/tiles/1"),
            (["tiles": ["ok"], "minzoom": -1], "/minzoom"),
            (["tiles": ["ok"], "maxzoom": "22"], "/maxzoom"),
        ]
        for (json, pointer) in cases {
            XCTAssertThrowsError(try TileSource.from(tileJSON: json, sourceURL: "https://t/a.json", type: .vector,
                                                     tileSize: 512)) { error in
                let e = error as? PlanningError
                XCTAssertEqual(e?.pointer, pointer, "\(json)")
                XCTAssertEqual(e?.document, "https://t/a.json")
            }
        }
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
