import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: `export --format bundle` carries each routing pack's extract, checked against the
/// lock first, says in README.txt how Valhalla opens it, and credits it; Valhalla routes on the
/// bundle's copy.
final class RoutingPackBundleTests: WorkspaceTestCase {
    private var tar: URL { ws.store.appendingPathComponent("routing/drive.tar") }
    private var bundle: URL { ws.root.appendingPathComponent("bundle") }

    private func export() throws -> ProcessResult {
        try ws.provision("export", "--store", ws.store.path, "--format", "bundle", "--out", bundle.path, "--json",
                         environment: RoutingTown.epoch)
    }

    func testTheBundleCarriesTheExtractAndValhallaRoutesOnIt() throws {
        let town = try ValhallaFixture.town()
        let job = try RoutingTown.job(ws, [RoutingTown.west, RoutingTown.east], graph: .string(town.tileDirectory.path),
                                       mapped: [Demo.london])
        try ws.provision("apply", "--quiet", job, environment: RoutingTown.epoch).expect(0)
        let lockCredit = try readJSON(ws.lock)["attribution"]?.arrayValue?.first { $0["kind"] == "routing-pack" }
        XCTAssertEqual(lockCredit?["source"], "drive")
        XCTAssertEqual(lockCredit?["licence"], "ODbL-1.0")

        let result = try export()
        result.expect(0, "export")
        let report = try parseJSON(result.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(report), [], result.stdout)
        XCTAssertEqual(report["schemaVersion"], 3)
        let carried = try XCTUnwrap(report["bundle"]?["routingPacks"]?.arrayValue?.first)
        XCTAssertEqual(carried["path"], "routing/drive.tar")
        XCTAssertEqual(carried["tiles"], 5)
        let copy = bundle.appendingPathComponent("routing/drive.tar")
        XCTAssertEqual(try Data(contentsOf: copy), try Data(contentsOf: tar))
        let readme = try String(contentsOf: bundle.appendingPathComponent("README.txt"), encoding: .utf8)
        XCTAssertTrue(readme.contains("- routing/drive.tar: routing pack 'drive', 5 graph tiles"), readme)
        XCTAssertTrue(readme.contains("\"tile_extract\": \"BASE/routing/drive.tar\"") && readme.contains("no mjolnir.tile_dir"), readme)
        let credits = try String(contentsOf: bundle.appendingPathComponent("ATTRIBUTION.md"), encoding: .utf8)
        XCTAssertTrue(credits.contains("© the test town's mappers"), credits)

        let trip: [String: Any] = ["locations": [["lon": 5.56, "lat": 50.06], ["lon": 5.70, "lat": 50.20]], "costing": "auto"]
        let onBuild = try ValhallaFixture.route([trip], tileDirectory: town.tileDirectory)
        let onBundle = try ValhallaFixture.route([trip], tileExtract: copy)
        let summary = { (answer: [String: Any]) in (answer["trip"] as? [String: Any])?["summary"] as? [String: Any] }
        let length = try XCTUnwrap(summary(onBuild[0])?["length"] as? Double)
        XCTAssertEqual(summary(onBundle[0])?["length"] as? Double, length, "routes on the bundle's copy as on the build")
    }

    func testADamagedExtractIsRefusedByName() throws {
        let town = try ValhallaFixture.town()
        let job = try RoutingTown.job(ws, [RoutingTown.east], graph: .string(town.tileDirectory.path),
                                       mapped: [Demo.london])
        try ws.provision("apply", "--quiet", job, environment: RoutingTown.epoch).expect(0)
        let fresh = try Data(contentsOf: tar)
        var flipped = fresh
        flipped[try RoutingTown.offset(of: "2/000/807/142.gph", in: fresh) + 400] ^= 0xFF
        try flipped.write(to: tar)
        let refused = try export()
        refused.expect(65, "a damaged routing pack")
        XCTAssertTrue(refused.stderr.contains("routing pack 'drive': routing/drive.tar") && refused.stderr.contains("damaged"),
                      refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: bundle.path), "no bundle written")

        try fresh.prefix(fresh.count - 20_000).write(to: tar)
        let cut = try export()
        cut.expect(65, "a cut-short routing pack")
        XCTAssertTrue(cut.stderr.contains("index.bin"), cut.stderr)
    }
}
