import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// One invalid variation of `baseJob` and the diagnostics it must produce, exactly.
private struct InvalidCase {
    let name: String
    let edits: [(String, JSONValue?)]
    /// (pointer, message) pairs; a message starting with "~" only has to be contained.
    let expected: [(String, String)]

    init(_ name: String, _ edits: [(String, JSONValue?)], _ expected: [(String, String)]) {
        self.name = name
        self.edits = edits
        self.expected = expected
    }
}

private let square: JSONValue = [[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]]

private let cases: [InvalidCase] = [
    // Top level.
    InvalidCase("top level is not an object", [("", [1, 2])],
                [("", "expected a JSON object at the top level, found an array of 2 items")]),
    InvalidCase("version 2", [("/version", 2)], [("/version", "expected 1 (the only job file version), found 2")]),
    InvalidCase("version missing", [("/version", nil)], [("", "missing required key \"version\"")]),
    InvalidCase("name empty", [("/name", "")], [("/name", "expected a non-empty string, found an empty string")]),
    InvalidCase("name not a string", [("/name", 5)], [("/name", "expected a string, found 5")]),
    InvalidCase("unknown top-level key", [("/foo", true)],
                [("/foo", "~unknown key \"foo\"; expected one of \"$schema\", \"version\", \"name\"")]),
    InvalidCase("$schema not a string", [("/$schema", 1)],
                [("/$schema", "expected a string (the URL or path of the job file schema), found 1")]),
    InvalidCase("misspelled top-level key", [("/region", [])],
                [("/region", "unknown key \"region\"; did you mean \"regions\"?")]),
    InvalidCase("regions missing", [("/regions", nil)], [("", "missing required key \"regions\"")]),
    InvalidCase("regions empty", [("/regions", [])], [("/regions", "expected at least one region, found an empty array")]),
    InvalidCase("regions not an array", [("/regions", ["a": 1])],
                [("/regions", "expected a non-empty array of regions, found an object")]),
    InvalidCase("store empty", [("/store", "")],
                [("/store", "expected a directory path, found an empty string")]),

    // Zoom.
    InvalidCase("zoom above 22", [("/regions/0/zoom", [0, 23])],
                [("/regions/0/zoom/1", "expected an integer from 0 to 22, found 23")]),
    InvalidCase("zoom below 0", [("/regions/0/zoom", [-1, 3])],
                [("/regions/0/zoom/0", "expected an integer from 0 to 22, found -1")]),
    InvalidCase("zoom fraction", [("/regions/0/zoom", [1.5, 3])],
                [("/regions/0/zoom/0", "expected an integer from 0 to 22, found 1.5")]),
    InvalidCase("zoom min above max", [("/regions/0/zoom", [14, 3])],
                [("/regions/0/zoom", "expected min <= max, found min 14 > max 3")]),
    InvalidCase("zoom one element", [("/regions/0/zoom", [3])],
                [("/regions/0/zoom", "expected an array of 2 integers [min, max], found an array of 1 item")]),
    InvalidCase("zoom a number", [("/regions/0/zoom", 3)],
                [("/regions/0/zoom", "expected an array of 2 integers [min, max], found 3")]),
    InvalidCase("zoom misspelled", [("/regions/0/zoom", nil), ("/regions/0/zooom", [0, 3])],
                [("/regions/0/zooom", "unknown key \"zooom\"; did you mean \"zoom\"?")]),
    InvalidCase("zoom missing", [("/regions/0/zoom", nil)], [("/regions/0", "missing required key \"zoom\"")]),

    // Region keys.
    InvalidCase("region name missing", [("/regions/0/name", nil)], [("/regions/0", "missing required key \"name\"")]),
    InvalidCase("region not an object", [("/regions/0", "berlin")],
                [("/regions/0", "expected a region object, found the string \"berlin\"")]),
    InvalidCase("region metadata not an object", [("/regions/0/metadata", [1])],
                [("/regions/0/metadata", "expected an object, found an array of 1 item")]),
    InvalidCase("no area", [("/regions/0/bbox", nil)],
                [("/regions/0", "expected exactly one of \"bbox\", \"geometry\" or \"geojson\", found none")]),
    InvalidCase("two areas", [("/regions/1/bbox", [0, 0, 1, 1])],
                [("/regions/1", "expected exactly one of \"bbox\", \"geometry\" or \"geojson\", "
                  + "found \"bbox\" and \"geometry\"")]),
    InvalidCase("no style pack and no tileset", [("/regions/1/tilesets", nil)],
                [("/regions/1", "~a region must draw with a style pack or a tileset")]),

    // Bounding boxes.
    InvalidCase("bbox of 3", [("/regions/0/bbox", [1, 2, 3])],
                [("/regions/0/bbox",
                  "expected an array of 4 numbers [west, south, east, north], found an array of 3 items")]),
    InvalidCase("bbox with a string", [("/regions/0/bbox/1", "52")],
                [("/regions/0/bbox/1", "expected a latitude from -90 to 90, found the string \"52\"")]),
    InvalidCase("bbox longitude out of range", [("/regions/0/bbox/2", 200)],
                [("/regions/0/bbox/2", "expected a longitude from -180 to 180, found 200")]),
    InvalidCase("bbox latitude out of range", [("/regions/0/bbox/1", -91.5)],
                [("/regions/0/bbox/1", "expected a latitude from -90 to 90, found -91.5")]),
    InvalidCase("bbox south above north", [("/regions/0/bbox", [13.0, 53.0, 13.8, 52.7])],
                [("/regions/0/bbox", "expected south <= north, found south 53.0 > north 52.7")]),
    InvalidCase("bbox without width", [("/regions/0/bbox", [13, 52.3, 13, 52.7])],
                [("/regions/0/bbox", "expected a box with width, found west == east (13.0)")]),
    InvalidCase("bbox without height", [("/regions/0/bbox", [13.0, 52, 13.8, 52])],
                [("/regions/0/bbox", "expected a box with height, found south == north (52.0)")]),
    InvalidCase("bbox across the antimeridian with no width on one side", [("/regions/0/bbox", [180, -10, -170, 10])],
                [("/regions/0/bbox", "expected a box with width on both sides of the antimeridian, found west 180.0 and east -170.0")]),
    InvalidCase("bbox at the poles is fine but out of range is not", [("/regions/0/bbox", [-180, -90, 180, 90.5])],
                [("/regions/0/bbox/3", "expected a latitude from -90 to 90, found 90.5")]),

    // Geometry.
    InvalidCase("geometry of type Curve", [("/regions/1/geometry/type", "Curve")],
                [("/regions/1/geometry/type", "~expected a geometry of type \"Polygon\", \"MultiPolygon\", \"Point\", "
                  + "\"MultiPoint\", \"LineString\", \"MultiLineString\", \"GeometryCollection\", found \"Curve\"")]),
    InvalidCase("line string of one position", [("/regions/1/geometry", ["type": "LineString", "coordinates": [[0, 0]]])],
                [("/regions/1/geometry/coordinates", "expected a line string of at least 2 positions, found 1")]),
    InvalidCase("point out of range", [("/regions/1/geometry", ["type": "Point", "coordinates": [200, 0]])],
                [("/regions/1/geometry/coordinates/0", "expected a longitude from -180 to 180, found 200")]),
    InvalidCase("buffer of zero metres", [("/regions/1/buffer", 0)],
                [("/regions/1/buffer", "expected a distance in metres above 0 and at most 100000, found 0")]),
    InvalidCase("buffer too large", [("/regions/1/buffer", 250000)],
                [("/regions/1/buffer", "expected a distance in metres above 0 and at most 100000, found 250000")]),
    InvalidCase("collection of mixed kinds",
                [("/regions/1/geometry", ["type": "GeometryCollection", "geometries": [
                    ["type": "Point", "coordinates": [0, 0]], ["type": "LineString", "coordinates": [[0, 0], [1, 1]]]]])],
                [("/regions/1/geometry", "~expected a GeometryCollection of one kind")]),
    InvalidCase("geometry type misspelled", [("/regions/1/geometry/type", "Polygn")],
                [("/regions/1/geometry/type", "~found \"Polygn\"; did you mean \"Polygon\"?")]),
    InvalidCase("geometry without coordinates", [("/regions/1/geometry/coordinates", nil)],
                [("/regions/1/geometry", "missing required key \"coordinates\"")]),
    InvalidCase("geometry not an object", [("/regions/1/geometry", "POLYGON((0 0))")],
                [("/regions/1/geometry", "~expected a GeoJSON Polygon or MultiPolygon object, found the string")]),
    InvalidCase("ring of 3 positions", [("/regions/1/geometry/coordinates", [[[0, 0], [1, 0], [0, 0]]])],
                [("/regions/1/geometry/coordinates/0",
                  "expected a linear ring of at least 4 positions, found 3")]),
    InvalidCase("ring not closed", [("/regions/1/geometry/coordinates", [[[0, 0], [1, 0], [1, 1], [0, 1]]])],
                [("/regions/1/geometry/coordinates/0", "expected a closed ring (last position equal to the first), "
                  + "found first [0.0, 0.0] and last [0.0, 1.0]")]),
    InvalidCase("ring with a longitude out of range", [("/regions/1/geometry/coordinates/0/2/0", 181)],
                [("/regions/1/geometry/coordinates/0/2/0", "expected a longitude from -180 to 180, found 181")]),
    InvalidCase("ring with a bad position", [("/regions/1/geometry/coordinates/0/2", [2.4])],
                [("/regions/1/geometry/coordinates/0/2",
                  "expected a position [longitude, latitude], found an array of 1 item")]),
    InvalidCase("ring with zero area",
                [("/regions/1/geometry/coordinates", [[[0, 0], [1, 1], [2, 2], [1, 1], [0, 0]]])],
                [("/regions/1/geometry/coordinates/0",
                  "expected a ring that encloses an area, found a ring with zero area")]),
    InvalidCase("bow-tie ring", [("/regions/1/geometry/coordinates", [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]])],
                [("/regions/1/geometry/coordinates/0", "expected a ring that does not cross itself, "
                  + "found the edge from position 0 crossing the edge from position 2")]),
    InvalidCase("hole outside its outer ring",
                [("/regions/1/geometry/coordinates", [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]],
                                                       [[5, 5], [5, 6], [6, 6], [6, 5], [5, 5]]])],
                [("/regions/1/geometry/coordinates/1", "expected a hole inside its outer ring (ring 0), found one outside it")]),
    InvalidCase("hole crossing its outer ring",
                [("/regions/1/geometry/coordinates", [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]],
                                                       [[0.5, 0.2], [0.5, 0.4], [1.5, 0.4], [1.5, 0.2], [0.5, 0.2]]])],
                [("/regions/1/geometry/coordinates/1", "expected a hole inside its outer ring, found the hole's edge from "
                  + "position 1 crossing the outer ring's edge from position 1")]),
    InvalidCase("multipolygon with a bad second polygon",
                [("/regions/1/geometry", ["type": "MultiPolygon",
                                          "coordinates": [square, [[[5, 5], [6, 5], [5, 5]]]]])],
                [("/regions/1/geometry/coordinates/1/0", "expected a linear ring of at least 4 positions, found 3")]),
    InvalidCase("empty multipolygon", [("/regions/1/geometry", ["type": "MultiPolygon", "coordinates": []])],
                [("/regions/1/geometry/coordinates", "expected at least one polygon, found an empty array")]),

    // Ids.
    InvalidCase("duplicate region id", [("/regions/1/id", "berlin")],
                [("/regions/1/id", "duplicate region id \"berlin\"; it is first used at /regions/0/id")]),
    InvalidCase("duplicate style pack id", [("/stylePacks/1/id", "streets")],
                [("/stylePacks/1/id", "duplicate style pack id \"streets\"; it is first used at /stylePacks/0/id")]),
    InvalidCase("region id with a space", [("/regions/0/id", "new york")],
                [("/regions/0/id", "expected an id of 1 to 64 letters, digits, '.', '_' or '-' starting with a "
                  + "letter or digit, found the string \"new york\"")]),
    InvalidCase("region id starting with a dot", [("/regions/0/id", "..")], [("/regions/0/id", "~found the string \"..\"")]),
    InvalidCase("region id of 65 characters", [("/regions/0/id", .string(String(repeating: "a", count: 65)))],
                [("/regions/0/id", "~expected an id of 1 to 64 letters")]),
    InvalidCase("style pack id with a slash", [("/stylePacks/1/id", "a/b")],
                [("/stylePacks/1/id", "~expected an id of 1 to 64")]),

    // Style packs and references.
    InvalidCase("misspelled style pack reference", [("/regions/0/stylePacks/0", "street")],
                [("/regions/0/stylePacks/0", "unknown style pack \"street\"; did you mean \"streets\"?")]),
    InvalidCase("unknown style pack reference", [("/regions/0/stylePacks/0", "terrain")],
                [("/regions/0/stylePacks/0",
                  "unknown style pack \"terrain\"; expected one of \"streets\", \"satellite\"")]),
    InvalidCase("style pack listed twice", [("/regions/0/stylePacks", ["streets", "streets"])],
                [("/regions/0/stylePacks/1", "expected each entry once, found \"streets\" again")]),
    InvalidCase("style pack without style", [("/stylePacks/0/style", nil)],
                [("/stylePacks/0", "missing required key \"style\"")]),
    InvalidCase("style not a URL", [("/stylePacks/0/style", "styles/streets.json")],
                [("/stylePacks/0/style", "expected a style URL starting with http://, https:// or mapbox://, "
                  + "found the string \"styles/streets.json\"")]),
    InvalidCase("mapboxTiles in a region's limits", [("/regions/0/limits", ["mapboxTiles": 100])],
                [("/regions/0/limits/mapboxTiles", "~expected mapboxTiles in the job's top-level limits only")]),
    InvalidCase("mapboxTiles not positive", [("/limits", ["mapboxTiles": 0])],
                [("/limits/mapboxTiles", "~expected")]),
    InvalidCase("style with a variable in its path", [("/stylePacks/0/style", "https://a.example/${KEY}/s.json")],
                [("/stylePacks/0/style", "~expected ${NAME} references only as whole query parameter values")]),
    InvalidCase("tileset with a variable inside a query value", [("/regions/0/tilesets", ["https://t/{z}/{x}/{y}.png?k=a${KEY}"])],
                [("/regions/0/tilesets/0", "~expected ${NAME} references only as whole query parameter values")]),
    InvalidCase("style with a broken variable", [("/stylePacks/0/style", "https://a.example/s.json?key=${KEY")],
                [("/stylePacks/0/style", "~expected \"}\" to close a ${NAME} reference")]),
    InvalidCase("style with a space", [("/stylePacks/0/style", "https://a.example/my style.json")],
                [("/stylePacks/0/style", "~expected a URL without spaces")]),
    InvalidCase("pixel ratio 4", [("/stylePacks/0/pixelRatio", 4)],
                [("/stylePacks/0/pixelRatio", "expected 1, 2 or 3, found 4")]),
    InvalidCase("glyphs misspelled", [("/stylePacks/0/glyphs", "al")],
                [("/stylePacks/0/glyphs", "expected \"all\", \"ideographs-local\" or \"used\", found the string \"al\"; "
                  + "did you mean \"all\"?")]),
    InvalidCase("style pack key misspelled", [("/stylePacks/0/pixelratio", 2)],
                [("/stylePacks/0/pixelratio", "unknown key \"pixelratio\"; did you mean \"pixelRatio\"?")]),
    InvalidCase("overzoom not a boolean", [("/stylePacks/0/overzoom", "no")],
                [("/stylePacks/0/overzoom", "expected true or false, found the string \"no\"")]),
    InvalidCase("overzoom misspelled", [("/stylePacks/0/overZoom", false)],
                [("/stylePacks/0/overZoom", "unknown key \"overZoom\"; did you mean \"overzoom\"?")]),

    // Tilesets.
    InvalidCase("tileset template without {y}", [("/regions/1/tilesets/0", "https://t.example/{z}/{x}.png")],
                [("/regions/1/tilesets/0", "expected a tile URL template with {z}, {x} and {y}, found one "
                  + "without {y}: \"https://t.example/{z}/{x}.png\"")]),
    InvalidCase("tileset not a URL", [("/regions/1/tilesets/0", "tiles.json")],
                [("/regions/1/tilesets/0", "~starting with http://, https:// or mapbox://")]),
    InvalidCase("tileset not a string", [("/regions/1/tilesets/0", 3)],
                [("/regions/1/tilesets/0", "expected a string, found 3")]),

    // Origins, limits, download.
    InvalidCase("origin prefix not a URL", [("/origins", ["tiles/": "https://mirror.example/"])],
                [("/origins/tiles~1", "expected an http://, https:// or mapbox:// URL prefix as the key, "
                  + "found \"tiles/\"")]),
    InvalidCase("origin mirror not a string", [("/origins", ["https://a.example/": 3])],
                [("/origins/https:~1~1a.example~1", "~found 3")]),
    InvalidCase("origins not an object", [("/origins", [])],
                [("/origins", "expected an object mapping URL prefixes to mirrors, found an empty array")]),
    InvalidCase("max tiles zero", [("/limits", ["maxTiles": 0])],
                [("/limits/maxTiles", "expected a positive integer, found 0")]),
    InvalidCase("max bytes a string", [("/limits", ["maxBytes": "1GB"])],
                [("/limits/maxBytes", "expected a positive integer, found the string \"1GB\"")]),
    InvalidCase("region max tiles negative", [("/regions/0/limits", ["maxTiles": -5])],
                [("/regions/0/limits/maxTiles", "expected a positive integer, found -5")]),
    InvalidCase("region limits unknown key", [("/regions/0/limits", ["maxTile": 5])],
                [("/regions/0/limits/maxTile", "~maxTiles")]),
    InvalidCase("concurrency 300", [("/download", ["concurrency": 300])],
                [("/download/concurrency", "expected an integer from 1 to 256, found 300")]),
    InvalidCase("retries -1", [("/download", ["retries": -1])],
                [("/download/retries", "expected an integer from 0 to 20, found -1")]),
    InvalidCase("timeout zero", [("/download", ["timeoutSeconds": 0])],
                [("/download/timeoutSeconds", "expected a number of seconds greater than 0, found 0")]),
    InvalidCase("per host zero", [("/download", ["perHost": 0])],
                [("/download/perHost", "expected an integer from 1 to 256, found 0")]),
    InvalidCase("per host 257", [("/download", ["perHost": 257])],
                [("/download/perHost", "expected an integer from 1 to 256, found 257")]),
    InvalidCase("requests per second zero", [("/download", ["requestsPerSecond": 0])],
                [("/download/requestsPerSecond", "expected a number of requests per second greater than 0, found 0")]),
    InvalidCase("requests per second a string", [("/download", ["requestsPerSecond": "10/s"])],
                [("/download/requestsPerSecond",
                  "expected a number of requests per second greater than 0, found the string \"10/s\"")]),
    InvalidCase("max response bytes too small", [("/download", ["maxResponseBytes": 10])],
                [("/download/maxResponseBytes", "expected an integer from 1024 to 1073741824, found 10")]),
    InvalidCase("stall seconds negative", [("/download", ["stallSeconds": -1])],
                [("/download/stallSeconds", "expected a number of seconds greater than 0, found -1")]),
    InvalidCase("missing tiles misspelled", [("/download", ["missingTiles": "skipp"])],
                [("/download/missingTiles", "expected \"fail\" or \"skip\", found the string \"skipp\"; "
                  + "did you mean \"skip\"?")]),
    InvalidCase("missing tiles a boolean", [("/download", ["missingTiles": true])],
                [("/download/missingTiles", "expected \"fail\" or \"skip\", found true")]),
    InvalidCase("user agent empty", [("/download", ["userAgent": ""])],
                [("/download/userAgent", "expected a non-empty string, found an empty string")]),
    InvalidCase("user agent with a line break", [("/download", ["userAgent": "a\r\nX-Evil: 1"])],
                [("/download/userAgent", "~expected a User-Agent without control characters or line breaks")]),
    InvalidCase("per host misspelled", [("/download", ["perhost": 2])],
                [("/download/perhost", "unknown key \"perhost\"; did you mean \"perHost\"?")]),
    InvalidCase("download key misspelled", [("/download", ["retry": 2])],
                [("/download/retry", "unknown key \"retry\"; did you mean \"retries\"?")]),
    InvalidCase("limits key unknown", [("/limits", ["maxRequests": 2])],
                [("/limits/maxRequests", "unknown key \"maxRequests\"; expected one of \"maxTiles\", \"maxBytes\", \"mapboxTiles\", "
                  + "\"requireAttribution\"")]),
    // Attribution.
    InvalidCase("requireAttribution not a boolean", [("/limits", ["requireAttribution": "yes"])],
                [("/limits/requireAttribution", "expected true or false, found the string \"yes\"")]),
    InvalidCase("requireAttribution in a region's limits", [("/regions/0/limits", ["requireAttribution": true])],
                [("/regions/0/limits/requireAttribution", "~expected requireAttribution in the job's top-level limits only")]),
    InvalidCase("attribution empty", [("/attribution", "")],
                [("/attribution", "expected a non-empty string, found an empty string")]),
    InvalidCase("attribution a number", [("/attribution", 5)],
                [("/attribution", "expected the attribution text or an object with \"text\", \"licence\" and \"url\", found 5")]),
    InvalidCase("attribution object misspelled, without text", [("/attribution", ["license": "ODbL-1.0"])],
                [("/attribution/license", "unknown key \"license\"; did you mean \"licence\"?"),
                 ("/attribution", "missing required key \"text\"")]),
    InvalidCase("attribution url not a URL", [("/attribution", ["text": "© Example", "url": "example.com"])],
                [("/attribution/url", "~expected a URL starting with http://, https:// or mapbox://")]),
]

