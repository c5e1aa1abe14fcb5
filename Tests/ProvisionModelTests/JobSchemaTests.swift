import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// Keeps `Jobs/schema/job.schema.json`, the loader and `docs/job-file.md` from drifting apart.
final class JobSchemaTests: XCTestCase {
    private func schema() throws -> JSONValue {
        let url = repositoryRoot.appendingPathComponent("Jobs/schema/job.schema.json")
        return try JSONValue.parse(Data(contentsOf: url))
    }

    private func keys(_ value: JSONValue?) -> Set<String> { Set(value?.objectValue?.keys ?? []) }

    private func strings(_ value: JSONValue?) -> Set<String> {
        Set(value?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    func testSchemaNamesExactlyTheKeysTheLoaderAccepts() throws {
        let schema = try schema()
        XCTAssertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
        let objects: [(String, JSONValue?, [String], [String])] = [
            ("job", schema, JobFileKeys.job, JobFileKeys.requiredJob),
            ("stylePack", schema["$defs"]?["stylePack"], JobFileKeys.stylePack, JobFileKeys.requiredStylePack),
            ("region", schema["$defs"]?["region"], JobFileKeys.region, JobFileKeys.requiredRegion),
            ("limits", schema["properties"]?["limits"], JobFileKeys.jobLimits, []),
            ("region limits", schema["$defs"]?["region"]?["properties"]?["limits"], JobFileKeys.limits, []),
            ("download", schema["properties"]?["download"], JobFileKeys.download, []),
            ("searchPack", schema["$defs"]?["searchPack"], JobFileKeys.searchPack, JobFileKeys.requiredSearchPack),
            ("searchLayer", schema["$defs"]?["searchLayer"], JobFileKeys.searchLayer, JobFileKeys.requiredSearchLayer),
            ("attribution", schema["$defs"]?["attribution"], JobFileKeys.attribution, JobFileKeys.requiredAttribution),
            ("routingPack", schema["$defs"]?["routingPack"], JobFileKeys.routingPack, JobFileKeys.requiredRoutingPack),
        ]
        for (name, object, allowed, required) in objects {
            XCTAssertEqual(keys(object?["properties"]), Set(allowed), name)
            XCTAssertEqual(strings(object?["required"]), Set(required), name)
            XCTAssertEqual(object?["additionalProperties"], .bool(false), name)
            for key in allowed {
                XCTAssertNotNil(object?["properties"]?[key]?["description"]?.stringValue, "\(name).\(key) has a description")
            }
        }
        let areaAlternatives = schema["$defs"]?["region"]?["oneOf"]?.arrayValue ?? []
        XCTAssertEqual(areaAlternatives.flatMap { $0["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] },
                       JobFileKeys.areaKeys)
    }

    func testSchemaDefaultsAndEnumsMatchTheModel() throws {
        let schema = try schema()
        let download = schema["properties"]?["download"]?["properties"]
        let defaults = DownloadSettings()
        XCTAssertEqual(download?["concurrency"]?["default"]?.intValue, defaults.concurrency)
        XCTAssertEqual(download?["retries"]?["default"]?.intValue, defaults.retries)
        XCTAssertEqual(download?["timeoutSeconds"]?["default"]?.doubleValue, defaults.timeoutSeconds)
        let pack = schema["$defs"]?["stylePack"]?["properties"]
        let defaultPack = StylePack(id: "x", style: "https://x")
        XCTAssertEqual(pack?["pixelRatio"]?["default"]?.intValue, defaultPack.pixelRatio)
        XCTAssertEqual(pack?["glyphs"]?["default"]?.stringValue, defaultPack.glyphs.rawValue)
        XCTAssertEqual(strings(pack?["glyphs"]?["enum"]), Set(GlyphPolicy.allCases.map(\.rawValue)))
        XCTAssertEqual(schema["$defs"]?["id"]?["pattern"], "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
        XCTAssertEqual(schema["$defs"]?["searchLayer"]?["properties"]?["kind"]?["enum"]?.arrayValue?.compactMap(\.stringValue),
                       SearchPack.kinds)
        XCTAssertEqual(schema["$defs"]?["searchPack"]?["properties"]?["names"]?["default"]?.arrayValue?.compactMap(\.stringValue),
                       SearchPack.defaultNames)
        let routing = schema["$defs"]?["routingPack"]?["properties"]
        XCTAssertEqual(routing?["levels"]?["default"]?.arrayValue?.compactMap(\.intValue), RoutingPack.defaultLevels)
        XCTAssertEqual(routing?["levels"]?["items"]?["enum"]?.arrayValue?.compactMap(\.intValue), RoutingPack.knownLevels)
        XCTAssertEqual(routing?["gzip"]?["default"], .bool(false))
    }

    func testEveryJobFileInJobsValidates() throws {
        let directory = repositoryRoot.appendingPathComponent("Jobs")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertEqual(files, ["cities-search.json", "cities.json", "mapbox-streets.json", "maptiler-streets.json", "openfreemap-liberty.json",
                               "osm-raster.json", "terrain.json"])
        for name in files {
            let result = JobLoader.load(from: directory.appendingPathComponent(name), displayName: "Jobs/" + name)
            XCTAssertEqual(result.diagnostics.map(\.description), [], name)
            XCTAssertNotNil(result.job, name)
        }
    }

    /// The example in `docs/job-file.md` is valid apart from the files it names, which do not exist here.
    func testDocumentedExampleValidatesExceptForItsFiles() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/job-file.md"), encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "```json\n"))
        let end = try XCTUnwrap(text.range(of: "```", range: start.upperBound..<text.endIndex))
        let example = String(text[start.upperBound..<end.lowerBound])
        let root = try makeTemporaryDirectory(self)
        let result = JobLoader.parse(data: Data(example.utf8), baseDirectory: root, displayName: "example.json")
        XCTAssertFalse(result.diagnostics.isEmpty)
        for diagnostic in result.diagnostics {
            XCTAssertTrue(diagnostic.message.contains("not found: \(root.path)/"), diagnostic.description)
        }
        // With the files in place it loads.
        try write(#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, to: "shapes/lisbon.geojson", in: root)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("mirror/demotiles"),
                                                withIntermediateDirectories: true)
        try write("", to: "data/terrain.mbtiles", in: root)
        let loaded = JobLoader.parse(data: Data(example.utf8), baseDirectory: root, displayName: "example.json")
        XCTAssertEqual(loaded.diagnostics.map(\.description), [])
    }
}
