import Foundation
import ProvisionModel
import XCTest

/// `download.missingTiles: "skip"`: tiles the origin answers 404 for are stored as "no content"
/// rows (data NULL), the region is complete, the plan that follows has nothing to do and the
/// next apply fetches nothing.
final class MissingTilesTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testTilesAnswered404AreStoredEmptyAndNotFetchedAgain() throws {
        // Three of Paris's tiles, spread over the key order, are missing upstream.
        let tiles = Demo.paris.tiles.sorted()
        let missing = Set([tiles[0], tiles[tiles.count / 2], tiles[tiles.count - 1]].map(ws.tilePath))
        for path in missing { ws.server.setRoute(path, .status(404, body: "no such tile")) }
        guard case .object(var job) = ws.job([Demo.paris], tiles: .http) else { return XCTFail("a job is an object") }
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        let path = try ws.write(.object(job)).path

        let applied = try ws.provision("apply", "--quiet", path)
        applied.expect(0, "apply with missing tiles skipped")
        // The summary says so: the parts of the planned downloads add up, the 404s among them.
        let summary = applied.stdout.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(summary.hasPrefix("Apply complete in "), applied.stdout)
        XCTAssertTrue(summary.contains(" tiles): "), summary)
        XCTAssertTrue(summary.contains(" downloaded, 3 missing upstream (stored empty, download.missingTiles: skip);"), summary)
        XCTAssertEqual(try ws.lockCompleteness(), ["paris/streets": true])
        let empty = try WritableSQLite(database: ws.database).rows("SELECT z, x, y FROM tiles WHERE data IS NULL")
            .map { "/tiles/\($0[0])/\($0[1])/\($0[2]).pbf" }
        XCTAssertEqual(Set(empty), missing)
        XCTAssertEqual(try ws.storedTilePaths().count, tiles.count)
        XCTAssertEqual(try ws.integrityCheck(), "ok")

        try ws.provision("plan", "--detailed-exitcode", path).expect(0, "nothing left to do")
        let before = ws.tileRequestPaths.count
        try ws.provision("apply", "--quiet", path).expect(0, "apply again")
        XCTAssertEqual(ws.tileRequestPaths.count, before, "no tile is fetched again, missing ones included")
    }
}
