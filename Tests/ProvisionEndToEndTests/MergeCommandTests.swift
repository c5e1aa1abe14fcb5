import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// `provision merge` as a command: exit statuses, the `--progress json` events (checked against
/// `events.schema.json`), the lock on stdout with `--json`, and nothing written when refused.
final class MergeCommandTests: WorkspaceTestCase {
    /// The events of `stderr`, each checked against the schema.
    private func events(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        let schema = try SchemaSubset(named: "events.schema.json")
        return try stderr.split(separator: "\n").map { text in
            let event = try parseJSON(String(text), file: file, line: line)
            XCTAssertEqual(schema.problems(event), [], String(text), file: file, line: line)
            return event
        }
    }

    /// A copy of the applied store whose lock says it is the one shard of one.
    private func oneShard() throws -> URL {
        let copy = ws.root.appendingPathComponent("shard0")
        try FileManager.default.copyItem(at: ws.store, to: copy)
        guard case .object(var lock) = try readJSON(ws.lock), let tiles = lock["store"]?["tiles"] else {
            XCTFail("no lock")
            return copy
        }
        lock["shard"] = ["index": 0, "count": 1, "firstTile": 0, "endTile": tiles, "totalTiles": tiles]
        try (JSONValue.object(lock).data(.prettySorted) + Data("\n".utf8)).write(to: copy.appendingPathComponent("provision.lock.json"))
        return copy
    }

    func testMergeWritesTheWholeStoreAndRefusesWhatIsNotAShard() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job, environment: ["SOURCE_DATE_EPOCH": "1700000000"]).expect(0)
        let shard = try oneShard()
        let out = ws.root.appendingPathComponent("out")

        let merged = try ws.provision("merge", "--progress", "json", shard.path, "--store", out.path)
        merged.expect(0)
        let events = try self.events(merged.stderr)
        XCTAssertEqual(events.map { $0["event"] }, ["merge-started", "merge-finished"])
        let lock = try readJSON(ws.lock)
        XCTAssertEqual(events.last?["tiles"], lock["store"]?["tiles"])
        XCTAssertEqual(events.last?["bytes"], lock["store"]?["bytes"])
        XCTAssertTrue(merged.stdout.hasPrefix("Merged 1 shard of "), merged.stdout)
        for file in ["offline.db", "provision.lock.json"] {
            XCTAssertTrue(try Data(contentsOf: out.appendingPathComponent(file)) == Data(contentsOf: ws.store.appendingPathComponent(file)),
                          file)
        }

        let json = try ws.provision("merge", "--json", "--quiet", shard.path, "--store", out.path)
        json.expect(0)
        XCTAssertEqual(try parseJSON(json.stdout), lock, "--json prints the merged store's lock")

        let refused = ws.root.appendingPathComponent("refused")
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            ([ws.store.path], 65, "\(ws.store.path) is not the store of a sharded apply"),
            ([ws.root.appendingPathComponent("nowhere").path], 66, "no store at \(ws.root.path)/nowhere"),
            ([shard.path, shard.path], 65, "shard 0/1 is given twice"),
        ]
        for c in cases {
            let result = try ProvisionProcess.provision(["merge", "--progress", "json"] + c.arguments + ["--store", refused.path], in: ws.root)
            result.expect(c.status, c.message)
            XCTAssertEqual(try self.events(result.stderr).last?["event"], "error")
            XCTAssertTrue(result.stderr.contains(c.message), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: refused.path), "nothing was written")
        }
        try ws.provision("merge", shard.path, "--store", shard.path + "/").expect(64)
        try ws.provision("merge", shard.path).expect(64)
    }
}
