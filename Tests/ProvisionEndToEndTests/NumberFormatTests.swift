import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 20 #7: every text output counts one way: numbers of 10,000 and more are grouped
/// (`12,345 tiles`), bytes carry one unit style, on a run with big counts through plan,
/// apply (whole and sharded), merge (shards and an offline.db), audit and export.
final class NumberFormatTests: XCTestCase {
    private var ws: Workspace!

    override func setUpWithError() throws { ws = try Workspace() }

    override func tearDown() {
        ws?.tearDown()
        ws = nil
    }

    /// Digit runs of five or more that stand alone (not inside a hex digest, a path or a word).
    private func ungrouped(_ text: String) -> [String] {
        let cleaned = text.replacingOccurrences(of: ws.root.path, with: "ROOT")
            .replacingOccurrences(of: ws.server.baseURL, with: "SERVER")
        let regex = try? NSRegularExpression(pattern: #"(?<![0-9A-Za-z_.])\d{5,}(?![0-9A-Za-z_])"#)
        let range = NSRange(cleaned.startIndex..., in: cleaned)
        return (regex?.matches(in: cleaned, range: range) ?? []).compactMap { match in
            guard let r = Range(match.range, in: cleaned) else { return nil }
            let lineStart = cleaned[..<r.lowerBound].lastIndex(of: "\n").map { cleaned.index(after: $0) } ?? cleaned.startIndex
            let lineEnd = cleaned[r.upperBound...].firstIndex(of: "\n") ?? cleaned.endIndex
            return String(cleaned[lineStart..<lineEnd])
        }
    }

    func testNoTextOutputPrintsAnUngroupedNumber() throws {
        // An Atlantic box inside the demo TileJSON's bounds: over 10,000 tiles the archive does
        // not hold, stored empty under missingTiles "skip", beside London's real ones.
        let atlantic = Demo.City(id: "atlantic", name: "Atlantic", bbox: [-50, 44, -38, 48])
        guard case .object(var job) = ws.job([Demo.london, atlantic], tiles: .mbtiles) else { return XCTFail("a job is an object") }
        job["download"] = ["concurrency": 16, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        job["regions"] = .array([Demo.london.region(), atlantic.region(zoom: 10...12)])
        let path = try ws.write(.object(job)).path
        let env = ["SOURCE_DATE_EPOCH": "1700000000", "COLUMNS": "40"]
        var outputs: [(String, String)] = []
        func run(_ expected: Int32, _ arguments: String...) throws {
            let result = try ProvisionProcess.provision(arguments, in: ws.root, environment: env, timeout: 300)
            result.expect(expected, arguments.joined(separator: " "))
            outputs.append((arguments.joined(separator: " "), result.stdout + result.stderr))
        }
        try run(0, "plan", path)
        try run(0, "plan", path, "--format", "markdown")
        try run(0, "apply", path, "--progress", "plain")
        let tiles = try ws.sqlite.int("SELECT count(*) FROM tiles")
        XCTAssertGreaterThan(tiles, 10_000, "the run has big counts")
        try run(0, "plan", path)
        try run(0, "audit", "--verify", "--store", ws.store.path)
        try run(0, "export", "--store", ws.store.path, "--format", "mbtiles", "--out", ws.root.appendingPathComponent("out.mbtiles").path)
        let shards = ["0/2", "1/2"].map { ws.root.appendingPathComponent("shard-" + $0.replacingOccurrences(of: "/", with: "-")).path }
        try run(0, "apply", path, "--shard", "0/2", "--store", shards[0], "--progress", "plain")
        try run(0, "apply", path, "--shard", "1/2", "--store", shards[1], "--progress", "plain")
        let merged = ws.root.appendingPathComponent("merged").path
        try run(0, "merge", shards[0], shards[1], "--store", merged)
        try run(0, "merge", ws.database.path, "--store", merged)
        try run(0, "audit", "--store", merged)
        for (command, text) in outputs {
            XCTAssertEqual(ungrouped(text), [], "\(command) prints an ungrouped number:\n\(text.prefix(4000))")
        }
        let all = outputs.map(\.1).joined()
        XCTAssertTrue(all.contains(grouped(tiles)), "the big count is there, grouped")
        XCTAssertFalse(all.contains(" bytes;") || all.contains(" bytes.\n"), "bytes in one unit style")
    }
}
