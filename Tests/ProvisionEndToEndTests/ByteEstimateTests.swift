import Foundation
import ProvisionModel
import XCTest

/// Issue 20 #7: `limits.maxBytes` takes a job that fits (the estimate measures the MBTiles
/// origin's tiles instead of assuming 15 kB a tile), and a refusal names its basis.
final class ByteEstimateTests: XCTestCase {
    private var ws: Workspace!

    override func setUpWithError() throws { ws = try Workspace() }

    override func tearDown() {
        ws?.tearDown()
        ws = nil
    }

    private func job(maxBytes: Int, tiles: Workspace.TileOrigin) throws -> String {
        guard case .object(var job) = ws.job([Demo.newYork, Demo.london, Demo.paris], tiles: tiles) else {
            XCTFail("a job is an object")
            return ""
        }
        job["limits"] = ["maxTiles": 100_000, "maxBytes": .int(maxBytes)]
        return try ws.write(.object(job), to: "job-\(maxBytes)-\(tiles).json").path
    }

    func testTheDemoFitsALimitAboveItsRealSize() throws {
        // The demo stores 337,380 bytes of tiles; 15 kB a tile would have said 21,585,000.
        let fits = try job(maxBytes: 1_000_000, tiles: .mbtiles)
        let plan = try ws.provision("plan", fits)
        plan.expect(0, "a job whose store fits its maxBytes is planned")
        try ws.provision("apply", "--quiet", fits).expect(0)
        let stored = try ws.sqlite.int("SELECT sum(length(data)) FROM tiles")
        XCTAssertLessThan(stored, 1_000_000)

        let tight = try job(maxBytes: 300_000, tiles: .mbtiles)
        let refused = try ws.provision("plan", tight, "--store", ws.root.appendingPathComponent("other").path)
        refused.expect(65, "an estimate over maxBytes")
        XCTAssertTrue(refused.stderr.contains("estimated from the mean tile size per zoom of the origin archive streets.mbtiles"),
                      refused.stderr)
        XCTAssertTrue(refused.stderr.contains("over limits.maxBytes = 293.0 KiB (300,000 bytes)"), refused.stderr)
    }

    func testARefusalFromAnAssumedSizeSaysSo() throws {
        try ws.serveTiles()
        let refused = try ws.provision("plan", try job(maxBytes: 1_000_000, tiles: .http))
        refused.expect(65)
        XCTAssertTrue(refused.stderr.contains("20.6 MiB (21,585,000 bytes) of tiles (1,439 tiles)"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("estimated from an assumed 15,000 bytes per vector tile (docs/job-file.md, \"Byte estimates\")"),
                      refused.stderr)
    }
}
