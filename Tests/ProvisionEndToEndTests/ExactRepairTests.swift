import Foundation
import ProvisionModel
import XCTest

/// Repair is exact (a row whose damage shows in itself costs one download; damage only a digest
/// shows costs at most its chunk's 64 rows), rows no apply of the store recorded are checked
/// before reuse and never date the build, and a side-loaded device file never brings in a body
/// that is not valid for its kind.
final class ExactRepairTests: AppliedDemoTestCase {
    /// The id of a tile row in the middle of the store (a chunk's neighbours on both sides).
    private func middleTile() throws -> String {
        let ids = try ws.sqlite.rows("SELECT id FROM tiles WHERE length(data) > 0 ORDER BY url_template, pixel_ratio, z, x, y").map { $0[0] }
        return ids[ids.count / 2]
    }

    /// Runs `apply` with `arguments` and returns its report's `downloads.requested`.
    private func downloads(_ arguments: [String], environment: [String: String]? = nil) throws -> Int {
        let result = try ProvisionProcess.provision(["apply", "--json", "--quiet"] + arguments + [job], in: ws.root,
                                                    environment: environment ?? epoch)
        result.expect(0, result.stderr)
        return try XCTUnwrap(parseJSON(result.stdout)["downloads"]?["requested"]?.intValue)
    }

    private func damage(_ sql: String) throws {
        _ = try WritableSQLite(database: ws.database).rows(sql)
    }

    // MARK: Repair costs

