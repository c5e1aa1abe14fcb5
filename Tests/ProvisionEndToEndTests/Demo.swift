import Foundation
import ProvisionFoundation
import ProvisionModel

/// The bundled demo data and the regions of issue 2.
enum Demo {
    /// The repository root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Examples/demo: styles, tilesets, sprites, fonts and streets.mbtiles.
    static let directory = repositoryRoot.appendingPathComponent("Examples/demo")
    /// The demo MBTiles archive (gzipped MVT, TMS rows).
    static let mbtiles = directory.appendingPathComponent("streets.mbtiles")
    /// The canonical base URL the demo style and TileJSON use.
    static let canonicalBase = "https://tiles.example.com/demo/"
    /// The canonical tile URL prefix.
    static let canonicalTiles = canonicalBase + "tiles/streets/"
    /// The canonical style URL.
    static let styleURL = canonicalBase + "styles/streets.json"
    /// The zooms every demo region uses.
    static let zooms = 10...14

    /// A city of the demo job.
    struct City {
        var id: String
        var name: String
        /// [west, south, east, north].
        var bbox: [Double]

        /// The region entry of a job file.
        func region(zoom: ClosedRange<Int> = Demo.zooms, stylePacks: [String] = ["streets"],
                    extra: [(String, JSONValue)] = []) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("id", .string(id)), ("name", .string(name)), ("bbox", .array(bbox.map { .double($0) })),
                ("zoom", [.int(zoom.lowerBound), .int(zoom.upperBound)]),
                ("stylePacks", .array(stylePacks.map { .string($0) })), ("metadata", ["name": .string(name)]),
            ]
            members += extra
            return .object(JSONObject(members))
        }

        /// The tiles the oracle says this city covers at the demo zooms.
        var tiles: Set<TileAddress> { WebMercatorOracle.tiles(bbox: bbox, zooms: Demo.zooms) }
    }

    static let newYork = City(id: "new-york", name: "New York", bbox: [-74.28127, 40.48398, -73.58442, 40.98701])
    static let london = City(id: "london", name: "London", bbox: [-0.1278, 51.4874, -0.0978, 51.5174])
    static let paris = City(id: "paris", name: "Paris", bbox: [2.3522, 48.8366, 2.3822, 48.8666])

    /// The demo style pack, at pixel ratio 2 as in Jobs/cities.json.
    static func stylePack(style: String = styleURL) -> JSONValue {
        ["id": "streets", "style": .string(style), "pixelRatio": 2, "glyphs": "ideographs-local",
         "metadata": ["title": "Demo streets"]]
    }

    /// A job file.
    static func job(regions: [JSONValue], origins: [(String, JSONValue)], stylePacks: [JSONValue] = [stylePack()],
                    name: String = "e2e") -> JSONValue {
        [
            "version": 1, "name": .string(name), "store": "store",
            "stylePacks": .array(stylePacks),
            "regions": .array(regions),
            "origins": .object(JSONObject(origins)),
            "limits": ["maxTiles": 100000, "maxBytes": 500000000],
            "download": ["concurrency": 8, "retries": 1, "timeoutSeconds": 10],
        ]
    }
}