final class JobValidationTests: XCTestCase {
    func testBaseJobIsValid() throws {
        let base = try makeTemporaryDirectory(self)
        let result = validate(baseJob, base: base)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertNotNil(result.job)
    }

    func testTheJobsAttributionAndItsRequirementAreRead() throws {
        let base = try makeTemporaryDirectory(self)
        XCTAssertNil(validate(baseJob, base: base).job?.attribution)
        XCTAssertEqual(validate(baseJob, base: base).job?.limits.requireAttribution, false)
        let text = validate(baseJob.setting("/attribution", to: "© Example").setting("/limits", to: ["requireAttribution": true]),
                            base: base).job
        XCTAssertEqual(text?.attribution, Attribution(kind: .job, source: "Test job", text: "© Example"))
        XCTAssertEqual(text?.limits.requireAttribution, true)
        let object = validate(baseJob.setting("/attribution", to: ["text": "© OSM", "licence": "ODbL-1.0",
                                                                  "url": "https://www.openstreetmap.org/copyright"]), base: base).job
        XCTAssertEqual(object?.attribution, Attribution(kind: .job, source: "Test job", text: "© OSM", licence: "ODbL-1.0",
                                                        url: "https://www.openstreetmap.org/copyright"))
    }

    func testEachInvalidCaseReportsExactlyItsDiagnostics() throws {
        let base = try makeTemporaryDirectory(self)
        for testCase in cases {
            var document = baseJob
            for (pointer, value) in testCase.edits { document = document.setting(pointer, to: value) }
            let result = validate(document, base: base)
            XCTAssertNil(result.job, testCase.name)
            let found = result.diagnostics.map { ($0.pointer, $0.message) }
            XCTAssertEqual(found.count, testCase.expected.count,
                           "\(testCase.name): \(result.diagnostics.map(\.description))")
            for ((pointer, message), (expectedPointer, expectedMessage)) in zip(found, testCase.expected) {
                XCTAssertEqual(pointer, expectedPointer, testCase.name)
                if expectedMessage.hasPrefix("~") {
                    XCTAssertTrue(message.contains(expectedMessage.dropFirst()), "\(testCase.name): \(message)")
                } else {
                    XCTAssertEqual(message, expectedMessage, testCase.name)
                }
            }
            XCTAssertTrue(result.diagnostics.allSatisfy { $0.file == "job.json" }, testCase.name)
        }
    }