    func testOneGarbageTileCostsOneDownload() throws {
        try damage("UPDATE tiles SET data = CAST('garbage bytes' AS BLOB), compressed = 0 WHERE id = \(try middleTile())")
        XCTAssertEqual(try downloads(["--repair"]), 1)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)
    }

    func testOneDeletedTileRowCostsOneDownload() throws {
        try damage("DELETE FROM region_tiles WHERE tile_id = \(try middleTile()); DELETE FROM tiles WHERE id = \(try middleTile())")
        XCTAssertEqual(try downloads(["--repair"]), 1)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testOneGarbageSpriteCostsOneDownload() throws {
        try damage("UPDATE resources SET data = CAST('GIF89a' AS BLOB), compressed = 0 WHERE kind = 5 AND url LIKE '%@2x.png'")
        XCTAssertEqual(try downloads(["--repair"]), 1)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testValidBytesOfAnotherTileCostAtMostTheirChunk() throws {
        let victim = try middleTile()
        try damage("""
            UPDATE tiles SET data = (SELECT data FROM tiles WHERE id != \(victim) AND length(data) > 0 AND data != (SELECT data FROM tiles WHERE id = \(victim)) LIMIT 1),
                             compressed = (SELECT compressed FROM tiles WHERE id != \(victim) AND length(data) > 0 AND data != (SELECT data FROM tiles WHERE id = \(victim)) LIMIT 1)
            WHERE id = \(victim)
            """)
        let audit = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        audit.expect(1)
        XCTAssertEqual(try parseJSON(audit.stdout)["verification"]?["differingChunks"]?.intValue, 1, audit.stdout)
        let count = try downloads(["--repair"])
        XCTAssertGreaterThanOrEqual(count, 1)
        XCTAssertLessThanOrEqual(count, 64, "one chunk at most")
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testTwoDamagedRowsInOneChunkWidenToThatChunkOnly() throws {
        let ids = try ws.sqlite.rows("SELECT id FROM tiles WHERE length(data) > 0 ORDER BY url_template, pixel_ratio, z, x, y").map { $0[0] }
        let first = ids[ids.count / 2]
        // The next row in key order: in the same chunk unless a chunk starts there.
        let second = ids[ids.count / 2 + 1]
        try damage("""
            UPDATE tiles SET data = CAST('garbage' AS BLOB), compressed = 0 WHERE id = \(first);
            DELETE FROM region_tiles WHERE tile_id = \(second); DELETE FROM tiles WHERE id = \(second);
            """)
        let count = try downloads(["--repair"])
        XCTAssertGreaterThanOrEqual(count, 2)
        XCTAssertLessThanOrEqual(count, 65)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    // MARK: Rows no apply recorded

    /// The store's rows dated 2020-09-13, as a database another writer made, with one garbage tile.
    private func makeForeign() throws {
        try damage("""
            UPDATE tiles SET modified = 1600000000, accessed = 1600000000;
            UPDATE resources SET modified = 1600000000, accessed = 1600000000;
            UPDATE tiles SET data = CAST('13 bytes junk' AS BLOB), compressed = 0 WHERE id = \(try middleTile());
            """)
    }

    private func expectVerifiedAndDatedByTheClock(_ clock: Int64, file: StaticString = #filePath, line: UInt = #line) throws {
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0, "no garbage kept", file: file, line: line)
        XCTAssertEqual(try readJSON(ws.lock)["epoch"]?.intValue, Int(clock), file: file, line: line)
        XCTAssertEqual(try ws.sqlite.int("SELECT min(modified) FROM tiles"), Int(clock), "no row dated before the build", file: file, line: line)
        XCTAssertEqual(try ws.sqlite.int("SELECT min(modified) FROM resources"), Int(clock), file: file, line: line)
        try ws.provision("plan", "--detailed-exitcode", job, environment: ["PROVISION_NOW": "\(clock)"])
            .expect(0, "converged", file: file, line: line)
    }

    func testAForeignDatabaseIsCheckedBeforeReuseAndTakesTheClock() throws {
        try makeForeign()
        try FileManager.default.removeItem(at: ws.lock)
        let plan = try ws.provision("plan", "--json", "--detailed-exitcode", job, environment: ["PROVISION_NOW": "1750000000"])
        plan.expect(2, "a garbage row is a change")
        let planned = try parseJSON(plan.stdout)
        XCTAssertEqual(planned["repairRows"]?.intValue, 1, plan.stdout)
        XCTAssertTrue(planned["notes"]?.arrayValue?.contains { $0["subject"] == "unverified rows" } == true, plan.stdout)
        XCTAssertTrue(plan.stdout.contains("2025-06-15T15:06:40Z"), "the clock, not the rows' 2020 times: \(plan.stdout)")
        let apply = try ws.provision("apply", job, environment: ["PROVISION_NOW": "1750000000"])
        apply.expect(0)
        XCTAssertTrue(apply.combined.contains("13 bytes") || apply.combined.contains("not valid for its kind"), apply.combined)
        try expectVerifiedAndDatedByTheClock(1_750_000_000)
    }

    /// A store whose lock was deleted holds only valid rows, yet the apply rewrites it and writes the
    /// lock: the plan says so (a change, exit 2), never "No changes".
    func testAStoreWithoutALockPlansAsAChangeEvenWhenEveryRowIsValid() throws {
        try FileManager.default.removeItem(at: ws.lock)
        let plan = try ws.provision("plan", "--json", "--detailed-exitcode", job, environment: epoch)
        plan.expect(2, "the apply rewrites the store and writes its lock")
        let planned = try parseJSON(plan.stdout)
        XCTAssertEqual(planned["repairRows"]?.intValue, 0, plan.stdout)
        XCTAssertTrue(planned["unverifiedStore"]?.stringValue?.contains("no provision.lock.json") == true, plan.stdout)
        let text = try ws.provision("plan", job, environment: epoch)
        XCTAssertFalse(text.stdout.contains("No changes"), text.stdout)
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
        try ws.provision("plan", "--detailed-exitcode", "--quiet", job, environment: epoch).expect(0, "the lock vouches again")
    }

    func testADeletedLockMakesTheRowsCheckedAndCostsOneDownload() throws {
        try damage("UPDATE tiles SET data = CAST('13 bytes junk' AS BLOB), compressed = 0 WHERE id = \(try middleTile())")
        try FileManager.default.removeItem(at: ws.lock)
        XCTAssertEqual(try downloads([]), 1)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testALockThatDoesNotMatchTheDatabaseDoesNotVouchForIt() throws {
        // The lock of another store (London only) over this store's database.
        let other = ws.root.appendingPathComponent("other")
        let london = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "london.json").path
        try ws.provision("apply", "--quiet", "--store", other.path, london, environment: ["SOURCE_DATE_EPOCH": "1600000000"]).expect(0)
        try makeForeign()
        try FileManager.default.removeItem(at: ws.lock)
        try FileManager.default.copyItem(at: other.appendingPathComponent("provision.lock.json"), to: ws.lock)
        try ws.provision("apply", "--quiet", job, environment: ["PROVISION_NOW": "1750000000"]).expect(0)
        try expectVerifiedAndDatedByTheClock(1_750_000_000)
    }

    func testSourceDateEpochSetsTheBuildTimeOfAForeignDatabase() throws {
        try makeForeign()
        try FileManager.default.removeItem(at: ws.lock)
        try ws.provision("apply", "--quiet", job, environment: ["SOURCE_DATE_EPOCH": "1700000000", "PROVISION_NOW": "1750000000"])
            .expect(0)
        XCTAssertEqual(try readJSON(ws.lock)["epoch"]?.intValue, 1_700_000_000)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes, "the same bytes as a fresh build at that time")
    }

    // MARK: Side-load merge

    func testAMergedDeviceFileNeverReplacesAValidRowWithAnInvalidNewerOne() throws {
        let device = ws.root.appendingPathComponent("device.db")
        try FileManager.default.copyItem(at: ws.database, to: device)
        let victim = try middleTile()
        let key = try ws.sqlite.rows("SELECT z, x, y FROM tiles WHERE id = \(victim)")[0]
        _ = try WritableSQLite(database: device).rows("""
            UPDATE tiles SET data = CAST('13 bytes junk' AS BLOB), compressed = 0, modified = modified + 3600 WHERE id = \(victim);
            UPDATE resources SET data = CAST('GIF89a' AS BLOB), compressed = 0, modified = modified + 3600
              WHERE kind = 5 AND url LIKE '%@2x.png';
            """)
        let merge = try ws.provision("merge", device.path, "--store", ws.store.path, "--json")
        merge.expect(0, merge.stderr)
        let report = try parseJSON(merge.stdout)
        let skipped = report["databases"]?.arrayValue?.first?["skipped"]?.arrayValue ?? []
        XCTAssertEqual(skipped.count, 2, merge.stdout)
        XCTAssertTrue(skipped.contains { $0["kind"] == "tile" && ($0["url"]?.stringValue ?? "").contains("\(key[0])/\(key[1])/\(key[2])") },
                      "\(skipped)")
        XCTAssertTrue(skipped.contains { $0["kind"] == "resource" && ($0["url"]?.stringValue ?? "").hasSuffix("@2x.png") }, "\(skipped)")
        XCTAssertTrue(skipped.allSatisfy { !($0["reason"]?.stringValue ?? "").isEmpty })
        let schema = try SchemaSubset(named: "merge-report.schema.json")
        XCTAssertEqual(schema.problems(report), [])
        XCTAssertEqual(try Data(contentsOf: ws.database).count > 0, true)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0, "nothing invalid was merged")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE length(data) = 13"), 0)

        let text = try ws.provision("merge", device.path, "--store", ws.store.path)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("skipped 2 rows"), text.stdout)
        XCTAssertTrue(text.stdout.contains("@2x.png: "), text.stdout)
    }
}

