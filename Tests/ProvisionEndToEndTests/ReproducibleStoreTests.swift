import Foundation
import ProvisionModel
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 4 #1 and DESIGN invariant 1: the same job and upstream bytes give the same store bytes
/// whether built fresh, incrementally from another job, resumed after kills, or from a saved plan;
/// an apply with nothing to do touches nothing.
final class ReproducibleStoreTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]

    override class var servesTiles: Bool { true }

    private func storeURL(_ name: String) -> URL { ws.root.appendingPathComponent(name) }

    /// sha256 of offline.db and provision.lock.json of a store.
    private func digests(_ store: URL) -> [String] {
        [ws.sha256(store.appendingPathComponent("offline.db")), ws.sha256(store.appendingPathComponent("provision.lock.json"))]
    }

    func testFourRoutesGiveByteIdenticalStores() throws {
        let cities = [Demo.newYork, Demo.london, Demo.paris]
        // Slightly slow tiles, so an apply can be killed in the middle.
        try ws.serveSlowTiles(cities + [Demo.manhattan], delay: 0.005)
        let jobJ = try ws.write(ws.job(cities, tiles: .http), to: "j.json").path
        let jobK = try ws.write(ws.job([Demo.paris, Demo.manhattan], tiles: .http), to: "k.json").path

        // (a) fresh.
        let a = storeURL("a")
        try ws.provision("apply", "--quiet", "--store", a.path, jobJ, environment: epoch).expect(0, "route a")

        // (b) another job first, then J into the same store.
        let b = storeURL("b")
        try ws.provision("apply", "--quiet", "--store", b.path, jobK, environment: epoch).expect(0, "route b, job K")
        XCTAssertNotEqual(digests(b), digests(a))
        try ws.provision("apply", "--quiet", "--store", b.path, jobJ, environment: epoch).expect(0, "route b, job J")

        // (c) killed twice in the middle of the download, then resumed to completion.
        let c = storeURL("c")
        for kill in 1...2 {
            let before = ws.tileRequestPaths.count
            let run = try ws.start("apply", "--quiet", "--store", c.path, jobJ, environment: epoch)
            XCTAssertTrue(run.waitUntil(timeout: 30, watching: ws.server) { ws.tileRequestPaths.count - before >= 400 }, "kill \(kill): downloading")
            run.send(SIGKILL)
            run.wait(timeout: 10)
            XCTAssertTrue(run.endedBySignal, "kill \(kill) came before the apply finished")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: c.appendingPathComponent("provision.lock.json").path),
                       "no apply of route c finished before the last one")
        try ws.provision("apply", "--quiet", "--store", c.path, jobJ, environment: epoch).expect(0, "route c, resumed")

        // (d) a saved plan.
        let d = storeURL("d")
        let planFile = ws.root.appendingPathComponent("plan.json").path
        try ws.provision("plan", "--quiet", "--store", d.path, "--out", planFile, jobJ, environment: epoch)
            .expect(0, "route d, plan")
        try ws.provision("apply", "--quiet", planFile, environment: epoch).expect(0, "route d, apply the plan")

        let expected = digests(a)
        print("reproducible store: offline.db sha256 \(expected[0]), provision.lock.json sha256 \(expected[1])")
        XCTAssertFalse(expected.contains("absent"))
        for (route, store) in [("b (incremental from K)", b), ("c (killed twice, resumed)", c), ("d (saved plan)", d)] {
            XCTAssertEqual(digests(store)[0], expected[0], "offline.db of route \(route) differs from the fresh one")
            XCTAssertEqual(digests(store)[1], expected[1], "provision.lock.json of route \(route) differs from the fresh one")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted(),
                           ["offline.db", "provision.lock.json"], route)
        }
        XCTAssertEqual(try storedTiles(SQLiteShell(database: a.appendingPathComponent("offline.db"))),
                       cities.reduce(into: Set<TileAddress>()) { $0.formUnion($1.tiles) })
    }

    func testApplyWithNothingToChangeKeepsBytesAndMtimes() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let files = [ws.database, ws.lock]
        let bytes = try files.map { try Data(contentsOf: $0) }
        // Set the mtimes a day back rather than waiting for the clock: any write would move them.
        let dayAgo = Date(timeIntervalSinceNow: -86_400)
        for file in files { try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: file.path) }
        let mtimes = try files.map { try FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date }
        let entries = try ws.storeEntries()

        let before = ws.server.requests.count
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0, "apply with nothing to do")
        XCTAssertEqual(ws.server.requests.dropFirst(before).filter { $0.path.hasPrefix("/tiles/") }.count, 0)
        XCTAssertEqual(try files.map { try Data(contentsOf: $0) }, bytes, "bytes unchanged")
        XCTAssertEqual(try files.map { try FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date },
                       mtimes, "mtimes unchanged")
        XCTAssertEqual(try ws.storeEntries(), entries)
    }

    /// Issue 20 #5: against a host that sends `Date`, `Cache-Control: max-age`, `Expires` (and a
    /// CDN's `Age`) as real hosts do, two applies seconds apart with the same SOURCE_DATE_EPOCH
    /// give byte-identical stores: every `expires` is the build time plus the lifetime.
    func testAHostsDateAndAgeDoNotReachTheStore() throws {
        ws.server.fileCacheMaxAge = 86_400
        ws.server.fileCacheDate = 1_765_000_000
        ws.server.fileCacheAge = 0
        let job = try ws.write(ws.job([Demo.paris], tiles: .http), to: "j.json").path
        let (a, b) = (storeURL("a"), storeURL("b"))
        try ws.provision("apply", "--quiet", "--store", a.path, job, environment: epoch).expect(0, "first apply")
        // Two seconds later by the host's clock, through a cache that has held the files a while.
        ws.server.fileCacheDate = 1_765_000_002
        ws.server.fileCacheAge = 37
        try ws.provision("apply", "--quiet", "--store", b.path, job, environment: epoch).expect(0, "second apply")

        XCTAssertEqual(digests(b), digests(a), "the host's Date and Age reached the store")
        let sql = SQLiteShell(database: b.appendingPathComponent("offline.db"))
        let expected = String(1_700_000_000 + 86_400)
        XCTAssertEqual(try sql.rows("SELECT DISTINCT expires FROM tiles"), [[expected]], "SOURCE_DATE_EPOCH + max-age")
        XCTAssertEqual(try sql.rows("SELECT DISTINCT expires FROM resources"), [[expected]])
        XCTAssertEqual(try sql.int("SELECT count(*) FROM tiles"), Demo.paris.tiles.count)
    }
}