    func testSeveralProblemsAreReportedTogetherInDocumentOrder() throws {
        let base = try makeTemporaryDirectory(self)
        let document = baseJob
            .setting("/version", to: 3)
            .setting("/stylePacks/0/pixelRatio", to: 5)
            .setting("/regions/0/zoom", to: [3, 30])
            .setting("/regions/0/stylePacks", to: ["streetz"])
            .setting("/regions/1/id", to: "berlin")
            .setting("/download", to: ["concurrency": 0])
        let result = validate(document, base: base)
        XCTAssertEqual(result.diagnostics.map(\.pointer), [
            "/version", "/stylePacks/0/pixelRatio", "/regions/0/zoom/1", "/regions/0/stylePacks/0",
            "/regions/1/id", "/download/concurrency",
        ])
        XCTAssertEqual(result.diagnostics[3].message, "unknown style pack \"streetz\"; did you mean \"streets\"?")
        XCTAssertEqual(result.diagnostics[0].description,
                       "job.json: /version: expected 1 (the only job file version), found 3")
    }

    func testReferenceToAStylePackWithOtherProblemsIsNotAlsoUnknown() throws {
        let base = try makeTemporaryDirectory(self)
        let document = baseJob.setting("/stylePacks/0/pixelRatio", to: 9)
        XCTAssertEqual(validate(document, base: base).diagnostics.map(\.pointer), ["/stylePacks/0/pixelRatio"])
    }

