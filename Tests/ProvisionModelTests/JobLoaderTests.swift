import Foundation
import ProvisionFoundation
import TileMath
import XCTest
@testable import ProvisionModel

final class JobLoaderTests: XCTestCase {
    /// A job using every key, in `root/jobs/full.json`, with its files beside it.
    private func writeFullJob(in root: URL) throws -> URL {
        try FileManager.default.createDirectory(at: root.appendingPathComponent("mirror/tiles"),
                                                withIntermediateDirectories: true)
        try write("not really sqlite", to: "data/b.mbtiles", in: root)
        try write("""
            {"type": "Feature", "properties": {},
             "geometry": {"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]}}
            """, to: "shapes/area.geojson", in: root)
        return try write("""
            {
              "version": 1,
              "name": "Full job",
              "store": "../out/store",
              "stylePacks": [
                {"id": "streets", "style": "https://tiles.example.com/styles/streets.json"},
                {"id": "sat", "style": "mapbox://styles/mapbox/satellite-v9?access_token=${MAPBOX_TOKEN}",
                 "pixelRatio": 3, "glyphs": "all", "metadata": {"team": "maps", "rank": 2}}
              ],
              "regions": [
                {"id": "berlin", "name": "Berlin", "bbox": [13.0, 52.3, 13.8, 52.7], "zoom": [0, 14],
                 "stylePacks": ["streets", "sat"], "metadata": {"city": "Berlin"}},
                {"id": "donut", "name": "Donut", "zoom": [3, 3],
                 "geometry": {"type": "Polygon", "bbox": [0, 0, 4, 4], "coordinates": [
                   [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]],
                   [[1, 1], [1, 3], [3, 3], [3, 1], [1, 1]]]},
                 "tilesets": ["https://tiles.example.com/data/{z}/{x}/{y}.pbf", "mapbox://mapbox.terrain-rgb"]},
                {"id": "area", "name": "From a file", "geojson": "../shapes/area.geojson", "zoom": [5, 22],
                 "stylePacks": ["sat"]}
              ],
              "origins": {
                "https://tiles.example.com/": "../mirror/tiles",
                "https://tiles.example.com/data/": "mbtiles:../data/b.mbtiles",
                "mapbox://": "https://mirror.example.com/mapbox/"
              },
              "limits": {"maxTiles": 100000, "maxBytes": 5000000000},
              "download": {"concurrency": 32, "retries": 5, "timeoutSeconds": 12.5}
            }
            """, to: "jobs/full.json", in: root)
    }

    func testAFullJobLoadsWithEveryKey() throws {
        let root = try makeTemporaryDirectory(self)
        let url = try writeFullJob(in: root)
        let result = JobLoader.load(from: url, displayName: "jobs/full.json")
        XCTAssertEqual(result.diagnostics, [])
        let job = try XCTUnwrap(result.job)
        XCTAssertEqual(job.version, 1)
        XCTAssertEqual(job.name, "Full job")
        XCTAssertEqual(job.store?.path, root.appendingPathComponent("out/store").path)

        XCTAssertEqual(job.stylePacks, [
            StylePack(id: "streets", style: "https://tiles.example.com/styles/streets.json"),
            StylePack(id: "sat", style: "mapbox://styles/mapbox/satellite-v9?access_token=${MAPBOX_TOKEN}",
                      pixelRatio: 3, glyphs: .all, metadata: JSONObject([("team", "maps"), ("rank", 2)])),
        ])

        XCTAssertEqual(job.regions.map(\.id), ["berlin", "donut", "area"])
        let berlin = job.regions[0]
        XCTAssertEqual(berlin.area, .bbox(BoundingBox(west: 13.0, south: 52.3, east: 13.8, north: 52.7)))
        XCTAssertEqual([berlin.minZoom, berlin.maxZoom], [0, 14])
        XCTAssertEqual(berlin.stylePacks, ["streets", "sat"])
        XCTAssertEqual(berlin.tilesets, [])
        XCTAssertEqual(berlin.metadata, JSONObject([("city", "Berlin")]))

        let donut = job.regions[1]
        guard case .geometry(let polygons, let geoJSON) = donut.area else { return XCTFail("expected a geometry") }
        XCTAssertEqual(polygons.count, 1)
        XCTAssertEqual(polygons[0].rings.count, 2, "the hole is kept")
        XCTAssertEqual(polygons[0].rings[1][1], LngLat(lng: 1, lat: 3))
        // Normalised: only type and coordinates, positions as doubles.
        XCTAssertEqual(geoJSON.serialized(), """
            {"type":"Polygon","coordinates":[[[0.0,0.0],[4.0,0.0],[4.0,4.0],[0.0,4.0],[0.0,0.0]],\
            [[1.0,1.0],[1.0,3.0],[3.0,3.0],[3.0,1.0],[1.0,1.0]]]}
            """)
        XCTAssertEqual(donut.stylePacks, [])
        XCTAssertEqual(donut.tilesets, ["https://tiles.example.com/data/{z}/{x}/{y}.pbf", "mapbox://mapbox.terrain-rgb"])
        XCTAssertEqual(donut.metadata, JSONObject())

        guard case .geometry(let filePolygons, let fileGeoJSON) = job.regions[2].area else {
            return XCTFail("expected a geometry")
        }
        XCTAssertEqual(filePolygons.count, 1)
        XCTAssertEqual(fileGeoJSON["type"], "MultiPolygon")
        XCTAssertEqual([job.regions[2].minZoom, job.regions[2].maxZoom], [5, 22])

        // Longest prefix first, paths resolved against the job file's directory.
        XCTAssertEqual(job.origins, [
            Origin(prefix: "https://tiles.example.com/data/",
                   mirror: .mbtiles(root.appendingPathComponent("data/b.mbtiles").standardizedFileURL)),
            Origin(prefix: "https://tiles.example.com/",
                   mirror: .directory(root.appendingPathComponent("mirror/tiles").standardizedFileURL)),
            Origin(prefix: "mapbox://", mirror: .http("https://mirror.example.com/mapbox/")),
        ])
        XCTAssertEqual(job.limits, Limits(maxTiles: 100_000, maxBytes: 5_000_000_000))
        XCTAssertEqual(job.download, DownloadSettings(concurrency: 32, retries: 5, timeoutSeconds: 12.5))
    }

