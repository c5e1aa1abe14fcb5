import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// `provision merge DEVICE.db --store OUT`: an offline database (here a "device" built by
/// another apply, with one row made newer) merged into an applied store gives the rows
/// `SideLoadMerge`'s oracle of MapLibre's merge gives, reports per-region counts that add up to
/// the oracle's, keeps the store auditable, and every refusal has its exit code.
final class SideLoadMergeCommandTests: WorkspaceTestCase {
    private static let time = ["SOURCE_DATE_EPOCH": "1700000000"]

    private func url(_ name: String) -> URL { ws.root.appendingPathComponent(name) }

    /// Applies Paris into `store`, and London and Paris into `device` with one Paris tile made
    /// newer (other bytes) and one resource made older; returns the changed tile's `WHERE`.
    private func storeAndDevice() throws -> String {
        let job = try ws.write(ws.job([Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job, environment: Self.time).expect(0)
        let deviceJob = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles), to: "device-job.json").path
        try ws.provision("apply", "--quiet", "--store", url("device").path, deviceJob, environment: Self.time).expect(0)
        let device = SQLiteShell(database: url("device/offline.db"))
        let tile = Demo.paris.tiles.filter { $0.z == 14 }.sorted()[0]
        let other = Demo.london.tiles.filter { $0.z == 14 }.sorted()[0]
        let changed = "z = \(tile.z) AND x = \(tile.x) AND y = \(tile.y)"
        XCTAssertEqual(try device.int("SELECT count(*) FROM tiles WHERE \(changed)"), 1)
        _ = try device.rows("""
            UPDATE tiles SET modified = modified + 3600,
              data = (SELECT data FROM tiles WHERE z = \(other.z) AND x = \(other.x) ORDER BY id LIMIT 1)
            WHERE \(changed);
            UPDATE resources SET modified = modified - 3600, data = x'00' WHERE kind = 1;
            """, writing: true)
        return changed
    }

    /// The rows of a database by key (row ids of tiles and resources depend on insertion order).
    private func rows(_ database: URL) throws -> [[String]] {
        let shell = SQLiteShell(database: database)
        return try shell.rows("SELECT id, definition, hex(description) FROM regions ORDER BY id")
            + shell.rows("""
                SELECT url_template, pixel_ratio, z, x, y, expires, modified, etag, hex(data), compressed, accessed, must_revalidate
                FROM tiles ORDER BY url_template, pixel_ratio, z, x, y
                """)
            + shell.rows("""
                SELECT url, kind, expires, modified, etag, hex(data), compressed, accessed, must_revalidate FROM resources ORDER BY url
                """)
            + shell.rows("""
                SELECT l.region_id, t.url_template, t.pixel_ratio, t.z, t.x, t.y FROM region_tiles l JOIN tiles t ON t.id = l.tile_id
                ORDER BY 1, 2, 3, 4, 5, 6
                """)
            + shell.rows("""
                SELECT l.region_id, r.url FROM region_resources l JOIN resources r ON r.id = l.resource_id ORDER BY 1, 2
                """)
    }

    private func counts(_ value: JSONValue?) -> [Int] {
        ["added", "replaced", "kept"].map { value?[$0]?.intValue ?? -1 }
    }