    func testSchemaReferenceIsAcceptedAndIgnored() throws {
        let base = try makeTemporaryDirectory(self)
        let document = baseJob.setting("/$schema", to: "schema/job.schema.json")
        XCTAssertEqual(validate(document, base: base).job, validate(baseJob, base: base).job)
        XCTAssertNotNil(validate(document, base: base).job)
    }

    func testMissingFilesAreReportedWithTheirResolvedPaths() throws {
        let base = try makeTemporaryDirectory(self)
        let document = baseJob
            .setting("/regions/0/bbox", to: nil)
            .setting("/regions/0/geojson", to: "shapes/missing.geojson")
            .setting("/origins", to: [
                "https://tiles.example.com/": "../mirror",
                "https://b.example.com/": "mbtiles:data/b.mbtiles",
            ])
        let parent = base.deletingLastPathComponent().path
        let diagnostics = validate(document, base: base).diagnostics
        XCTAssertEqual(diagnostics.map(\.pointer), [
            "/regions/0/geojson", "/origins/https:~1~1tiles.example.com~1", "/origins/https:~1~1b.example.com~1",
        ])
        XCTAssertEqual(diagnostics.map(\.message), [
            "GeoJSON file not found: \(base.path)/shapes/missing.geojson",
            "mirror directory not found: \(parent)/mirror",
            "MBTiles file not found: \(base.path)/data/b.mbtiles",
        ])
    }

