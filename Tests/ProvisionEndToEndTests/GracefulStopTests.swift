import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 3 #5: SIGINT and SIGTERM stop an apply gracefully: what was downloaded is committed,
/// the lock marks the region incomplete, the report is written, the exit status is 130 or 143,
/// and the next apply fetches only what is still missing.
final class GracefulStopTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testSIGINTStopsWith130AndTheNextApplyResumes() throws {
        try stopAndResume(signal: SIGINT, expected: 130)
    }

    func testSIGTERMStopsWith143AndTheNextApplyResumes() throws {
        try stopAndResume(signal: SIGTERM, expected: 143)
    }

    private func stopAndResume(signal: Int32, expected: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        let city = Demo.manhattan
        let slow = try ws.serveSlowTiles([city], delay: 0.15)
        XCTAssertEqual(slow.count, 120)
        let job = try ws.write(ws.job([city], tiles: .http)).path
        let reportURL = ws.root.appendingPathComponent("report.json")

        let run = try ws.start("apply", "--progress", "json", "--report", reportURL.path, job)
        XCTAssertTrue(run.waitUntil(timeout: 20, watching: ws.server) { ws.tileRequestPaths.count >= 24 }, "tiles are being requested")
        run.send(signal)
        let stopped = run.wait(timeout: 20)
        stopped.expect(expected, "apply stopped by signal \(signal)", file: file, line: line)
        XCTAssertFalse(run.endedBySignal, "the process exits by itself, it is not killed by the signal", file: file, line: line)
        let requestedBeforeStop = Set(ws.tileRequestPaths)
        XCTAssertLessThan(requestedBeforeStop.count, slow.count, "the stop came before every tile was requested",
                          file: file, line: line)

        // Progress events: one JSON object per line, per the schema, with the stop announced.
        let schema = try SchemaSubset(named: "events.schema.json")
        let events = stopped.stderr.split(separator: "\n").map(String.init)
        for event in events {
            guard let value = try? JSONValue.parse(Data(event.utf8)) else {
                XCTFail("stderr line is not JSON: \(event)", file: file, line: line)
                continue
            }
            XCTAssertEqual(schema.problems(value), [], event, file: file, line: line)
        }
        XCTAssertTrue(events.contains { $0.contains("\"event\":\"stopping\"") }, stopped.stderr, file: file, line: line)
        // Issue 20: the stream ends with an error event naming the stop, as for any failing command.
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        let last = events.last.flatMap { try? JSONValue.parse(Data($0.utf8)) }
        XCTAssertEqual(last?["event"], "error", stopped.stderr, file: file, line: line)
        XCTAssertEqual(last?["exitCode"], .int(Int(expected)), file: file, line: line)
        XCTAssertEqual(last?["code"]?.stringValue, signal == SIGTERM ? "terminated" : "interrupted", file: file, line: line)
        XCTAssertTrue(last?["message"]?.stringValue?.hasPrefix("stopped by \(name) after committing what arrived") == true,
                      stopped.stderr, file: file, line: line)
        XCTAssertTrue(events.contains { $0.contains("\"event\":\"apply-finished\"") && $0.contains("\"status\":\"stopped\"") },
                      stopped.stderr, file: file, line: line)

        // The store opens and is sound; the owner file is released; the lock marks the region incomplete.
        XCTAssertEqual(try ws.integrityCheck(), "ok", file: file, line: line)
        XCTAssertEqual(try ws.storeEntries(), ["offline.db", "provision.lock.json"], file: file, line: line)
        XCTAssertEqual(try ws.lockCompleteness(), ["manhattan/streets": false], file: file, line: line)
        let report = try readJSON(reportURL)
        XCTAssertEqual(report["kind"], "apply-report", file: file, line: line)
        XCTAssertEqual(report["status"], "stopped", "a stop by signal is neither complete nor partial (75)", file: file, line: line)
        XCTAssertTrue(report["downloads"]?["stoppedEarly"]?.stringValue?.hasPrefix("stopped by \(name): ") == true,
                      "\(report["downloads"]?["stoppedEarly"] ?? .null)", file: file, line: line)
        XCTAssertEqual(report["regions"]?.arrayValue?.first?["complete"], .bool(false), file: file, line: line)
        // The report and the summary count the tiles never requested.
        let downloads = report["downloads"]
        let notAttempted = downloads?["notAttempted"]?.intValue ?? -1
        XCTAssertEqual(downloads?["plannedTiles"]?.intValue, slow.count, file: file, line: line)
        XCTAssertEqual(notAttempted, slow.count - requestedBeforeStop.count, "the tiles never requested", file: file, line: line)
        XCTAssertEqual((downloads?["planned"]?.intValue ?? 0) - notAttempted, downloads?["requested"]?.intValue, file: file, line: line)
        XCTAssertTrue(stopped.stdout.contains(", \(grouped(notAttempted)) not attempted (stopped by \(name)); "), stopped.stdout,
                      file: file, line: line)

        // The downloads in flight were finished and committed: what was requested is stored.
        let stored = try ws.storedTilePaths()
        XCTAssertFalse(stored.isEmpty, "tiles downloaded before the stop are kept", file: file, line: line)
        XCTAssertEqual(stored, requestedBeforeStop, "every tile requested before the stop was finished and committed",
                       file: file, line: line)

        // The next apply completes and requests none of the stored tiles.
        let before = ws.tileRequestPaths.count
        let resumed = try ws.provision("apply", "--quiet", job, file: file, line: line)
        resumed.expect(0, "apply after the stop", file: file, line: line)
        let again = Array(ws.tileRequestPaths.dropFirst(before))
        XCTAssertTrue(Set(again).isDisjoint(with: stored),
                      "tiles stored before the stop were requested again: \(Set(again).intersection(stored).sorted())",
                      file: file, line: line)
        XCTAssertEqual(again.count, Set(again).count, "each missing tile requested once", file: file, line: line)
        XCTAssertEqual(Set(again).union(stored), slow, file: file, line: line)
        XCTAssertEqual(try ws.storedTilePaths(), slow, file: file, line: line)
        XCTAssertEqual(try ws.lockCompleteness(), ["manhattan/streets": true], file: file, line: line)
        XCTAssertEqual(try ws.storeEntries(), ["offline.db", "provision.lock.json"], file: file, line: line)
    }
}