    func testADeviceDatabaseMergesAsMapLibreMergesIt() throws {
        let changed = try storeAndDevice()
        let device = url("device/offline.db")
        try FileManager.default.copyItem(at: ws.store, to: url("oracle"))
        let oracle = try SideLoadMerge.merge(device, into: url("oracle/offline.db"))
        let lockBefore = try readJSON(ws.lock)
        let storeTiles = try ws.sqlite.int("SELECT count(*) FROM tiles")

        let merged = try ws.provision("merge", "--json", "--progress", "json", device.path, "--store", ws.store.path)
        merged.expect(0)

        XCTAssertEqual(try rows(ws.database), try rows(url("oracle/offline.db")), "the oracle's rows")
        XCTAssertEqual(oracle.tilesReplaced, 1)
        XCTAssertEqual(oracle.regionsAdded, 1)
        XCTAssertEqual(try ws.sqlite.scalar("SELECT hex(data) FROM tiles WHERE \(changed)"),
                       try SQLiteShell(database: device).scalar("SELECT hex(data) FROM tiles WHERE \(changed)"), "newer replaces")
        XCTAssertNotEqual(try ws.sqlite.scalar("SELECT hex(data) FROM resources WHERE kind = 1"), "00", "older keeps")

        let report = try parseJSON(merged.stdout)
        XCTAssertEqual(try SchemaSubset(named: "merge-report.schema.json").problems(report), [])
        XCTAssertEqual(report["kind"], "merge-report")
        XCTAssertEqual(report["lockUpdated"], true)
        let regions = try XCTUnwrap(report["databases"]?.arrayValue?.first?["regions"]?.arrayValue)
        let byName = Dictionary(uniqueKeysWithValues: regions.map { ($0["name"]?.stringValue ?? "", $0) })
        let london = try XCTUnwrap(byName["London"]), paris = try XCTUnwrap(byName["Paris"])
        XCTAssertEqual(london["action"], "added")
        XCTAssertEqual(london["rowID"], 2)
        XCTAssertEqual(paris["action"], "merged")
        XCTAssertEqual(paris["rowID"], 1)
        let londonTiles = Demo.london.tiles.count, parisTiles = Demo.paris.tiles.count
        XCTAssertEqual(storeTiles, parisTiles)
        let sideTiles = try SQLiteShell(database: device).int("SELECT count(*) FROM tiles")
        XCTAssertEqual(counts(london["tiles"]), [londonTiles, 0, 0])
        XCTAssertEqual(counts(paris["tiles"]), [0, 1, parisTiles - 1])
        XCTAssertEqual(regions.map { counts($0["tiles"])[0] }.reduce(0, +), oracle.tilesAdded)
        XCTAssertEqual(regions.map { counts($0["tiles"])[1] }.reduce(0, +), oracle.tilesReplaced)
        XCTAssertEqual(regions.map { counts($0["resources"])[0] }.reduce(0, +), oracle.resourcesAdded)
        XCTAssertEqual(regions.map { counts($0["resources"])[1] }.reduce(0, +), oracle.resourcesReplaced)
        XCTAssertEqual(regions.map { counts($0["tiles"]).reduce(0, +) }.reduce(0, +), londonTiles + parisTiles)
        XCTAssertEqual(sideTiles, londonTiles + parisTiles)
        XCTAssertEqual(report["totals"]?["tiles"]?.intValue, parisTiles + londonTiles)

        let schema = try SchemaSubset(named: "events.schema.json")
        let events = try merged.stderr.split(separator: "\n").map { try parseJSON(String($0)) }
        for event in events { XCTAssertEqual(schema.problems(event), [], "\(event)") }
        XCTAssertEqual(events.map { $0["event"] }, ["merge-started", "merge-finished"])

        // The lock: content fields rewritten, everything else as it was; audit --verify passes.
        let lock = try readJSON(ws.lock)
        XCTAssertEqual(lock["store"]?["tiles"], report["totals"]?["tiles"])
        XCTAssertEqual(lock["store"]?["contentDigest"], report["totals"]?["contentDigest"])
        XCTAssertNotEqual(lock["store"], lockBefore["store"])
        for key in ["job", "epoch", "stylePacks", "regions", "schemaVersion"] { XCTAssertEqual(lock[key], lockBefore[key], key) }
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)