    func testAMirrorDirectoryThatIsAFileIsReported() throws {
        let base = try makeTemporaryDirectory(self)
        try write("x", to: "mirror", in: base)
        let document = baseJob.setting("/origins", to: ["https://tiles.example.com/": "mirror"])
        XCTAssertEqual(validate(document, base: base).diagnostics.map(\.message),
                       ["expected a mirror directory, found a file: \(base.path)/mirror"])
    }

    func testVariableReferencesInURLsAreKeptAsWritten() throws {
        let base = try makeTemporaryDirectory(self)
        let style = "https://api.example.com/styles/v1/streets?access_token=${MAPBOX_TOKEN}"
        let tileset = "https://t.example.com/{z}/{x}/{y}.pbf?key=${TILE_KEY}"
        let document = baseJob.setting("/stylePacks/0/style", to: .string(style))
            .setting("/regions/1/tilesets/0", to: .string(tileset))
        let job = try XCTUnwrap(validate(document, base: base).job)
        XCTAssertEqual(job.stylePacks[0].style, style)
        XCTAssertEqual(job.regions[1].tilesets, [tileset])
    }

    func testOverzoomDefaultsToTrueAndReadsFalse() throws {
        let base = try makeTemporaryDirectory(self)
        XCTAssertEqual(try XCTUnwrap(validate(baseJob, base: base).job).stylePacks[0].overzoom, true)
        let off = validate(baseJob.setting("/stylePacks/0/overzoom", to: false), base: base)
        XCTAssertEqual(off.diagnostics, [])
        XCTAssertEqual(off.job?.stylePacks[0].overzoom, false)
        let schema = try JSONValue.parse(Data(contentsOf: repositoryRoot.appendingPathComponent("Jobs/schema/job.schema.json")))
        let property = schema["$defs"]?["stylePack"]?["properties"]?["overzoom"]
        XCTAssertEqual(property?["type"]?.stringValue, "boolean")
        XCTAssertEqual(property?["default"], .bool(StylePack(id: "p", style: "s").overzoom))
    }

