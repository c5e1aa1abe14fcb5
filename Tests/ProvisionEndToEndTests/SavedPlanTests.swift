import Foundation
import ProvisionModel
import XCTest

/// Issue 4 #2: `apply plan.json` refuses a saved plan whose job file or store changed since
/// it was planned (exit 1, saying which), and carries out a fresh one.
final class SavedPlanTests: WorkspaceTestCase {
    func testStalePlanIsRefusedNamingTheJobOrTheStore() throws {
        let jobURL = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "job.json")
        let job = jobURL.path
        let planFile = ws.root.appendingPathComponent("plan.json").path

        // The job file changes after planning: refused, naming the job file; nothing is written.
        try ws.provision("plan", "--quiet", "--out", planFile, job).expect(0)
        try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles), to: "job.json")
        let jobChanged = try ws.provision("apply", planFile)
        jobChanged.expect(1, "apply of a plan whose job changed")
        XCTAssertTrue(jobChanged.stderr.contains("job.json"), "names the job file: \(jobChanged.stderr)")
        XCTAssertTrue(jobChanged.stderr.contains("stale") || jobChanged.stderr.contains("changed"), jobChanged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.database.path), "a refused plan writes nothing")

        // A fresh plan of the changed job applies.
        try ws.provision("plan", "--quiet", "--out", planFile, job).expect(0)
        try ws.provision("apply", "--quiet", planFile).expect(0, "a fresh saved plan applies")
        XCTAssertEqual(try storedTiles(ws.sqlite), Demo.london.tiles.union(Demo.paris.tiles))

        // The store changes after planning (another apply): refused, naming the store.
        let bundle = ws.root.appendingPathComponent("bundle-store")
        let bundleDatabase = bundle.appendingPathComponent("offline.db")
        try ws.write(ws.job([Demo.paris], tiles: .mbtiles), to: "job.json")
        try ws.provision("apply", "--quiet", "--store", bundle.path, job).expect(0)
        try ws.provision("plan", "--quiet", "--store", bundle.path, "--out", planFile, job).expect(0)
        let other = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "other.json").path
        try ws.provision("apply", "--quiet", "--store", bundle.path, other).expect(0, "another job changes the store")
        let databaseBefore = try Data(contentsOf: bundleDatabase)
        let storeChanged = try ws.provision("apply", planFile)
        storeChanged.expect(1, "apply of a plan whose store changed")
        XCTAssertTrue(storeChanged.stderr.contains("bundle-store"), "names the store: \(storeChanged.stderr)")
        XCTAssertFalse(storeChanged.stderr.contains("job file"), "blames the store, not the job: \(storeChanged.stderr)")
        XCTAssertEqual(try Data(contentsOf: bundleDatabase), databaseBefore, "a refused plan leaves the store as it was")
        XCTAssertEqual(try storedTiles(SQLiteShell(database: bundleDatabase)), Demo.london.tiles)
    }
}
