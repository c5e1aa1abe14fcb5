import Foundation
import ProvisionFoundation
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
        XCTAssertEqual(document["schemaVersion"], .int(6))
        XCTAssertEqual(document["sources"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["streets"],
                       "sources are named from the stored style without a lock")
        let regions = document["regions"]?.arrayValue ?? []
        XCTAssertEqual(regions.count, 2, result.stdout)
        XCTAssertTrue(result.stdout.contains("London") && result.stdout.contains("Paris"),
                      "the regions' metadata names them: \(result.stdout.prefix(3000))")
        XCTAssertEqual(document["totals"]?["tiles"]?.intValue, Demo.london.tiles.count + Demo.paris.tiles.count)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.lock.path), "audit writes no lock")
    }

    /// Issue 20 #7: without a lock the expected counts and digests cannot be checked, so audit
    /// says what it checked and what it could not, and never calls the store whole.
    func testAStoreWithoutALockIsNeverCalledWhole() throws {
        try FileManager.default.removeItem(at: ws.lock)
        let text = try ws.provision("audit", "--store", ws.store.path)
        text.expect(0, "nothing found wrong in what could be checked")
        XCTAssertFalse(text.stdout.contains("whole"), text.stdout)
        XCTAssertTrue(text.stdout.contains("Not checked: each region's expected counts"), text.stdout)
        XCTAssertTrue(text.stdout.contains("no provision.lock.json"), text.stdout)
        let json = try parseJSON(try ws.provision("audit", "--json", "--store", ws.store.path).stdout)
        XCTAssertEqual(json["whole"], .bool(false))
        XCTAssertEqual(json["ok"], .bool(true))
        let unchecked = json["notChecked"]?.arrayValue?.compactMap { $0["check"]?.stringValue } ?? []
        XCTAssertTrue(unchecked.contains("expectedCounts") && unchecked.contains("contents"), "\(unchecked)")
        XCTAssertEqual(json["checked"]?.arrayValue?.compactMap(\.stringValue).contains("integrity"), true)

        let verified = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        verified.expect(0)
        let verifiedJSON = try parseJSON(verified.stdout)
        XCTAssertEqual(verifiedJSON["whole"], .bool(false), "no lock: still not whole after --verify")
        XCTAssertEqual(verifiedJSON["checked"]?.arrayValue?.compactMap(\.stringValue).contains("contents"), true)
        let stillUnchecked = verifiedJSON["notChecked"]?.arrayValue?.compactMap { $0["check"]?.stringValue } ?? []
        XCTAssertEqual(Set(stillUnchecked), ["expectedCounts", "digests"], verified.stdout)

        // With the lock back, audit says whole and names what only --verify reads.
        try ws.provision("apply", "--quiet", job).expect(0)
        let locked = try ws.provision("audit", "--store", ws.store.path)
        locked.expect(0)
        XCTAssertTrue(locked.stdout.contains("OK: the store is whole"), locked.stdout)
        XCTAssertTrue(locked.stdout.contains("Not checked: the bytes of each row and the rows against the lock's digests (audit --verify reads them)."), locked.stdout)
        let full = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        full.expect(0)
        XCTAssertEqual(try parseJSON(full.stdout)["notChecked"], .array([]), full.stdout)
        XCTAssertEqual(try parseJSON(full.stdout)["whole"], .bool(true))
    }

    /// Issue 20 #7: a region whose rows `--verify` finds corrupt is marked ✗ with its count, with
    /// a lock (named by key) and without one (named by row).
    func testVerifyMarksTheRegionWhoseTilesAreCorrupt() throws {
        let paris = try ws.sqlite.int("SELECT id FROM regions WHERE CAST(description AS TEXT) LIKE '%Paris%'")
        let london = try ws.sqlite.int("SELECT id FROM regions WHERE CAST(description AS TEXT) LIKE '%London%'")
        // Every tile only Paris links becomes garbage.
        try WritableSQLite(database: ws.database).exec("""
            UPDATE tiles SET data = CAST('garbage' AS BLOB), compressed = 0 WHERE id IN (
              SELECT tile_id FROM region_tiles WHERE region_id = \(paris)
              EXCEPT SELECT tile_id FROM region_tiles WHERE region_id != \(paris));
            """)
        let corrupt = try ws.sqlite.int("SELECT count(*) FROM tiles WHERE data = CAST('garbage' AS BLOB)")
        XCTAssertGreaterThan(corrupt, 0)
        for withLock in [true, false] {
            if !withLock { try FileManager.default.removeItem(at: ws.lock) }
            let audit = try ws.provision("audit", "--verify", "--store", ws.store.path)
            audit.expect(1)
            let name = withLock ? "paris/streets" : "row \(paris)"
            XCTAssertTrue(audit.stdout.contains("✗ region \(name) "), audit.stdout)
            XCTAssertTrue(audit.stdout.contains("verify: \(plural(corrupt, "corrupt row"))"), audit.stdout)
            // London: nothing found wrong; whole with the lock, unknown ("?") without one.
            XCTAssertTrue(audit.stdout.contains(withLock ? "✓ region london/streets " : "? region row \(london) "), audit.stdout)
            let json = try parseJSON(try ws.provision("audit", "--verify", "--json", "--store", ws.store.path).stdout)
            let region = json["regions"]?.arrayValue?.first { $0["rowId"]?.intValue == paris }
            XCTAssertEqual(region?["verification"]?["corrupt"]?.intValue, corrupt)
            XCTAssertEqual(region?["whole"], .bool(false))
            let other = json["regions"]?.arrayValue?.first { $0["rowId"]?.intValue == london }
            XCTAssertEqual(other?["verification"]?["corrupt"]?.intValue, 0)
            XCTAssertEqual(other?["whole"], .bool(withLock), "rows that only share a chunk with corrupt ones are suspects, not "
                           + "findings; a row no lock knows is never whole")
        }
    }

    /// Issue 20 #7: a region whose area lies wholly outside its source's TileJSON `bounds` gets
    /// no tiles: the plan says so in a note naming the region and the bounds, apply does not
    /// tick it, and audit counts it a problem (exit 1).
    func testARegionOutsideTheSourceBoundsIsNamedNotWhole() throws {
        let tokyo = Demo.City(id: "tokyo", name: "Tokyo", bbox: [139.70, 35.65, 139.75, 35.70])
        let path = try ws.write(ws.job([Demo.london, tokyo], tiles: .mbtiles), to: "tokyo.json").path
        let plan = try ws.provision("plan", path, "--store", ws.root.appendingPathComponent("tokyo-store").path)
        plan.expect(0)
        XCTAssertTrue(plan.stdout.contains("region 'tokyo' with style pack 'streets': gets no tiles: the region lies outside "
                                           + "the bounds of source 'streets' ([-74.28127, 40.48398, 2.3822, 51.5174])"), plan.stdout)
        let json = try parseJSON(try ws.provision("plan", path, "--json", "--store", ws.root.appendingPathComponent("tokyo-store").path).stdout)
        let notes = json["notes"]?.arrayValue ?? []
        XCTAssertTrue(notes.contains {
            $0["subject"] == "region 'tokyo' with style pack 'streets'" && $0["message"]?.stringValue?.hasPrefix("gets no tiles") == true
        }, "\(notes)")
        XCTAssertFalse(notes.contains { $0["subject"]?.stringValue?.contains("london") == true && $0["message"]?.stringValue?.hasPrefix("gets no tiles") == true })

        let store = ws.root.appendingPathComponent("tokyo-store").path
        let apply = try ws.provision("apply", path, "--store", store)
        apply.expect(0)
        XCTAssertFalse(apply.stdout.contains("✓ tokyo/streets"), apply.stdout)
        XCTAssertTrue(apply.stdout.contains("! tokyo/streets: 0 tiles"), apply.stdout)
        let audit = try ws.provision("audit", "--store", store)
        audit.expect(1, "a region that gets no tiles is a problem")
        XCTAssertTrue(audit.stdout.contains("region tokyo/streets gets no tiles"), audit.stdout)
        XCTAssertFalse(audit.stdout.contains("whole"), audit.stdout)
    }
}
