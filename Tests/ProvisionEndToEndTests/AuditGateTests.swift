import Foundation
import ProvisionModel
import XCTest

/// Issue 4 #6: `audit --verify`, `audit --manifest JOB`, and audit of an offline.db without a lock.
final class AuditGateTests: XCTestCase {
    private var ws: Workspace!
    private var job = ""

    override func setUpWithError() throws {
        ws = try Workspace()
        job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job).expect(0)
    }

    override func tearDown() {
        ws?.tearDown()
        ws = nil
    }

    func testVerifyPassesOnAGoodStoreAndFailsOnACorruptTile() throws {
        let good = try ws.provision("audit", "--verify", "--store", ws.store.path)
        good.expect(0, "audit --verify on a good store")

        // One tile's data becomes an HTML page, stored uncompressed: the row is well-formed SQL but not a tile.
        let victim = try ws.sqlite.rows("SELECT z, x, y FROM tiles ORDER BY z DESC, x, y LIMIT 1").first ?? []
        XCTAssertEqual(victim.count, 3)
        try WritableSQLite(database: ws.database).exec("""
            UPDATE tiles SET data = CAST('<!DOCTYPE html><html><body>Oops</body></html>' AS BLOB), compressed = 0 \
            WHERE z = \(victim[0]) AND x = \(victim[1]) AND y = \(victim[2]);
            """)
        XCTAssertEqual(try ws.integrityCheck(), "ok", "the corruption is in the content, not in SQLite's structure")

        let bad = try ws.provision("audit", "--verify", "--store", ws.store.path)
        bad.expect(1, "audit --verify on a corrupt tile")
        let badJSON = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        badJSON.expect(1)
        let document = try parseJSON(badJSON.stdout)
        XCTAssertEqual(document["ok"], .bool(false))
        XCTAssertEqual(document["verification"]?["corrupt"]?.intValue, 1,
                       "exactly one corrupt row: \(badJSON.stdout.prefix(3000))")
        let rows = document["verification"]?["corruptRows"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(rows.count, 1)
        XCTAssertTrue(rows.first?.contains("\(victim[0])/\(victim[1])/\(victim[2])") == true,
                      "the corrupt row is named by its tile address: \(rows)")
    }

    func testAGarbledLockIsReportedUnreadableNotMissing() throws {
        try Data("{\"schemaVersion\": 1, \"kind\": \"lo".utf8).write(to: ws.lock)
        let audit = try ws.provision("audit", "--json", "--store", ws.store.path)
        audit.expect(1)
        let document = try parseJSON(audit.stdout)
        XCTAssertNotEqual(document["lockProblem"], .null)
        XCTAssertTrue(document["problems"]?.arrayValue?.contains { $0.stringValue?.hasPrefix("provision.lock.json is unreadable") == true } == true,
                      audit.stdout)
        let text = try ws.provision("audit", "--store", ws.store.path)
        XCTAssertFalse(text.stdout.contains("No provision.lock.json"), text.stdout)
        XCTAssertFalse(text.stdout.contains("OK: the store is whole"), text.stdout)
    }

    func testAStoreAnApplyLeftUnfinishedIsNotWhole() throws {
        try FileManager.default.copyItem(at: ws.database, to: ws.store.appendingPathComponent("offline.db.canonical"))
        let audit = try ws.provision("audit", "--store", ws.store.path)
        audit.expect(1)
        XCTAssertTrue(audit.stdout.contains("an apply was interrupted (or is running); run apply to finish"), audit.stdout)
    }

    func testARegionHoldingNothingIsNotWhole() throws {
        // What a first apply that stopped on a full disk leaves: region rows staged, nothing linked, no lock.
        try FileManager.default.removeItem(at: ws.lock)
        try WritableSQLite(database: ws.database).exec("DELETE FROM region_tiles; DELETE FROM region_resources;")
        let audit = try ws.provision("audit", "--store", ws.store.path)
        audit.expect(1)
        XCTAssertTrue(audit.stdout.contains("holds no tiles or resources"), audit.stdout)
    }

    func testManifestComparesTheStoreWithAJob() throws {
        try ws.provision("audit", "--manifest", job, "--store", ws.store.path).expect(0, "the store matches its job")
        let dropped = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "dropped.json").path
        let differs = try ws.provision("audit", "--manifest", dropped, "--store", ws.store.path)
        differs.expect(1, "the store holds a region the job no longer has")
        XCTAssertTrue(differs.stdout.contains("paris"), "names the region that differs: \(differs.stdout)")
        let json = try ws.provision("audit", "--json", "--manifest", dropped, "--store", ws.store.path)
        json.expect(1)
        let differences = try parseJSON(json.stdout)["manifestDifferences"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(differences.count, 1, "one difference: \(differences)")
        XCTAssertTrue(differences.first?.contains("paris") == true, "\(differences)")
        let same = try ws.provision("audit", "--json", "--manifest", job, "--store", ws.store.path)
        same.expect(0)
        XCTAssertEqual(try parseJSON(same.stdout)["manifestDifferences"], .array([]))
    }

    func testAuditWithoutALockReportsTheRegions() throws {
        try FileManager.default.removeItem(at: ws.lock)
        let text = try ws.provision("audit", "--store", ws.store.path)
        text.expect(0, "audit of an offline.db without a lock")
        let result = try ws.provision("audit", "--json", "--store", ws.store.path)
        result.expect(0)
        let document = try parseJSON(result.stdout)
        XCTAssertEqual(document["schemaVersion"], .int(3))
        XCTAssertEqual(document["sources"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["streets"],
                       "sources are named from the stored style without a lock")
        let regions = document["regions"]?.arrayValue ?? []
        XCTAssertEqual(regions.count, 2, result.stdout)
        XCTAssertTrue(result.stdout.contains("London") && result.stdout.contains("Paris"),
                      "the regions' metadata names them: \(result.stdout.prefix(3000))")
        XCTAssertEqual(document["totals"]?["tiles"]?.intValue, Demo.london.tiles.count + Demo.paris.tiles.count)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.lock.path), "audit writes no lock")
    }
}
