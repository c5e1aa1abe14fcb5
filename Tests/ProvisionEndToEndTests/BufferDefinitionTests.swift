import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Issue 20 #6: the definition a `buffer` region writes to offline.db is a valid geometry (MapLibre
/// counts the region's tiles, and re-downloads them, from it) that still holds every point of
/// the buffer, checked with an independent implementation (shapely, GEOS) against points sampled
/// on the sphere within the buffer distance.
final class BufferDefinitionTests: WorkspaceTestCase {
    private struct Case {
        var name: String
        var metres: Double
        var geometry: JSONValue
    }

    private static func line(_ points: [[Double]]) -> JSONValue {
        ["type": "LineString", "coordinates": .array(points.map { .array($0.map { .double($0) }) })]
    }

    private static let cases: [Case] = [
        // The route through Paris whose buffer GEOS found self-intersecting ("Self-intersection at 2.3899 48.8361").
        Case(name: "paris-route-500", metres: 500, geometry: line([[2.2945, 48.8584], [2.3370, 48.8606], [2.3499, 48.8530],
                                                                  [2.3700, 48.8530], [2.3950, 48.8350], [2.3800, 48.8300]])),
        Case(name: "paris-route-40", metres: 40, geometry: line([[2.2945, 48.8584], [2.3370, 48.8606], [2.3499, 48.8530]])),
        Case(name: "paris-hairpin-2000", metres: 2_000, geometry: line([[2.30, 48.85], [2.40, 48.86], [2.31, 48.87]])),
        Case(name: "london-point-1000", metres: 1_000, geometry: ["type": "Point", "coordinates": [-0.1278, 51.5074]]),
        Case(name: "london-points-300", metres: 300, geometry: ["type": "MultiPoint",
                                                                "coordinates": [[-0.1278, 51.5074], [-0.1240, 51.5080], [-0.1100, 51.5000]]]),
        Case(name: "new-york-square-200", metres: 200, geometry: ["type": "Polygon", "coordinates": [[
            [-74.00, 40.70], [-73.95, 40.70], [-73.95, 40.75], [-74.00, 40.75], [-74.00, 40.70]]]]),
        // A U whose opening the buffer closes: the union has a hole.
        Case(name: "new-york-u-1500", metres: 1_500, geometry: ["type": "Polygon", "coordinates": [[
            [-74.05, 40.60], [-73.85, 40.60], [-73.85, 40.80], [-73.88, 40.80], [-73.88, 40.63], [-74.02, 40.63],
            [-74.02, 40.80], [-74.05, 40.80], [-74.05, 40.60]]]]),
    ]

    func testBufferDefinitionsAreValidAndHoldTheWholeBuffer() throws {
        let results = try check(Self.cases)
        XCTAssertEqual(results["paris-route-500"]?["type"], "MultiPolygon")
    }

    /// Overlapping parts of a MultiPolygon (or features of a GeoJSON file) are united; parts
    /// that do not overlap are recorded exactly as written.
    func testOverlappingPolygonsAreUnitedAndOthersKeptAsWritten() throws {
        func square(_ west: Double, _ south: Double, _ side: Double) -> JSONValue {
            .array([.array([[west, south], [west + side, south], [west + side, south + side], [west, south + side],
                            [west, south]].map { .array($0.map { .double($0) }) })])
        }
        let overlapping = Case(name: "paris-overlapping", metres: 0, geometry: [
            "type": "MultiPolygon", "coordinates": [square(2.30, 48.85, 0.02), square(2.31, 48.86, 0.02)]])
        let apart = Case(name: "paris-apart", metres: 0, geometry: [
            "type": "MultiPolygon", "coordinates": [square(2.30, 48.85, 0.01), square(2.33, 48.85, 0.01)]])
        let results = try check([overlapping, apart])
        XCTAssertEqual(results["paris-apart"]?["vertices"]?.intValue, 10, "kept as written")
        XCTAssertNotEqual(results["paris-overlapping"]?["vertices"]?.intValue, 10)
    }

    /// Applies one region per case (drawn from the demo archive, tiles it lacks stored empty), has
    /// the oracle check every stored definition, and returns its results by case name.
    @discardableResult
    private func check(_ cases: [Case]) throws -> [String: JSONValue] {
        guard Oracles.python != nil else { throw Oracles.Failure(description: Oracles.missing) }
        let regions: [JSONValue] = cases.map { c in
            var members: [(String, JSONValue)] = [("id", .string(c.name)), ("name", .string(c.name)), ("geometry", c.geometry),
                                                  ("zoom", [10, 11]), ("stylePacks", ["streets"]),
                                                  ("metadata", ["name": .string(c.name)])]
            if c.metres > 0 { members.append(("buffer", .double(c.metres))) }
            return .object(JSONObject(members))
        }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles)) else {
            XCTFail("the demo job is not an object")
            return [:]
        }
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        let path = try ws.write(.object(job)).path
        try ws.provision("apply", "--quiet", path).expect(0)

        let rows = try ws.sqlite.rows("SELECT json_extract(description, '$.name'), definition FROM regions")
        XCTAssertEqual(rows.count, cases.count)
        let stored = Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) })
        let input: [JSONValue] = try cases.map { c in
            ["name": .string(c.name), "metres": .double(c.metres), "input": c.geometry,
             "definition": .string(try XCTUnwrap(stored[c.name], c.name))]
        }
        let file = ws.root.appendingPathComponent("cases.json")
        try JSONValue.array(input).data(.prettySorted).write(to: file)
        let output = try Oracles.run("Tests/Fixtures/buffers/check_definitions.py", [file.path])
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, cases.count)
        var results: [String: JSONValue] = [:]
        for line in lines {
            let result = try parseJSON(String(line))
            let name = result["name"]?.stringValue ?? "?"
            results[name] = result
            print("region definition \(name): \(result["type"]?.stringValue ?? "?"), "
                  + "\(result["vertices"]?.intValue ?? -1) vertices, \(result["sampled"]?.intValue ?? -1) points sampled")
            XCTAssertEqual(result["valid"], .bool(true), "\(name): \(result["validity"]?.stringValue ?? "")")
            XCTAssertEqual(result["projectedValid"], .bool(true), "\(name) in Web Mercator")
            XCTAssertEqual(result["missed"]?.intValue, 0, "\(name) misses points: \(result["firstMissed"] ?? .null)")
            XCTAssertGreaterThan(result["sampled"]?.intValue ?? 0, 10)
        }
        try ws.provision("plan", "--detailed-exitcode", path).expect(0, "converged")
        return results
    }
}