    func testDefaultsApplyWhenOptionalKeysAreAbsent() throws {
        let base = try makeTemporaryDirectory(self)
        let job = try XCTUnwrap(validate(baseJob, base: base).job)
        XCTAssertNil(job.store)
        XCTAssertEqual(job.origins, [])
        XCTAssertEqual(job.limits, Limits())
        XCTAssertEqual(job.download, DownloadSettings(concurrency: 16, retries: 3, timeoutSeconds: 30))
        XCTAssertEqual(job.stylePacks[0].pixelRatio, 1)
        XCTAssertEqual(job.stylePacks[0].glyphs, .ideographsLocal)
        XCTAssertEqual(job.stylePacks[0].metadata, JSONObject())
        XCTAssertEqual(job.regions[0].tilesets, [])
        XCTAssertEqual(job.regions[1].stylePacks, [])
    }

    func testRelativePathsResolveAgainstTheJobFileDirectoryNotTheWorkingDirectory() throws {
        let root = try makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a/b/mirror"),
                                                withIntermediateDirectories: true)
        let document = baseJob.setting("/store", to: "./store/../built")
            .setting("/origins", to: ["https://x.example/": "mirror", "https://y.example/": .string(root.path + "/a")])
        let url = try write(document.serialized(), to: "a/b/job.json", in: root)
        let job = try XCTUnwrap(JobLoader.load(from: url).job)
        XCTAssertEqual(job.store?.path, root.path + "/a/b/built")
        XCTAssertEqual(job.origins.map(\.mirror), [
            .directory(URL(fileURLWithPath: root.path + "/a/b/mirror")),
            .directory(URL(fileURLWithPath: root.path + "/a")),
        ])
    }

    func testGeoJSONFilePolygonsAreUnitedIntoOneMultiPolygon() throws {
        let root = try makeTemporaryDirectory(self)
        try write("""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "properties": {"n": 1},
               "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}},
              {"type": "Feature", "properties": null,
               "geometry": {"type": "MultiPolygon", "coordinates": [
                 [[[10, 10], [11, 10], [11, 11, 300], [10, 10]]],
                 [[[20, 20], [21, 20], [21, 21], [20, 20]]]]}},
              {"type": "Feature", "geometry": {"type": "GeometryCollection", "geometries": [
                 {"type": "Polygon", "coordinates": [[[-5, -5], [-4, -5], [-4, -4], [-5, -5]]]}]}}
            ]}
            """, to: "shapes.geojson", in: root)
        let document = baseJob.setting("/regions/0/bbox", to: nil).setting("/regions/0/geojson", to: "shapes.geojson")
        let job = try XCTUnwrap(validate(document, base: root).job)
        guard case .geometry(let polygons, let geoJSON) = job.regions[0].area else { return XCTFail("no geometry") }
        XCTAssertEqual(polygons.map { $0.rings[0][0] }, [
            LngLat(lng: 0, lat: 0), LngLat(lng: 10, lat: 10), LngLat(lng: 20, lat: 20), LngLat(lng: -5, lat: -5),
        ])
        XCTAssertEqual(geoJSON.serialized(), """
            {"type":"MultiPolygon","coordinates":[[[[0.0,0.0],[1.0,0.0],[1.0,1.0],[0.0,0.0]]],\
            [[[10.0,10.0],[11.0,10.0],[11.0,11.0],[10.0,10.0]]],\
            [[[20.0,20.0],[21.0,20.0],[21.0,21.0],[20.0,20.0]]],\
            [[[-5.0,-5.0],[-4.0,-5.0],[-4.0,-4.0],[-5.0,-5.0]]]]}
            """)
    }

    func testABareGeometryFileIsAccepted() throws {
        let root = try makeTemporaryDirectory(self)
        try write(#"{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}"#, to: "p.json", in: root)
        let document = baseJob.setting("/regions/0/bbox", to: nil).setting("/regions/0/geojson", to: "p.json")
        let job = try XCTUnwrap(validate(document, base: root).job)
        guard case .geometry(let polygons, let geoJSON) = job.regions[0].area else { return XCTFail("no geometry") }
        XCTAssertEqual(polygons.count, 1)
        XCTAssertEqual(geoJSON["type"], "MultiPolygon")
    }

    func testProblemsInsideAGeoJSONFileNameThatFile() throws {
        let root = try makeTemporaryDirectory(self)
        try write("""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}},
              {"type": "Feature", "geometry": null},
              {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}}
            ]}
            """, to: "shapes/bad.geojson", in: root)
        let document = baseJob.setting("/regions/0/bbox", to: nil)
            .setting("/regions/0/geojson", to: "shapes/bad.geojson")
        let result = JobLoader.parse(data: document.data(), baseDirectory: root, displayName: "jobs/job.json")
        XCTAssertEqual(result.diagnostics.map(\.file),
                       ["jobs/shapes/bad.geojson", "jobs/shapes/bad.geojson", "jobs/shapes/bad.geojson", "jobs/job.json"])
        XCTAssertEqual(result.diagnostics.map(\.pointer), [
            "/features/0/geometry/type", "/features/1/geometry", "/features/2/geometry/coordinates/0", "/regions/0/geojson",
        ])
        XCTAssertEqual(result.diagnostics[0].message, "expected a Polygon or MultiPolygon geometry, found a \"Point\"")
        XCTAssertEqual(result.diagnostics[1].message, "expected a Polygon or MultiPolygon geometry, found null")
        XCTAssertTrue(result.diagnostics[2].message.hasPrefix("expected a closed ring"))
        XCTAssertEqual(result.diagnostics[3].message, "GeoJSON file \(root.path)/shapes/bad.geojson has no usable "
                       + "Polygon or MultiPolygon geometry")
    }

    func testAnEmptyFeatureCollectionIsReported() throws {
        let root = try makeTemporaryDirectory(self)
        try write(#"{"type": "FeatureCollection", "features": []}"#, to: "empty.geojson", in: root)
        let document = baseJob.setting("/regions/0/bbox", to: nil).setting("/regions/0/geojson", to: "empty.geojson")
        let diagnostics = validate(document, base: root).diagnostics
        XCTAssertEqual(diagnostics.first?.message, "expected at least one Polygon or MultiPolygon geometry, found none")
        XCTAssertEqual(diagnostics.first?.file, "empty.geojson")
    }

    func testInvalidJSONInAGeoJSONFileHasLineAndColumn() throws {
        let root = try makeTemporaryDirectory(self)
        try write("{\"type\": \"Polygon\",\n  \"coordinates\": [[0, 0]]]\n}", to: "broken.geojson", in: root)
        let document = baseJob.setting("/regions/0/bbox", to: nil).setting("/regions/0/geojson", to: "broken.geojson")
        let diagnostics = validate(document, base: root).diagnostics
        XCTAssertEqual(diagnostics.count, 2)
        XCTAssertEqual(diagnostics[0].file, "broken.geojson")
        XCTAssertEqual(diagnostics[0].line, 2)
        XCTAssertEqual(diagnostics[0].column, 26)
        XCTAssertEqual(diagnostics[1].pointer, "/regions/0/geojson")
    }

    func testInvalidJSONReportsLineAndColumn() {
        let text = "{\n  \"version\": 1,\n  \"name\": \"x\"\n  \"regions\": []\n}\n"
        let result = JobLoader.parse(data: Data(text.utf8), baseDirectory: URL(fileURLWithPath: "/tmp"),
                                     displayName: "bad.json")
        XCTAssertEqual(result, .invalid([Diagnostic(
            file: "bad.json", pointer: "", message: "invalid JSON: expected ',' or '}' in object, found '\"'",
            line: 4, column: 3)]))
        XCTAssertEqual(result.diagnostics.first?.description,
                       "bad.json:4:3: invalid JSON: expected ',' or '}' in object, found '\"'")
    }

    func testAnEmptyFileIsInvalidJSONNotUnreadable() throws {
        let root = try makeTemporaryDirectory(self)
        let url = try write("", to: "empty.json", in: root)
        let result = JobLoader.load(from: url, displayName: "empty.json")
        XCTAssertEqual(result.diagnostics.first?.line, 1)
        XCTAssertEqual(result.diagnostics.first?.column, 1)
    }

    func testAMissingFileIsUnreadable() throws {
        let root = try makeTemporaryDirectory(self)
        let url = root.appendingPathComponent("nope.json")
        XCTAssertEqual(JobLoader.load(from: url), .unreadable(path: url.path, reason: "no such file or directory"))
    }

    func testADirectoryIsUnreadable() throws {
        let root = try makeTemporaryDirectory(self)
        XCTAssertEqual(JobLoader.load(from: root),
                       .unreadable(path: root.path, reason: "is a directory, not a job file"))
    }

    func testDisplayNameDefaultsToThePathGiven() throws {
        let root = try makeTemporaryDirectory(self)
        let url = try write("[]", to: "j.json", in: root)
        XCTAssertEqual(JobLoader.load(from: url).diagnostics.first?.file, url.path)
    }
}