extension ExactRepairTests {
    func testALockWhoseCountsMatchButNotTheRowsStampsDoesNotVouchForThem() throws {
        // Same counts and byte total as the lock records: same-sized zero bytes, rows dated 2020.
        try damage("""
            UPDATE tiles SET modified = 1600000000, accessed = 1600000000;
            UPDATE resources SET modified = 1600000000, accessed = 1600000000;
            UPDATE tiles SET data = zeroblob(length(data)) WHERE id = \(try middleTile());
            """)
        let plan = try ws.provision("plan", "--json", job, environment: ["PROVISION_NOW": "1750000000"])
        plan.expect(0)
        XCTAssertEqual(try parseJSON(plan.stdout)["repairRows"]?.intValue, 1, plan.stdout)
        try ws.provision("apply", "--quiet", job, environment: ["PROVISION_NOW": "1750000000"]).expect(0)
        try expectVerifiedAndDatedByTheClock(1_750_000_000)
    }
}

extension ExactRepairTests {
    func testAForeignDatabaseThatNeedsNothingIsStillRewrittenAtTheBuildTime() throws {
        try damage("""
            UPDATE tiles SET modified = 1600000000, accessed = 1600000000;
            UPDATE resources SET modified = 1600000000, accessed = 1600000000;
            """)
        try FileManager.default.removeItem(at: ws.lock)
        try ws.provision("apply", "--quiet", job, environment: ["PROVISION_NOW": "1750000000"]).expect(0)
        try expectVerifiedAndDatedByTheClock(1_750_000_000)
    }

    func testRepairingAForeignDatabaseAlsoRewritesItAtTheBuildTime() throws {
        try damage("""
            UPDATE tiles SET modified = 1600000000, accessed = 1600000000;
            UPDATE resources SET modified = 1600000000, accessed = 1600000000;
            """)
        try FileManager.default.removeItem(at: ws.lock)
        try ws.provision("apply", "--repair", "--quiet", job, environment: ["PROVISION_NOW": "1750000000"]).expect(0)
        try expectVerifiedAndDatedByTheClock(1_750_000_000)
    }
}
