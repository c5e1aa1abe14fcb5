import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Damage to a store is found by `audit --verify` and undone by `apply --repair`; `--refresh`
/// never blesses it.
final class RepairTests: AppliedDemoTestCase {
    private func tiles(_ limit: Int) throws -> [[String]] {
        try ws.sqlite.rows("SELECT id, z, x, y FROM tiles WHERE data IS NOT NULL ORDER BY z DESC, x, y LIMIT \(limit)")
    }

    /// Garbage in a tile, a sprite image replaced, another tile's (valid) bytes in a third, a
    /// truncated fourth, and a fifth row missing.
    private func damageTheStore() throws {
        let victims = try tiles(5)
        XCTAssertEqual(victims.count, 5)
        try WritableSQLite(database: ws.database).exec("""
            UPDATE tiles SET data = CAST('not a tile at all' AS BLOB), compressed = 0 WHERE id = \(victims[0][0]);
            UPDATE resources SET data = CAST('GIF89a…' AS BLOB), compressed = 0 WHERE kind = 5 AND url LIKE '%@2x.png';
            UPDATE tiles SET data = (SELECT data FROM tiles WHERE id = \(victims[4][0])),
                             compressed = (SELECT compressed FROM tiles WHERE id = \(victims[4][0])) WHERE id = \(victims[1][0]);
            UPDATE tiles SET data = substr(data, 1, length(data) / 2) WHERE id = \(victims[2][0]);
            DELETE FROM tiles WHERE id = \(victims[3][0]);
            """)
    }

    func testDamageIsFoundCountedAndRepairedToTheBytesOfAFreshBuild() throws {
        try damageTheStore()
        let audit = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        audit.expect(1)
        let verification = try parseJSON(audit.stdout)["verification"]
        XCTAssertGreaterThanOrEqual(verification?["corrupt"]?.intValue ?? 0, 3, "garbage, the sprite and the truncated tile: \(audit.stdout)")
        XCTAssertGreaterThanOrEqual(verification?["differingChunks"]?.intValue ?? 0, 1, "the tile holding another tile's bytes")

        let plan = try ws.provision("plan", "--repair", "--detailed-exitcode", "--json", job, environment: epoch)
        plan.expect(2)
        let repairRows = try parseJSON(plan.stdout)["repairRows"]?.intValue ?? 0
        XCTAssertGreaterThanOrEqual(repairRows, 4)

        let apply = try ws.provision("apply", "--repair", "--progress", "json", job, environment: epoch)
        apply.expect(0)
        let schema = try SchemaSubset(named: "events.schema.json")
        let events = apply.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
        for event in events { XCTAssertEqual(schema.problems(event), [], event.serialized()) }
        let repair = try XCTUnwrap(events.first { $0["event"] == "repair" }, "a repair event: \(apply.stderr.prefix(2000))")
        XCTAssertEqual(repair["rows"]?.intValue, repairRows, "apply removes what plan --repair counted")
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0, "audit passes after the repair")
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes, "the repaired store equals a fresh build")
        try ws.provision("plan", "--repair", "--detailed-exitcode", job, environment: epoch).expect(0)
    }

    func testRefreshFetchesDamagedRowsInsteadOfBlessingThem() throws {
        try damageTheStore()
        try ws.provision("apply", "--refresh", "--quiet", job, environment: epoch).expect(0)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0, "--refresh left no damage behind")
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testAnUnreadableLockIsRewrittenAndDamageStillFoundByKind() throws {
        let victim = try tiles(1)[0]
        try WritableSQLite(database: ws.database).exec("UPDATE tiles SET data = CAST('junk' AS BLOB), compressed = 0 WHERE id = \(victim[0]);")
        try Data("{ not json".utf8).write(to: ws.lock)
        try ws.provision("audit", "--store", ws.store.path).expect(1)
        try WritableSQLite(database: ws.database).exec("UPDATE tiles SET data = (SELECT data FROM tiles WHERE id = \(victim[0]) + 1) WHERE id = \(victim[0]);")
        try ws.provision("plan", "--repair", "--detailed-exitcode", job, environment: epoch).expect(2, "the lock alone must be rewritten")
        try WritableSQLite(database: ws.database).exec("UPDATE tiles SET data = CAST('junk' AS BLOB), compressed = 0 WHERE id = \(victim[0]);")
        try ws.provision("apply", "--repair", "--quiet", job, environment: epoch).expect(0)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes)
    }

    func testADatabaseSQLiteReportsCorruptIsNamedAndRebuilt() throws {
        // Garbage over two pages in the middle of the file: SQLite's own structure is damaged.
        let handle = try FileHandle(forWritingTo: ws.database)
        try handle.seek(toOffset: UInt64(freshBytes.count / 2 / 4096 * 4096))
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 8192))
        try handle.close()
        let audit = try ws.provision("audit", "--store", ws.store.path)
        XCTAssertNotEqual(audit.status, 0)
        XCTAssertFalse(audit.combined.contains("OK: the store is whole"), audit.combined)
        let apply = try ws.provision("apply", "--repair", job, environment: epoch)
        apply.expect(0)
        XCTAssertTrue(apply.stderr.contains("offline.db was damaged"), apply.stderr)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)
        XCTAssertEqual(try Data(contentsOf: ws.database), freshBytes, "rebuilt to the bytes of a fresh build")
    }
}
