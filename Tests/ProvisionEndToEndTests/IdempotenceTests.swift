import Foundation
import ProvisionModel
import XCTest

/// Applying the same job again downloads nothing and changes nothing; a fresh apply elsewhere
/// gives the same bytes (DESIGN invariants 1 and 3).
final class IdempotenceTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testSecondApplyDownloadsNothingAndKeepsTheContentDigest() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .http)).path
        let first = try ws.provision("apply", "--json", "--quiet", job)
        first.expect(0)
        let firstReport = try parseJSON(first.stdout)
        let tiles = Demo.london.tiles.union(Demo.paris.tiles)
        XCTAssertEqual(ws.requests(under: "/tiles/").count, tiles.count, "each tile fetched once over HTTP")
        XCTAssertEqual(firstReport["downloads"]?["succeeded"]?.intValue, tiles.count + 134)
        let lock = try readJSON(ws.lock)
        let digest = try XCTUnwrap(lock["store"]?["contentDigest"]?.stringValue)
        XCTAssertTrue(digest.hasPrefix("sha256:"), digest)
        XCTAssertEqual(firstReport["store"]?["contentDigest"]?.stringValue, digest)
        let lockBytes = try Data(contentsOf: ws.lock)
        let databaseBytes = try Data(contentsOf: ws.database)

        let before = ws.server.requests.count
        let second = try ws.provision("apply", "--json", "--quiet", job)
        second.expect(0)
        let secondReport = try parseJSON(second.stdout)
        XCTAssertEqual(secondReport["status"], "complete")
        XCTAssertEqual(secondReport["downloads"]?["requested"]?.intValue, 0)
        XCTAssertEqual(secondReport["downloads"]?["bytes"]?.intValue, 0)
        XCTAssertEqual(secondReport["plan"]?["tilesToDownload"]?.intValue, 0)
        XCTAssertEqual(ws.server.requests.dropFirst(before).filter { $0.path.hasPrefix("/tiles/") }.count, 0,
                       "no tile requested again")
        XCTAssertEqual(secondReport["store"]?["contentDigest"]?.stringValue, digest)
        XCTAssertEqual(try readJSON(ws.lock)["store"]?["contentDigest"]?.stringValue, digest)
        XCTAssertEqual(try Data(contentsOf: ws.lock), lockBytes, "the lock is byte-identical")
        XCTAssertEqual(try Data(contentsOf: ws.database), databaseBytes, "offline.db is byte-identical")

    }

    func testFreshApplyElsewhereGivesTheSameBytes() throws {
        // Without SOURCE_DATE_EPOCH the build time is the clock: the same clock gives the same bytes.
        let clock = ["PROVISION_NOW": "1750000000"]
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job, environment: clock).expect(0)
        let databaseBytes = try Data(contentsOf: ws.database)
        let other = ws.root.appendingPathComponent("other-store")
        try ws.provision("apply", "--quiet", "--store", other.path, job, environment: clock).expect(0)
        XCTAssertEqual(try Data(contentsOf: other.appendingPathComponent("provision.lock.json")), try Data(contentsOf: ws.lock))
        let otherBytes = try Data(contentsOf: other.appendingPathComponent("offline.db"))
        XCTAssertEqual(otherBytes, databaseBytes, "offline.db is byte-identical to a fresh apply's")
    }
}
