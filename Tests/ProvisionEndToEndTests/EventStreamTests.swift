import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// `--progress json` is a complete NDJSON stream on stderr: every line an event of
/// `events.schema.json`, a `failure` per failed download, and an `error` event last when the
/// command fails, whatever the command and whatever the failure.
final class EventStreamTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    /// The events of `stderr`, each checked against the schema.
    private func events(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        let schema = try SchemaSubset(named: "events.schema.json")
        var events: [JSONValue] = []
        for text in stderr.split(separator: "\n").map(String.init) {
            guard let event = try? JSONValue.parse(Data(text.utf8)), event["event"] != nil else {
                XCTFail("stderr line is not an event: \(text)", file: file, line: line)
                continue
            }
            XCTAssertEqual(schema.problems(event), [], text, file: file, line: line)
            events.append(event)
        }
        return events
    }

    func testAPartialApplyStreamsEachFailureAndEndsWithAnErrorEvent() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let broken = Array(Demo.paris.tiles.filter { $0.z == 14 }.sorted().prefix(3))
        for tile in broken { ws.server.setRoute(ws.tilePath(tile), .html()) }
        let result = try ws.provision("apply", "--progress", "json", job)
        result.expect(75)
        let events = try self.events(result.stderr)
        let failures = events.filter { $0["event"] == "failure" }
        XCTAssertEqual(Set(failures.compactMap { $0["url"]?.stringValue }),
                       Set(broken.map { Demo.canonicalTiles + "\($0.z)/\($0.x)/\($0.y).pbf" }))
        XCTAssertEqual(events.last?["event"], "error")
        XCTAssertEqual(events.last?["exitCode"], .int(75))
        XCTAssertEqual(events.last?["code"], "partial")
        XCTAssertEqual(events.last?["message"], "3 downloads failed; run apply again to retry them")
        XCTAssertTrue(events.contains { $0["event"] == "apply-finished" })
    }

    func testFailuresBeforeAnyWorkAreErrorEventsToo() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try FileManager.default.createDirectory(at: ws.store, withIntermediateDirectories: true)
        let cases: [(name: String, arguments: [String], status: Int32, message: String)] = [
            ("usage", ["plan", "--progress", "json", "--bogus", job], 64, "unknown option '--bogus'"),
            ("missing job", ["plan", "--progress", "json", ws.root.path + "/nope.json"], 66, "cannot read job file"),
            ("output over the store", ["plan", "--progress", "json", "--out", ws.store.path + "/offline.db", job], 64,
             "would overwrite the store's offline.db"),
            ("no store", ["audit", "--progress", "json", "--store", ws.root.path + "/empty"], 66, "no store at"),
        ]
        for c in cases {
            let result = try ProvisionProcess.provision(c.arguments, in: ws.root)
            XCTAssertEqual(result.status, c.status, "\(c.name): \(result.stderr)")
            let events = try self.events(result.stderr)
            XCTAssertEqual(events.last?["event"], "error", c.name)
            XCTAssertEqual(events.last?["exitCode"], .int(Int(c.status)), c.name)
            XCTAssertTrue(events.last?["message"]?.stringValue?.contains(c.message) == true, "\(c.name): \(result.stderr)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.store.path), [], "nothing was written")
    }

    func testValidateAndAuditEndWithTheirSummaries() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let validate = try ws.provision("validate", "--progress", "json", job)
        validate.expect(0)
        XCTAssertEqual(try events(validate.stderr).map { $0["event"] }, ["validate-finished"])
        try ws.provision("apply", "--quiet", job).expect(0)
        let audit = try ws.provision("audit", "--progress", "json", "--store", ws.store.path)
        audit.expect(0)
        let last = try events(audit.stderr).last
        XCTAssertEqual(last?["event"], "audit-finished")
        XCTAssertEqual(last?["whole"], true)
    }

    func testAuditWithAManifestReadsTheJobsStore() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)
        let elsewhere = ws.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let audit = try ProvisionProcess.provision(["audit", "--json", "--manifest", job], in: elsewhere)
        XCTAssertEqual(audit.status, 0, audit.stderr)
        XCTAssertEqual(try parseJSON(audit.stdout)["store"]?.stringValue, ws.store.standardizedFileURL.path)
    }

    func testTTYModeDrawsABarThatFitsTheColumns() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let result = try ws.provision("apply", "--progress", "tty", job, environment: ["COLUMNS": "50", "NO_COLOR": "1"])
        result.expect(0)
        XCTAssertTrue(result.stderr.contains("\r\u{1B}[K"), "a live line is drawn though stderr is a pipe")
        XCTAssertFalse(result.stderr.contains("\u{1B}[32m"), "NO_COLOR: no colour")
        for drawn in result.stderr.components(separatedBy: "\r\u{1B}[K") {
            for line in drawn.split(separator: "\n") where line.contains("downloading") {
                XCTAssertLessThanOrEqual(line.count, 49, String(line))
            }
        }
    }

    func testAJobOnStandardInput() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http))
        let plan = try ProvisionProcess.provision(["plan", "--json", "-"], in: ws.root, stdin: job)
        XCTAssertEqual(plan.status, 0, plan.stderr)
        XCTAssertEqual(try parseJSON(plan.stdout)["kind"], "plan")
        let apply = try ProvisionProcess.provision(["apply", "--quiet", "-"], in: ws.root, stdin: job)
        XCTAssertEqual(apply.status, 0, apply.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: ws.store.appendingPathComponent("offline.db").path))
        let validate = try ProvisionProcess.provision(["validate", "-"], in: ws.root, stdin: job)
        XCTAssertEqual(validate.status, 0, validate.stderr)
        XCTAssertTrue(validate.stdout.contains("<stdin>: valid"), validate.stdout)

        let saved = ws.root.appendingPathComponent("saved.json")
        try ws.provision("plan", "--quiet", "--out", saved.path, job.path).expect(0)
        let misused = try ws.provision("plan", saved.path)
        misused.expect(65)
        XCTAssertTrue(misused.stderr.contains("is a saved plan, not a job file"), misused.stderr)
    }
}
