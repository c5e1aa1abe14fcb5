import Foundation
import ProvisionCodecs
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: a job's routing pack applied from the Valhalla test town's tile tree (served on
/// loopback, or read from a directory origin), written to `routing/<pack>.tar`, and routed by
/// Valhalla's own `Actor` on that extract alone as on the whole build.
final class RoutingPackApplyTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
    private static let graphBase = "https://graph.example.com/town/"

    /// The west column of the town and one cell beyond it (no roads: its tiles answer 404), and
    /// the south-east level-2 cell; the middle column and the north-east cell are in no region.
    private static let west = Demo.City(id: "west", name: "West", bbox: [4.90, 50.03, 5.20, 50.47])
    private static let east = Demo.City(id: "east", name: "East", bbox: [5.52, 50.03, 5.72, 50.22])

    private var tar: URL { ws.store.appendingPathComponent("routing/drive.tar") }

    /// A job over `cities` drawn at z10 with the demo style (the demo archive has no tiles there:
    /// `missingTiles: skip`) whose regions all need the routing pack `drive` from `graph`.
    private func writeJob(_ cities: [Demo.City], graph: JSONValue, name: String = "job.json",
                          pack: JSONValue = ["id": "drive", "tiles": .string(graphBase + "{tilePath}"),
                                             "attribution": "© the test town's mappers"]) throws -> String {
        let regions = cities.map { $0.region(zoom: 10...10, extra: [("routingPacks", ["drive"])]) }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles) + [(Self.graphBase, graph)]) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        job["routingPacks"] = [pack]
        return try ws.write(.object(job), to: name).path
    }

    /// Serves the town's tile tree under `/graph/`.
    private func serveTown() throws -> ValhallaFixture.Town {
        let town = try ValhallaFixture.town()
        ws.server.serveDirectory(town.tileDirectory, at: "/graph/")
        return town
    }

    private func plannedPack(_ job: String) throws -> JSONValue {
        let result = try ws.provision("plan", "--json", job, environment: epoch)
        result.expect(0)
        return try XCTUnwrap(try parseJSON(result.stdout)["routingPacks"]?.arrayValue?.first)
    }

    private func levelCounts(_ pack: JSONValue) -> [[Int]] {
        (pack["levels"]?.arrayValue ?? []).map { level in
            ["level", "add", "remove", "keep"].map { level[$0]?.intValue ?? -1 }
        }
    }

    /// The lock's record of the pack.
    private func record() throws -> JSONValue {
        try XCTUnwrap(try readJSON(ws.lock)["routingPacks"]?.arrayValue?.first)
    }

    /// The member names of the extract, as `tar` lists them.
    private func members() throws -> [String] {
        let result = try ProvisionProcess.run(URL(fileURLWithPath: "/usr/bin/tar"), ["-tf", tar.path], in: ws.root,
                                              environment: [:], timeout: 30)
        result.expect(0)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    private static func trip(_ from: (Double, Double), _ to: (Double, Double)) -> [String: Any] {
        ["locations": [["lon": from.0, "lat": from.1], ["lon": to.0, "lat": to.1]], "costing": "auto"]
    }

    /// Trips inside the west region (across the motorway and both secondary roads) and inside the
    /// east one, then one from the west into the north-east, which no region covers.
    private static var trips: [[String: Any]] { [trip((5.06, 50.06), (5.12, 50.44)), trip((5.56, 50.06), (5.70, 50.20)),
                                trip((5.06, 50.06), (5.70, 50.46))] }

    func testAnAppliedPackRoutesInsideItsRegionsAsTheWholeBuildDoes() throws {
        let town = try serveTown()
        let job = try writeJob([Self.west, Self.east], graph: .string(ws.server.baseURL + "/graph/"))
        let planned = try plannedPack(job)
        XCTAssertEqual(planned["action"], "build")
        XCTAssertEqual(planned["reason"], "new")
        // Level 0: one 4° cell; level 1: the town's 1° cell and the empty one west of it; level 2:
        // the west column's two cells, the two empty ones west of them, the south-east cell.
        XCTAssertEqual(levelCounts(planned), [[0, 1, 0, 0], [1, 2, 0, 0], [2, 5, 0, 0]])
        let plannedText = try ws.provision("plan", job, environment: epoch)
        XCTAssertTrue(plannedText.stdout.contains("~ routing pack drive: build (new), routing/drive.tar over 2 regions, 8 graph tiles to download "
                                                  + "(size unknown until fetched)"), plannedText.stdout)
        XCTAssertEqual(planned["bytesToDownload"], .null, "over HTTP, only the fetch tells")
        try ws.provision("plan", "--detailed-exitcode", job, environment: epoch).expect(2, "changes present")

        let applied = try ws.provision("apply", job, environment: epoch)
        applied.expect(0)
        XCTAssertTrue(applied.combined.contains("Routing pack drive: 5 graph tiles (3 cells without roads), 5 fetched"), applied.combined)
        let record = try record()
        XCTAssertEqual(try readJSON(ws.lock)["schemaVersion"], 7)
        XCTAssertEqual(record["digest"]?.stringValue, "sha256:" + ws.sha256(tar))
        XCTAssertEqual(record["build"]?["datasetId"], "4242")
        XCTAssertEqual(record["absent"]?.arrayValue?.count, 3)
        let paths = (record["tiles"]?.arrayValue ?? []).compactMap { $0.stringValue?.split(separator: " ").first.map(String.init) }
        XCTAssertEqual(try members(), ["index.bin"] + paths)
        for path in paths {
            let line = try XCTUnwrap(record["tiles"]?.arrayValue?.first { $0.stringValue?.hasPrefix(path + " ") == true }?.stringValue)
            let served = try Data(contentsOf: town.tileDirectory.appendingPathComponent(path))
            XCTAssertEqual(line, "\(path) \(served.count) \(SHA256.hex(served))", "the lock records each tile's digest")
        }

        // Valhalla on the extract alone: the same length and time as on the whole build inside each
        // region; nothing into the part of the town no region covers.
        let onBuild = try ValhallaFixture.route(Self.trips, tileDirectory: town.tileDirectory)
        let onPack = try ValhallaFixture.route(Self.trips, tileExtract: tar)
        for n in 0..<2 {
            let build = try XCTUnwrap((onBuild[n]["trip"] as? [String: Any])?["summary"] as? [String: Any], "trip \(n): \(onBuild[n])")
            let pack = try XCTUnwrap((onPack[n]["trip"] as? [String: Any])?["summary"] as? [String: Any], "trip \(n): \(onPack[n])")
            let length = try XCTUnwrap(build["length"] as? Double), time = try XCTUnwrap(build["time"] as? Double)
            XCTAssertGreaterThan(length, 1)
            XCTAssertEqual(pack["length"] as? Double, length, "trip \(n)")
            XCTAssertEqual(pack["time"] as? Double, time, "trip \(n)")
            print("routing pack trip \(n): \(length) km, \(time) s on the whole build and on routing/drive.tar")
        }
        XCTAssertNotNil(onBuild[2]["trip"], "the whole build reaches the north-east: \(onBuild[2])")
        XCTAssertNil(onPack[2]["trip"], "the pack does not: \(onPack[2])")
        print("routing pack of west and east: \(paths.count) tiles (\(paths.joined(separator: ", "))), "
              + "\(record["bytes"]?.intValue ?? 0) bytes, 3 absent cells")

        // Nothing changed: the plan keeps it, nothing is downloaded, the tar is byte-identical.
        let bytes = try Data(contentsOf: tar), requests = ws.requests(under: "/graph/").count
        XCTAssertEqual(try plannedPack(job)["action"], "keep")
        try ws.provision("plan", "--detailed-exitcode", job, environment: epoch).expect(0, "no changes")
        let again = try ws.provision("apply", job, environment: epoch)
        again.expect(0)
        XCTAssertTrue(again.combined.contains("Routing pack drive: its graph tiles are unchanged; routing/drive.tar kept"), again.combined)
        XCTAssertEqual(ws.requests(under: "/graph/").count, requests, "nothing downloaded")
        XCTAssertEqual(try Data(contentsOf: tar), bytes)

        // Without the east region: its level-2 tile goes, the shared ones stay, nothing is fetched.
        let westOnly = try writeJob([Self.west], graph: .string(ws.server.baseURL + "/graph/"), name: "west.json")
        let shrunk = try plannedPack(westOnly)
        XCTAssertEqual(shrunk["reason"], "tiles change")
        XCTAssertEqual(levelCounts(shrunk), [[0, 0, 0, 1], [1, 0, 0, 2], [2, 0, 1, 4]])
        try ws.provision("apply", "--quiet", westOnly, environment: epoch).expect(0)
        XCTAssertEqual(ws.requests(under: "/graph/").count, requests, "kept tiles come from the previous extract")
        XCTAssertEqual(try members(), ["index.bin"] + paths.filter { $0 != "2/000/807/142.gph" })
        XCTAssertNil(try ValhallaFixture.route([Self.trips[1]], tileExtract: tar)[0]["trip"], "the east is gone")

        // The east back: the same tiles as the first apply, so the same bytes.
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: tar), bytes, "same tiles, same bytes, whatever the history")
    }

    /// A tile answered with another tile's bytes, or an HTML page, fails its URL by name and is not
    /// stored; the tiles fetched before are staged and not fetched again by the next apply.
    func testADamagedTileIsANamedFailureAndTheRestIsNotFetchedAgain() throws {
        let town = try serveTown()
        let job = try writeJob([Self.west, Self.east], graph: .string(ws.server.baseURL + "/graph/"))
        let southEast = "/graph/2/000/807/142.gph", level1 = "/graph/1/050/585.gph"
        let other = try Data(contentsOf: town.tileDirectory.appendingPathComponent("2/000/807/140.gph"))
        ws.server.setRoute(southEast, .respond(status: 200, headers: [], body: other))
        ws.server.setRoute(level1, .respond(status: 200, headers: [.init("Content-Type", "text/html")],
                                            body: Data("<html>maintenance</html>".utf8)))
        let failed = try ws.provision("apply", job, environment: epoch)
        failed.expect(75, "a partial apply")
        XCTAssertTrue(failed.stderr.contains("graph.example.com/town/2/000/807/142.gph"), failed.stderr)
        XCTAssertTrue(failed.combined.contains("graph id"), failed.combined)
        XCTAssertTrue(failed.combined.contains("HTML"), failed.combined)
        XCTAssertTrue(failed.stderr.contains("routing pack 'drive': 2 graph tiles failed to download"), failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tar.path), "no extract of part of the pack")
        let staged = try FileManager.default.contentsOfDirectory(atPath: ws.store.appendingPathComponent("routing/.drive.partial").path)
        XCTAssertEqual(staged.filter { $0.hasSuffix(".gph") }.count, 3, "the good tiles are staged: \(staged)")
        XCTAssertFalse(staged.contains("2-807142.gph"), "the damaged one is not")

        // The server mended: only the two that failed are fetched.
        let served = ws.requests(under: "/graph/").count
        ws.server.setRoute(southEast, .respond(status: 200, headers: [],
                                               body: try Data(contentsOf: town.tileDirectory.appendingPathComponent("2/000/807/142.gph"))))
        ws.server.setRoute(level1, .respond(status: 200, headers: [],
                                            body: try Data(contentsOf: town.tileDirectory.appendingPathComponent("1/050/585.gph"))))
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(Set(ws.requests(under: "/graph/").dropFirst(served).map(\.path)), [southEast, level1])
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.appendingPathComponent("routing/.drive.partial").path))
        XCTAssertEqual(try members().count, 6)
    }

    /// An apply killed with SIGKILL while one tile is still on its way: the next apply fetches that
    /// tile only (neither the tiles staged before the kill nor the cells that answered 404).
    func testTilesFetchedBeforeAKillAreNotFetchedAgain() throws {
        let town = try serveTown()
        let job = try writeJob([Self.west, Self.east], graph: .string(ws.server.baseURL + "/graph/"))
        let slow = "/graph/2/000/807/142.gph"
        let body = try Data(contentsOf: town.tileDirectory.appendingPathComponent("2/000/807/142.gph"))
        ws.server.setRoute(slow, .delay(60, then: .respond(status: 200, headers: [], body: body)))
        let staging = ws.store.appendingPathComponent("routing/.drive.partial")
        func staged() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? [] }
        let apply = try ws.start("apply", "--quiet", job, environment: epoch)
        let reached = apply.waitUntil(timeout: 60, watching: ws.server) {
            staged().filter { $0.hasSuffix(".gph") }.count == 4 && staged().filter { $0.hasSuffix(".absent") }.count == 3
        }
        XCTAssertTrue(reached, "four tiles and three absent cells staged: \(staged()) \(apply.stderrSoFar)")
        apply.send(SIGKILL)
        apply.wait()
        XCTAssertFalse(FileManager.default.fileExists(atPath: tar.path))

        let served = ws.requests(under: "/graph/").count
        ws.server.setRoute(slow, .respond(status: 200, headers: [], body: body))
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(ws.requests(under: "/graph/").dropFirst(served).map(\.path), [slow])
        XCTAssertEqual(try members().count, 6)
        XCTAssertEqual(try record()["absent"]?.arrayValue?.count, 3)
    }

    /// Tiles from a directory the job's origins map the template's prefix to; a later apply that
    /// would add tiles of another build of the town to those kept is refused naming both builds.
    func testADirectoryOriginWorksAndTwoBuildsAreRefused() throws {
        let town = try ValhallaFixture.town()
        let westOnly = try writeJob([Self.west], graph: .string(town.tileDirectory.path), name: "west.json")
        let westTiles = ["0/003/196.gph", "1/050/585.gph", "2/000/807/140.gph", "2/000/808/580.gph"]
        let files = try westTiles.map { try Data(contentsOf: town.tileDirectory.appendingPathComponent($0)).count }
        XCTAssertEqual(try plannedPack(westOnly)["bytesToDownload"]?.intValue, files.reduce(0, +), "a directory's file sizes")
        try ws.provision("apply", "--quiet", westOnly, environment: epoch).expect(0)
        XCTAssertEqual(try members(), ["index.bin"] + westTiles)
        let before = try Data(contentsOf: tar)

        let other = try ValhallaFixture.town(changeset: 5151)
        let both = try writeJob([Self.west, Self.east], graph: .string(other.tileDirectory.path))
        let refused = try ws.provision("apply", both, environment: epoch)
        refused.expect(65, "mixed builds")
        XCTAssertTrue(refused.stderr.contains("graph tiles of two builds"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("dataset 4242, Valhalla 3.9.1") && refused.stderr.contains("dataset 5151, Valhalla 3.9.1"),
                      refused.stderr)
        XCTAssertEqual(try Data(contentsOf: tar), before, "the extract is left as it was")
    }

    /// Tiles read from `valhalla_build_extract`'s tar of the whole town: its index says which cells
    /// have no tile (known at plan time, nothing asked for), the pack holds the build's own bytes and
    /// routes as the build does; an extract cut short is missing input (66), named.
    func testTilesAreReadFromALocalTileExtract() throws {
        let town = try ValhallaFixture.town()
        let theirs = ws.root.appendingPathComponent("town.tar")
        try ValhallaFixture.buildExtract(town: town, output: theirs)
        let job = try writeJob([Self.west, Self.east], graph: .string(ws.server.baseURL + "/graph/"),
                               pack: ["id": "drive", "extract": "town.tar"])
        let planned = try plannedPack(job)
        XCTAssertEqual(levelCounts(planned), [[0, 1, 0, 0], [1, 1, 0, 1], [2, 3, 0, 2]], "absent cells known from the index")
        let sizes = try RoutingTown.indexSizes(Data(contentsOf: theirs))
        XCTAssertEqual(planned["bytesToDownload"]?.intValue, RoutingTown.tiles.reduce(0) { $0 + (sizes[$1] ?? -1_000_000) },
                       "each tile as the extract's index sizes it")
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let record = try record()
        XCTAssertEqual(record["source"]?.stringValue, "extract:" + theirs.standardizedFileURL.path)
        for line in (record["tiles"]?.arrayValue ?? []).compactMap(\.stringValue) {
            let parts = line.split(separator: " ").map(String.init)
            let built = try Data(contentsOf: town.tileDirectory.appendingPathComponent(parts[0]))
            XCTAssertEqual(parts[2], SHA256.hex(built), "\(parts[0]) holds the build's bytes")
        }
        XCTAssertEqual(record["tiles"]?.arrayValue?.count, 5)
        let onBuild = try ValhallaFixture.route([Self.trips[0]], tileDirectory: town.tileDirectory)
        let onPack = try ValhallaFixture.route([Self.trips[0]], tileExtract: tar)
        let summary = { (answer: [String: Any]) in (answer["trip"] as? [String: Any])?["summary"] as? [String: Any] }
        XCTAssertEqual(summary(onPack[0])?["length"] as? Double, try XCTUnwrap(summary(onBuild[0])?["length"] as? Double))
        XCTAssertEqual(ws.requests(under: "/graph/").count, 0, "nothing fetched")

        let bytes = try Data(contentsOf: theirs)
        try bytes.prefix(bytes.count / 2).write(to: theirs)
        let damaged = try ws.provision("plan", job, environment: epoch)
        damaged.expect(66, "a damaged source extract")
        XCTAssertTrue(damaged.stderr.contains("routing pack 'drive'") && damaged.stderr.contains(theirs.lastPathComponent), damaged.stderr)
    }

    /// A region with no roads anywhere in its cells is a plan note, never a silent empty pack: known
    /// at once from a source extract's index, after the first apply (every cell 404) from a tile tree.
    func testARegionWithoutAnyGraphTileIsAPlanNote() throws {
        let town = try ValhallaFixture.town()
        let sea = Demo.City(id: "sea", name: "Sea", bbox: [2.05, 50.05, 2.20, 50.20])
        let note = "note: region 'sea': routing pack 'drive' holds nothing for it"
        try ValhallaFixture.buildExtract(town: town, output: ws.root.appendingPathComponent("town.tar"))
        let fromExtract = try writeJob([Self.west, sea], graph: .string(town.tileDirectory.path), name: "extract.json",
                                       pack: ["id": "drive", "extract": "town.tar"])
        let planned = try ws.provision("plan", fromExtract, environment: epoch)
        planned.expect(0)
        XCTAssertTrue(planned.stdout.contains(note), planned.stdout)

        let fromTree = try writeJob([Self.west, sea], graph: .string(town.tileDirectory.path))
        XCTAssertFalse(try ws.provision("plan", fromTree, environment: epoch).stdout.contains(note), "not known before a fetch")
        try ws.provision("apply", "--quiet", fromTree, environment: epoch).expect(0)
        let after = try ws.provision("plan", fromTree, environment: epoch)
        XCTAssertTrue(after.stdout.contains(note + ": the source has none of the 3 graph tiles its geometry meets"), after.stdout)
    }

    /// A plan saved with `plan --out` applies its routing packs (planned again from the job).
    func testASavedPlanWritesThePack() throws {
        let town = try ValhallaFixture.town()
        let job = try writeJob([Self.east], graph: .string(town.tileDirectory.path))
        // Tiles an unfinished apply staged for a pack the job no longer has go with this apply.
        let stale = ws.store.appendingPathComponent("routing/.bike.partial")
        try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: stale.appendingPathComponent("2-807142.gph"))
        let saved = ws.root.appendingPathComponent("saved.plan.json").path
        try ws.provision("plan", "--out", saved, job, environment: epoch).expect(0)
        try ws.provision("apply", "--quiet", saved, environment: epoch).expect(0)
        XCTAssertEqual(try members(), ["index.bin", "0/003/196.gph", "1/050/585.gph", "2/000/807/142.gph"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale.path))
    }

    /// `"gzip": true`: the source's `.gph.gz` tiles are asked for and stored inflated, the same
    /// extract as from the plain tiles.
    func testGzippedTilesAreStoredInflated() throws {
        let town = try ValhallaFixture.town()
        let plain = try writeJob([Self.east], graph: .string(town.tileDirectory.path), name: "plain.json")
        try ws.provision("apply", "--quiet", plain, environment: epoch).expect(0)
        let expected = try Data(contentsOf: tar)

        let gzipped = ws.root.appendingPathComponent("gzipped")
        for path in ["0/003/196.gph", "1/050/585.gph", "2/000/807/142.gph"] {
            let target = gzipped.appendingPathComponent(path + ".gz")
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Gzip.compress(try Data(contentsOf: town.tileDirectory.appendingPathComponent(path))).write(to: target)
        }
        try FileManager.default.removeItem(at: ws.store)
        let job = try writeJob([Self.east], graph: .string(gzipped.path), name: "gzip.json",
                               pack: ["id": "drive", "tiles": .string(Self.graphBase + "{tilePath}"), "gzip": true])
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: tar), expected)
        XCTAssertEqual(try record()["gzip"], .bool(true))
    }
}