        // Again, as text: everything is now kept, and the next apply's removal is announced.
        let again = try ws.provision("merge", "--quiet", device.path, "--store", ws.store.path)
        again.expect(0)
        XCTAssertTrue(again.stdout.contains("region London: merged into row 2: 0 tiles added, 0 replaced, \(londonTiles) kept"),
                      again.stdout)
        XCTAssertTrue(again.stdout.contains("Warning: the next 'provision apply' of the job"), again.stdout)
        XCTAssertEqual(try rows(ws.database), try rows(url("oracle/offline.db")))
    }

    func testTextReportAndAStoreWithoutALock() throws {
        _ = try storeAndDevice()
        try FileManager.default.removeItem(at: ws.lock)
        let merged = try ws.provision("merge", "--quiet", url("device/offline.db").path, "--store", ws.store.path)
        merged.expect(0)
        XCTAssertTrue(merged.stdout.contains("region London: added as row 2: \(Demo.london.tiles.count) tiles added, 0 replaced, 0 kept"),
                      merged.stdout)
        XCTAssertTrue(merged.stdout.contains("region Paris: merged into row 1: 0 tiles added, 1 replaced, "), merged.stdout)
        XCTAssertTrue(merged.stdout.contains("(here: London); add them to the job to keep them."), merged.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.lock.path), "no lock before, none after")
    }

    func testRefusalsWriteNothing() throws {
        _ = try storeAndDevice()
        let device = url("device/offline.db").path
        let text = try ws.write(text: "not a database, only text", to: "notes.db").path
        let old = url("old.db")
        _ = try SQLiteShell(database: old).rows("CREATE TABLE tiles (id INTEGER); PRAGMA user_version = 5;", writing: true)
        try FileManager.default.createDirectory(at: url("empty"), withIntermediateDirectories: true)
        let before = try Data(contentsOf: ws.database), lockBefore = try Data(contentsOf: ws.lock)
        let store = ws.store.path
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            ([device, "--store", url("nowhere").path], 66, "no store at \(url("nowhere").path)"),
            ([device, "--store", url("empty").path], 66, "no store at \(url("empty").path)"),
            ([device, url("device").path, "--store", store], 64, "is a database file and \(url("device").path) a store directory"),
            ([text, "--store", store], 65, "\(text) is not a MapLibre offline database"),
            ([old.path, "--store", store], 65, "\(old.path) is not a MapLibre offline database: user_version is 5"),
            ([device, url("missing.db").path, "--store", store], 66, "no offline database at \(url("missing.db").path)"),
            ([ws.database.path, "--store", store], 64, "is the offline.db of --store"),
            (Array(repeating: device, count: 11) + ["--store", store], 64, "merge at most 10 in one call"),
        ]
        for c in cases {
            let result = try ws.provision(["merge", "--progress", "json"] + c.arguments)
            result.expect(c.status, c.message)
            XCTAssertTrue(result.stderr.contains(c.message), result.stderr)
            XCTAssertEqual(try parseJSON(String(result.stderr.split(separator: "\n").last ?? ""))["event"], "error")
            XCTAssertEqual(try Data(contentsOf: ws.database), before, c.message)
            XCTAssertEqual(try Data(contentsOf: ws.lock), lockBefore, c.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("nowhere").path))

        // Another writer holds the store: 73, nothing written.
        let holder = Process(), input = Pipe(), output = Pipe()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [ws.store.appendingPathComponent(".provision.lock-owner").path, "-c", "echo held; read line"]
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        XCTAssertEqual(String(decoding: output.fileHandleForReading.readData(ofLength: 5), as: UTF8.self), "held\n")
        let locked = try ws.provision(["merge", "--quiet", device, "--store", store])
        try input.fileHandleForWriting.write(contentsOf: Data("\n".utf8))
        holder.waitUntilExit()
        locked.expect(73, "another writer holds the store")
        XCTAssertEqual(try Data(contentsOf: ws.database), before)
        XCTAssertEqual(try Data(contentsOf: ws.lock), lockBefore)
    }
}

private extension Workspace {
    func provision(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try ProvisionProcess.provision(arguments, in: root, environment: environment)
    }
}
