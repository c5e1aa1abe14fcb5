import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: `plan --html/--svg` draw the graph tiles a routing pack needs on a level
/// (`--graph-level N`, else the highest), read back from the markup: each tile once per view,
/// with its state and the regions whose geometry meets it, as many as `plan --json` counts.
final class RoutingCoveragePictureTests: WorkspaceTestCase {
    private static let graphBase = "https://graph.example.com/town/"
    /// Two regions sharing the level-1 cell of lon 5–6, lat 50–51 (tile 50,585) and some level-2 cells.
    private static let west = Demo.City(id: "west", name: "West", bbox: [4.90, 50.03, 5.60, 50.40])
    private static let east = Demo.City(id: "east", name: "East", bbox: [5.40, 50.10, 6.20, 50.45])

    /// A job over the two regions whose routing pack `drive` reads `graph` (a directory origin).
    private func writeJob(graph: URL? = nil) throws -> String {
        // The plan reads no graph tile from a template's source, but its origin must be there.
        try FileManager.default.createDirectory(at: ws.root.appendingPathComponent("graph"), withIntermediateDirectories: true)
        let regions = [Self.west, Self.east].map { $0.region(zoom: 10...10, extra: [("routingPacks", ["drive"])]) }
        guard case .object(var job) = Demo.job(regions: regions,
                                               origins: ws.origins(tiles: .mbtiles) + [(Self.graphBase, .string(graph?.path ?? "graph"))]) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["download"] = ["missingTiles": "skip"]
        job["routingPacks"] = [["id": "drive", "tiles": .string(Self.graphBase + "{tilePath}")]]
        return try ws.write(.object(job), to: "job.json").path
    }

    /// The graph tiles of each `svg` in `root`: per view, `index → (state, regions)`.
    private func graphTiles(_ root: MarkupElement) -> [[Int: [String]]] {
        root.elements("svg").filter { $0.attributes["data-zoom"] != nil }.map { svg in
            var tiles: [Int: [String]] = [:]
            for group in svg.elements("g") where group.attributes["class"] == "graph-tiles" {
                for rect in group.elements("rect") {
                    guard let index = rect.attributes["data-graph-index"].flatMap(Int.init) else { continue }
                    XCTAssertNil(tiles[index], "graph tile \(index) drawn twice in one view")
                    tiles[index] = [rect.attributes["data-graph-state"] ?? "", rect.attributes["data-regions"] ?? "",
                                    group.attributes["data-routing-pack"] ?? "", group.attributes["data-graph-level"] ?? ""]
                }
            }
            return tiles
        }
    }

    func testThePicturesDrawTheGraphTilesOfALevelAsThePlanCountsThem() throws {
        let job = try writeJob()
        let result = try ws.provision("plan", job, "--html", "map.html", "--svg", "z10.svg", "--zoom", "10",
                                      "--graph-level", "1", "--json", "--quiet")
        result.expect(0)
        let svg = try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("z10.svg")))
        // Level 1 (1°): columns 184–186 (lon 4–7), row 140 (lat 50–51); the middle one is shared.
        XCTAssertEqual(graphTiles(svg), [[50_584: ["add", "west", "drive", "1"], 50_585: ["add", "west east", "drive", "1"],
                                          50_586: ["add", "east", "drive", "1"]]])
        // The page's views all draw the same tiles, of the level asked for.
        let page = try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("map.html")))
        XCTAssertEqual(graphTiles(page), graphTiles(svg))

        // Without --graph-level, level 2: as many tiles per region as the plan's cover, every one to add.
        let plain = try ws.provision("plan", job, "--html", "level2.html", "--json", "--quiet")
        plain.expect(0)
        let pack = try XCTUnwrap(try parseJSON(plain.stdout)["routingPacks"]?.arrayValue?.first)
        let views = graphTiles(try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("level2.html"))))
        let tiles = try XCTUnwrap(views.first)
        XCTAssertTrue(tiles.values.allSatisfy { $0[0] == "add" && $0[3] == "2" })
        let level2 = pack["levels"]?.arrayValue?.first { $0["level"]?.intValue == 2 }
        XCTAssertEqual(tiles.count, level2?["add"]?.intValue)
        for region in ["west", "east"] {
            let planned = pack["regionTiles"]?.arrayValue?.first { $0["region"]?.stringValue == region && $0["level"]?.intValue == 2 }
            XCTAssertEqual(tiles.values.filter { $0[1].split(separator: " ").contains(Substring(region)) }.count,
                           planned?["tiles"]?.intValue, region)
        }
        XCTAssertTrue(tiles.values.contains { $0[1] == "west east" }, "the regions overlap at lon 5.4–5.6")
    }

    /// After an apply from the test town's tile tree, the plan draws every needed tile as kept or
    /// without roads, and the audit draws the lock's tiles of the level.
    func testAfterAnApplyTilesAreKeptAndTheAuditDrawsTheLocksTiles() throws {
        let town = try ValhallaFixture.town()
        let job = try writeJob(graph: town.tileDirectory)
        try ws.provision("apply", job, "--quiet").expect(0)
        try ws.provision("plan", job, "--svg", "kept.svg", "--zoom", "10", "--quiet").expect(0)
        let kept = try XCTUnwrap(graphTiles(try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("kept.svg")))).first)
        let record = try XCTUnwrap(try readJSON(ws.lock)["routingPacks"]?.arrayValue?.first)
        func lockIndexes(_ key: String, _ entry: (String) -> String) -> Set<Int> {
            Set((record[key]?.arrayValue ?? []).compactMap { value -> Int? in
                let parts = entry(value.stringValue ?? "").split(separator: "/")
                return parts.count == 2 && parts[0] == "2" ? Int(parts[1]) : nil
            })
        }
        // "2/000/791/208.gph 1234 sha…": the level-2 path of a tile; absent cells are "2/791208".
        let held = lockIndexes("tiles") { line in
            let path = line.split(separator: " ").first.map(String.init) ?? ""
            let parts = path.replacingOccurrences(of: ".gph", with: "").split(separator: "/")
            return parts.count > 1 ? "\(parts[0])/\(parts.dropFirst().joined())" : ""
        }
        let absent = lockIndexes("absent") { $0 }
        XCTAssertFalse(held.isEmpty)
        XCTAssertEqual(Set(kept.filter { $0.value[0] == "present" }.keys), held)
        XCTAssertEqual(Set(kept.filter { $0.value[0] == "absent" }.keys), absent)
        XCTAssertEqual(kept.count, held.count + absent.count, "nothing to add or remove")

        // 1: the demo archive has no map tile at z10 here, which the audit names as a problem.
        try ws.provision("audit", "--store", ws.store.path, "--html", "audit.html", "--quiet").expect(1)
        let audit = try XCTUnwrap(graphTiles(try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("audit.html")))).first)
        XCTAssertEqual(audit.mapValues { [$0[0], $0[1]] }, kept.mapValues { [$0[0], ""] }, "the lock's tiles, with no regions")
    }

    func testALevelNoPackHasIsAUsageError() throws {
        let job = try writeJob()
        let missing = try ws.provision("plan", job, "--html", "map.html", "--graph-level", "3", "--quiet")
        missing.expect(64)
        XCTAssertTrue(missing.stderr.contains("--graph-level 3: the routing packs have levels 0, 1, 2 only"), missing.stderr)
        let bad = try ws.provision("plan", job, "--html", "map.html", "--graph-level", "9", "--quiet")
        bad.expect(64)
        XCTAssertTrue(bad.stderr.contains("--graph-level must be a whole number from 0 to 3, not '9'"), bad.stderr)
    }
}
