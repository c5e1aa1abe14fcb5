import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// `plan --refresh` lists expired content and `apply --refresh` revalidates it with the stored
/// validators: a 304 keeps the stored bytes without a rewrite (issue 3, point 4).
final class RevalidationTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    /// The clock the binary reads (`PROVISION_NOW`) an hour from now, instead of waiting.
    private static var anHourLater: [String: String] { ["PROVISION_NOW": String(Int(Date().timeIntervalSince1970) + 3_600)] }

    func testExpiredContentIsRevalidatedAndKeptOn304() throws {
        ws.server.fileCacheMaxAge = 1
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)
        let rows = try ws.sqlite.int("SELECT count(*) FROM resources WHERE etag IS NOT NULL AND expires IS NOT NULL")
        XCTAssertGreaterThan(rows, 0, "HTTP resources keep their ETag and expiry")
        let tilesWithETag = try ws.sqlite.int("SELECT count(*) FROM tiles WHERE etag IS NOT NULL")
        XCTAssertEqual(tilesWithETag, Demo.paris.tiles.count)
        let before = try ws.sqlite.rows("SELECT url, hex(data), etag FROM resources ORDER BY url")

        // An hour later by the clock the binary reads: max-age=1 has passed for everything fetched above.
        let later = Self.anHourLater
        let plan = try ws.provision("plan", "--refresh", "--json", "--detailed-exitcode", job, environment: later)
        plan.expect(2, "expired content is a change under --refresh")
        let refresh = try parseJSON(plan.stdout)["refresh"]
        let expiredTiles = try XCTUnwrap(refresh?["tiles"]?.intValue)
        let expiredResources = try XCTUnwrap(refresh?["resources"]?.intValue)
        XCTAssertEqual(expiredTiles, Demo.paris.tiles.count)
        XCTAssertGreaterThan(expiredResources, 0)
        try ws.provision("plan", "--detailed-exitcode", job, environment: later).expect(0, "without --refresh expiry is not a change")

        let logged = ws.server.requests.count
        let apply = try ws.provision("apply", "--refresh", "--json", "--quiet", job, environment: later)
        apply.expect(0)
        let report = try parseJSON(apply.stdout)
        XCTAssertEqual(report["downloads"]?["revalidated"]?.intValue, expiredTiles + expiredResources)
        XCTAssertEqual(report["downloads"]?["refreshed"]?.intValue, 0)
        let conditional = ws.server.requests.dropFirst(logged).filter { $0.headers["if-none-match"] != nil }
        XCTAssertEqual(conditional.count, expiredTiles + expiredResources, "every expired object asked with If-None-Match")
        XCTAssertEqual(try ws.sqlite.rows("SELECT url, hex(data), etag FROM resources ORDER BY url"), before,
                       "a 304 keeps the stored bytes and ETag")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), Demo.paris.tiles.count)
    }

    func testChangedUpstreamBytesReplaceTheStoredOnesOnRefresh() throws {
        ws.server.fileCacheMaxAge = 1
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)
        // Change one tile upstream: its ETag no longer matches, so the origin answers 200.
        let sorted = Demo.paris.tiles.sorted { ($0.z, $0.x, $0.y) < ($1.z, $1.x, $1.y) }
        let (changed, other) = (try XCTUnwrap(sorted.last), try XCTUnwrap(sorted.first))
        let tree = try XCTUnwrap(ws.tileTree)
        let file = tree.appendingPathComponent("\(changed.z)/\(changed.x)/\(changed.y).pbf")
        let replacement = try Data(contentsOf: tree.appendingPathComponent("\(other.z)/\(other.x)/\(other.y).pbf"))
        try replacement.write(to: file)
        let apply = try ws.provision("apply", "--refresh", "--json", "--quiet", job, environment: Self.anHourLater)
        apply.expect(0)
        let report = try parseJSON(apply.stdout)
        XCTAssertEqual(report["downloads"]?["refreshed"]?.intValue, 1)
        XCTAssertGreaterThan(report["downloads"]?["revalidated"]?.intValue ?? 0, 0)
        // Everything has expired again by now (max-age=1), which audit reports; nothing is corrupt
        // and the content is what the lock recorded, the replaced tile included.
        let audit = try parseJSON(ws.provision("audit", "--verify", "--json", "--store", ws.store.path).stdout)
        XCTAssertEqual(audit["verification"]?["corrupt"]?.intValue, 0)
        XCTAssertEqual(audit["verification"]?["digestMatchesLock"], .bool(true))
        let stored = try ws.sqlite.rows(
            "SELECT hex(data), compressed FROM tiles WHERE z = \(changed.z) AND x = \(changed.x) AND y = \(changed.y)")
        let otherRow = try ws.sqlite.rows(
            "SELECT hex(data), compressed FROM tiles WHERE z = \(other.z) AND x = \(other.x) AND y = \(other.y)")
        XCTAssertEqual(stored, otherRow, "the changed tile now holds the new upstream bytes")
    }

    /// A TileJSON that changed upstream makes every tile of its source a change: the next apply
    /// fetches them all again, so the store never mixes tiles of two versions (issue 4, point 7).
    func testChangedTileJSONRefetchesEveryTileOfItsSource() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)
        let tileJSONURL = Demo.directory.appendingPathComponent("tilesets/streets.json")
        guard case .object(var tileJSON) = try readJSON(tileJSONURL) else { return XCTFail("TileJSON is not an object") }
        tileJSON["version"] = "2.0.0"
        ws.server.setRoute("/demo/tilesets/streets.json", .ok(JSONValue.object(tileJSON).data(), contentType: "application/json"))

        let plan = try ws.provision("plan", "--json", "--detailed-exitcode", job)
        plan.expect(2)
        let doc = try parseJSON(plan.stdout)
        XCTAssertEqual(doc["refetchTemplates"]?.arrayValue?.count, 1)
        XCTAssertEqual(doc["summary"]?["tilesToDownload"]?.intValue, Demo.paris.tiles.count)
        XCTAssertEqual(doc["drift"]?.arrayValue?.first?["url"]?.stringValue, Demo.canonicalBase + "tilesets/streets.json")

        let before = ws.requests(under: "/tiles/").count
        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(ws.requests(under: "/tiles/").count - before, Demo.paris.tiles.count, "every tile fetched again")
        try ws.provision("plan", "--detailed-exitcode", job).expect(0, "the new TileJSON is now pinned")
    }
}
