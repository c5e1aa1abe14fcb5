import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 20 #1: the plan is exactly what the next apply does: with `--repair` it counts the
/// downloads of the damaged rows the repair removes, and after a killed apply it counts the
/// tiles the next apply takes back from the unfinished file as stored, reading the store
/// without writing it.
final class ExactPlanTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]

    /// Every file of the store with its bytes' digest.
    private func storeFiles() throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: ws.store.path) {
            files[name] = ws.sha256(ws.store.appendingPathComponent(name))
        }
        return files
    }

    func testPlanRepairCountsTheDownloadsOfTheRepair() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let victim = try ws.sqlite.rows("SELECT id FROM tiles WHERE data IS NOT NULL ORDER BY z DESC, x, y LIMIT 1")[0][0]
        try WritableSQLite(database: ws.database).exec("""
            UPDATE tiles SET data = CAST('not a tile at all' AS BLOB), compressed = 0 WHERE id = \(victim);
            """)
        let before = try storeFiles()

        let planned = try ws.provision("plan", "--repair", "--json", "--detailed-exitcode", job, environment: epoch)
        planned.expect(2, "a repair is a change")
        let plan = try parseJSON(planned.stdout)
        let downloads = try XCTUnwrap(plan["summary"]?["tilesToDownload"]?.intValue)
        XCTAssertGreaterThanOrEqual(downloads, 1, "the damaged tile is downloaded again: \(planned.stdout.prefix(1500))")
        XCTAssertEqual(plan["summary"]?["tiles"]?["add"]?.intValue, downloads, "its links are added again")
        XCTAssertTrue(plan["regions"]?.arrayValue?.contains { ($0["tiles"]?["add"]?.intValue ?? 0) > 0 } ?? false,
                      "the region holding it has changes")
        let text = try ws.provision("plan", "--repair", job, environment: epoch).stdout
        XCTAssertTrue(text.contains("Downloads: \(plural(downloads, "tile"))"), text)
        XCTAssertEqual(try storeFiles(), before, "plan --repair writes nothing")

        // 'apply --refresh' removes damage first too: 'plan --refresh' counts it the same way.
        let refreshPlan = try parseJSON(try ws.provision("plan", "--refresh", "--json", job, environment: epoch).stdout)
        XCTAssertEqual(refreshPlan["summary"]?["tilesToDownload"]?.intValue, downloads)

        let applied = try parseJSON(try ws.provision("apply", "--repair", "--json", "--quiet", job, environment: epoch).stdout)
        XCTAssertEqual(applied["downloads"]?["plannedTiles"]?.intValue, downloads, "the repair downloads what the plan counted")
        try ws.provision("plan", "--repair", "--detailed-exitcode", job, environment: epoch).expect(0)
    }

    func testPlanAfterAKillCountsWhatTheNextApplyDownloads() throws {
        let slow = try ws.serveSlowTiles([Demo.newYork], delay: 0.01)
        let job = try ws.write(ws.job([Demo.newYork], tiles: .http)).path
        let run = try ws.start("apply", "--quiet", job, environment: epoch)
        XCTAssertTrue(run.waitUntil(timeout: 30, watching: ws.server) { ws.tileRequestPaths.count >= 500 }, "tiles are being requested")
        run.send(SIGKILL)
        run.wait(timeout: 10)
        XCTAssertTrue(run.endedBySignal)
        XCTAssertTrue(FileManager.default.fileExists(atPath: ws.database.path + ".canonical"), "the killed apply's new file is there")
        let before = try storeFiles()

        let planned = try ws.provision("plan", "--json", job, environment: epoch)
        planned.expect(0)
        let downloads = try XCTUnwrap(try parseJSON(planned.stdout)["summary"]?["tilesToDownload"]?.intValue)
        XCTAssertEqual(try storeFiles(), before, "the plan reads the killed apply's file without writing the store")
        XCTAssertLessThan(downloads, slow.count, "the tiles the killed apply wrote are not counted as downloads")

        let requested = ws.tileRequestPaths.count
        let applied = try parseJSON(try ws.provision("apply", "--json", "--quiet", job, environment: epoch).stdout)
        XCTAssertEqual(applied["downloads"]?["plannedTiles"]?.intValue, downloads, "the next apply downloads what the plan counted")
        XCTAssertEqual(ws.tileRequestPaths.count - requested, downloads)
        XCTAssertEqual(try ws.storedTilePaths(), slow)
    }
}