    func testTilesetsTakeExtensionlessTileJSONURLsAndEveryTemplateToken() throws {
        let base = try makeTemporaryDirectory(self)
        for tileset in ["https://t.example/tiles/v3", "https://t.example/planet", "https://t.example/{quadkey}.jpeg",
                        "https://t.example/wms?bbox={bbox-epsg-3857}&format=image/png"] {
            let result = validate(baseJob.setting("/regions/1/tilesets/0", to: .string(tileset)), base: base)
            XCTAssertEqual(result.diagnostics, [], tileset)
            XCTAssertEqual(result.job?.regions[1].tilesets, [tileset])
        }
    }

    func testDownloadSettingsAreReadWithTheirDefaults() throws {
        let base = try makeTemporaryDirectory(self)
        let defaults = try XCTUnwrap(validate(baseJob.setting("/download", to: nil), base: base).job).download
        XCTAssertEqual(defaults, DownloadSettings())
        XCTAssertEqual(defaults.perHost, defaults.concurrency, "perHost defaults to the concurrency")
        let only = try XCTUnwrap(validate(baseJob.setting("/download", to: ["concurrency": 64]), base: base).job).download
        XCTAssertEqual(only.perHost, 64)
        XCTAssertNil(defaults.requestsPerSecond)
        XCTAssertEqual(defaults.maxResponseBytes, 64 << 20)
        XCTAssertEqual(defaults.stallSeconds, 15)
        XCTAssertEqual(defaults.missingTiles, .fail)
        XCTAssertNil(defaults.userAgent)

        let document = baseJob.setting("/download", to: [
            "concurrency": 4, "perHost": 2, "requestsPerSecond": 2.5, "maxResponseBytes": 2048,
            "stallSeconds": 3, "missingTiles": "skip", "userAgent": "acme-offline/2.0",
        ])
        let result = validate(document, base: base)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertEqual(result.job?.download, DownloadSettings(
            concurrency: 4, perHost: 2, requestsPerSecond: 2.5, maxResponseBytes: 2048, stallSeconds: 3,
            missingTiles: .skip, userAgent: "acme-offline/2.0"))
    }

