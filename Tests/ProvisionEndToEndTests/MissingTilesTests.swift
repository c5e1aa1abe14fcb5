import Foundation
import ProvisionModel
import XCTest

/// `download.missingTiles: "skip"`: tiles the origin answers 404 for are stored as "no content"
/// rows (data NULL), the region is complete, the plan that follows has nothing to do and the
/// next apply fetches nothing.
final class MissingTilesTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    /// Paris's job with three of its tiles, spread over the key order, missing upstream (404) and
    /// `missingTiles: "skip"`: its tiles, the missing ones' paths and the job's path.
    private func parisWithMissingTiles() throws -> (tiles: [TileAddress], missing: Set<String>, job: String) {
        let tiles = Demo.paris.tiles.sorted()
        let missing = Set([tiles[0], tiles[tiles.count / 2], tiles[tiles.count - 1]].map(ws.tilePath))
        for path in missing { ws.server.setRoute(path, .status(404, body: "no such tile")) }
        var job = try XCTUnwrap(ws.job([Demo.paris], tiles: .http).objectValue, "a job is an object")
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        return (tiles, missing, try ws.write(.object(job)).path)
    }

    func testTilesAnswered404AreStoredEmptyAndNotFetchedAgain() throws {
        let (tiles, missing, path) = try parisWithMissingTiles()

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

    func testExportsLeaveTheEmptyRowsOut() throws {
        // The PMTiles export lists tile rows from the key index, empty ones included, and skips
        // the empty ones as it reads them; the MBTiles export reads only rows with content.
        let (tiles, missing, path) = try parisWithMissingTiles()
        try ws.provision("apply", "--quiet", path).expect(0, "apply with missing tiles skipped")
        let templates = try WritableSQLite(database: ws.database).rows("SELECT DISTINCT url_template FROM tiles")
        let template = try XCTUnwrap(templates.first?.first)
        XCTAssertEqual(templates.count, 1)
        for format in ["pmtiles", "mbtiles"] {
            let out = ws.root.appendingPathComponent("paris.\(format)")
            try ws.provision("export", "--store", ws.store.path, "--format", format, "--out", out.path)
                .expect(0, "export to \(format)")
            let report = try ExportOracles.check(format, out, store: ws.store, template: template)
            XCTAssertEqual(report["storeTiles"]?.intValue, tiles.count - missing.count, format)
            XCTAssertEqual(report["archiveTiles"]?.intValue, tiles.count - missing.count, format)
            XCTAssertEqual(report["equalTiles"]?.intValue, tiles.count - missing.count, format)
            for key in ["differing", "missing", "extra"] { XCTAssertEqual(report[key], .array([]), "\(format) \(key)") }
        }
    }
}
