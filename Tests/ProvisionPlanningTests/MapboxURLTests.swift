import ProvisionPlanning
import XCTest

/// Vectors from MapLibre/Mapbox GL Native `test/util/mapbox.test.cpp`.
final class MapboxURLTests: XCTestCase {
    func testNetworkURLTable() {
        let cases: [(String, String)] = [
            ("mapbox://user.map", "https://api.mapbox.com/v4/user.map.json?access_token=key&secure"),
            ("mapbox://user.map?style=mapbox://styles/mapbox/streets-v9@0",
             "https://api.mapbox.com/v4/user.map.json?access_token=key&secure&style=mapbox://styles/mapbox/streets-v9@0"),
            ("mapbox://user.map?", "https://api.mapbox.com/v4/user.map.json?access_token=key&secure"),
            ("mapbox://fonts/boxmap/Comic%20Sans/0-255.pbf",
             "https://api.mapbox.com/fonts/v1/boxmap/Comic%20Sans/0-255.pbf?access_token=key"),
            ("mapbox://styles/user/style", "https://api.mapbox.com/styles/v1/user/style?access_token=key"),
            ("mapbox://styles/user/style/draft", "https://api.mapbox.com/styles/v1/user/style/draft?access_token=key"),
            ("mapbox://styles/user/style?shave=true", "https://api.mapbox.com/styles/v1/user/style?access_token=key&shave=true"),
            ("mapbox://styles/user/style?", "https://api.mapbox.com/styles/v1/user/style?access_token=key"),
            ("mapbox://sprites/mapbox/streets-v8.json",
             "https://api.mapbox.com/styles/v1/mapbox/streets-v8/sprite.json?access_token=key"),
            ("mapbox://sprites/mapbox/streets-v8@2x.png",
             "https://api.mapbox.com/styles/v1/mapbox/streets-v8/sprite@2x.png?access_token=key"),
            ("mapbox://sprites/mapbox/streets-v8/draft@2x.png",
             "https://api.mapbox.com/styles/v1/mapbox/streets-v8/draft/sprite@2x.png?access_token=key"),
            ("mapbox://sprites/mapbox/streets-v10?fresh=true.png",
             "https://api.mapbox.com/styles/v1/mapbox/streets-v10/sprite?access_token=key&fresh=true.png"),
            ("mapbox://tiles/a.b/0/0/0.pbf", "https://api.mapbox.com/v4/a.b/0/0/0.pbf?access_token=key"),
            ("mapbox://tiles/a.b/0/0/0.pbf?style=mapbox://styles/mapbox/streets-v9@0",
             "https://api.mapbox.com/v4/a.b/0/0/0.pbf?access_token=key&style=mapbox://styles/mapbox/streets-v9@0"),
            ("mapbox://tiles/a.b/0/0/0@2x.png", "https://api.mapbox.com/v4/a.b/0/0/0@2x.png?access_token=key"),
            ("mapbox://tiles/a.b,c.d/0/0/0.pbf", "https://api.mapbox.com/v4/a.b,c.d/0/0/0.pbf?access_token=key"),
            ("http://path", "http://path"),
            ("https://t/tiles.json?key=abc", "https://t/tiles.json?key=abc"),
        ]
        for (canonical, network) in cases {
            XCTAssertEqual(MapboxURL.networkURL(for: canonical, accessToken: "key"), network, canonical)
        }
        XCTAssertEqual(MapboxURL.networkURL(for: "mapbox://styles/user/style", accessToken: "key",
                                            baseURL: "https://api.example.com"),
                       "https://api.example.com/styles/v1/user/style?access_token=key")
    }

    func testNetworkURLNeedsATokenForMapboxURLsOnly() {
        XCTAssertNil(MapboxURL.networkURL(for: "mapbox://user.map", accessToken: nil))
        XCTAssertNil(MapboxURL.networkURL(for: "mapbox://styles/user/style", accessToken: ""))
        XCTAssertNil(MapboxURL.networkURL(for: "mapbox://////", accessToken: "key"))
        XCTAssertEqual(MapboxURL.networkURL(for: "https://t/x", accessToken: nil), "https://t/x")
    }

    func testCanonicalizeTileURLTable() {
        let cases: [(String, SourceType, Int, String)] = [
            ("http://a.tiles.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf", .vector, 512, "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf"),
            ("http://b.tiles.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf", .vector, 512, "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf?access_token=key", .vector, 512,
             "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf"),
            ("https://api.mapbox.cn/v4/a.b/{z}/{x}/{y}.vector.pbf?access_token=key", .vector, 512,
             "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf"),
            ("http://api.mapbox.com/v4/a.b,c.d/{z}/{x}/{y}.vector.pbf?access_token=key", .vector, 512,
             "mapbox://tiles/a.b,c.d/{z}/{x}/{y}.vector.pbf"),
            ("http://a.tiles.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf?access_token=key&custom=parameter", .vector, 512,
             "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf?custom=parameter"),
            ("http://a.tiles.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf?custom=parameter&access_token=key", .vector, 512,
             "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf?custom=parameter"),
            ("http://a.tiles.mapbox.com/v4/a.b/{z}/{x}/{y}.vector.pbf?custom=parameter&access_token=key&second=param",
             .vector, 512, "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf?custom=parameter&second=param"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.jpg?access_token=key", .raster, 256, "mapbox://tiles/a.b/{z}/{x}/{y}{ratio}.jpg"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.jpg70?access_token=key", .raster, 256,
             "mapbox://tiles/a.b/{z}/{x}/{y}{ratio}.jpg70"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.jpg?access_token=key", .raster, 512, "mapbox://tiles/a.b/{z}/{x}/{y}@2x.jpg"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.png", .raster, 256, "mapbox://tiles/a.b/{z}/{x}/{y}{ratio}.png"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.png", .rasterDEM, 512, "mapbox://tiles/a.b/{z}/{x}/{y}@2x.png"),
            ("", .raster, 256, ""),
            ("http://path", .raster, 256, "http://path"),
            ("http://api.mapbox.com/v4/", .raster, 256, "http://api.mapbox.com/v4/"),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}.", .raster, 256, "http://api.mapbox.com/v4/a.b/{z}/{x}/{y}."),
            ("http://api.mapbox.com/v4/a.b/{z}/{x}/{y}/.", .raster, 256, "http://api.mapbox.com/v4/a.b/{z}/{x}/{y}/."),
            ("https://example.com/tiles/{z}/{x}/{y}.pbf", .vector, 512, "https://example.com/tiles/{z}/{x}/{y}.pbf"),
        ]
        for (input, type, size, expected) in cases {
            XCTAssertEqual(MapboxURL.canonicalizeTileURL(input, type: type, tileSize: size), expected, input)
        }
    }
}