    func testSchemaDescribesTheNewDownloadKeysWithTheModelDefaults() throws {
        let url = repositoryRoot.appendingPathComponent("Jobs/schema/job.schema.json")
        let schema = try JSONValue.parse(Data(contentsOf: url))
        let download = schema["properties"]?["download"]?["properties"]
        let defaults = DownloadSettings()
        XCTAssertEqual(download?["perHost"]?["default"]?.intValue, defaults.perHost)
        XCTAssertEqual(download?["perHost"]?["maximum"]?.intValue, 256)
        XCTAssertEqual(download?["maxResponseBytes"]?["default"]?.intValue, defaults.maxResponseBytes)
        XCTAssertEqual(download?["maxResponseBytes"]?["minimum"]?.intValue, JobValidator.maxResponseBytesRange.lowerBound)
        XCTAssertEqual(download?["maxResponseBytes"]?["maximum"]?.intValue, JobValidator.maxResponseBytesRange.upperBound)
        XCTAssertEqual(download?["stallSeconds"]?["default"]?.doubleValue, defaults.stallSeconds)
        XCTAssertEqual(download?["missingTiles"]?["default"]?.stringValue, defaults.missingTiles.rawValue)
        XCTAssertEqual(Set(download?["missingTiles"]?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []),
                       Set(MissingTilePolicy.allCases.map(\.rawValue)))
        XCTAssertNil(download?["requestsPerSecond"]?["default"])
        XCTAssertNil(download?["userAgent"]?["default"])
    }

    func testIdentifierRule() {
        for id in ["a", "A9", "berlin-mitte_2.0", "0", String(repeating: "x", count: 64)] {
            XCTAssertTrue(JobValidator.isSafeIdentifier(id), id)
        }
        for id in ["", "-a", ".a", "_a", "a b", "a/b", "ä", "a:b", String(repeating: "x", count: 65)] {
            XCTAssertFalse(JobValidator.isSafeIdentifier(id), id)
        }
    }
}
