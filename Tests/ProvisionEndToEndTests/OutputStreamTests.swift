import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 4 #3, #4, #8: what goes to stdout and stderr, in which format, with which exit status.
final class OutputStreamTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testProgressJSONIsNDJSONEventsOnStderrAndStdoutOnlyTheReport() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .http)).path
        let result = try ws.provision("apply", "--json", "--progress", "json", job)
        result.expect(0)
        let report = try parseJSON(result.stdout)
        XCTAssertEqual(report["kind"], "apply-report", "stdout is the report and nothing else")

        let schema = try SchemaSubset(named: "events.schema.json")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.last, "", "stderr ends with a newline")
        var names: [String] = []
        for line in lines.dropLast() {
            guard let event = try? JSONValue.parse(Data(line.utf8)), event.objectValue != nil else {
                XCTFail("stderr line is not a JSON object: \(line)")
                continue
            }
            guard let name = event["event"]?.stringValue else {
                XCTFail("no \"event\" in \(line)")
                continue
            }
            names.append(name)
            XCTAssertEqual(schema.problems(event), [], line)
        }
        for required in ["plan-started", "plan-finished", "progress", "apply-finished"] {
            XCTAssertTrue(names.contains(required), "\(required) missing from \(names)")
        }
        XCTAssertEqual(names.first, "plan-started")
        XCTAssertEqual(names.last, "apply-finished")
        if let started = names.firstIndex(of: "plan-started"), let finished = names.firstIndex(of: "plan-finished"),
           let progress = names.firstIndex(of: "progress") {
            XCTAssertLessThan(started, finished)
            XCTAssertLessThan(finished, progress)
        }
    }

    func testQuietApplyPrintsNothingOnStderrAndTheResultOnStdout() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let text = try ws.provision("apply", "--quiet", job)
        text.expect(0)
        XCTAssertEqual(text.stderr, "", "--quiet: nothing on stderr")
        XCTAssertTrue(text.stdout.contains("paris"), "the result on stdout: \(text.stdout)")

        let again = try ws.provision("apply", "--quiet", "--json", job)
        again.expect(0)
        XCTAssertEqual(again.stderr, "")
        XCTAssertEqual(try parseJSON(again.stdout)["status"], "complete")

        // Without --quiet on a non-terminal, progress goes to stderr, never to stdout.
        let loud = try ws.provision("apply", "--json", job)
        loud.expect(0)
        _ = try parseJSON(loud.stdout)
    }

    func testMarkdownPlanAndDetailedExitCode() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        let markdown = try ws.provision("plan", "--format", "markdown", job)
        markdown.expect(0)
        let tableRows = markdown.stdout.split(separator: "\n").filter { $0.hasPrefix("|") }
        XCTAssertTrue(tableRows.contains { $0.contains("---") }, "a Markdown table header separator: \(markdown.stdout)")
        for id in ["london", "paris"] {
            XCTAssertTrue(tableRows.contains { $0.contains(id) }, "a table row names \(id): \(markdown.stdout)")
        }
        XCTAssertTrue(tableRows.contains { $0.contains("\(Demo.london.tiles.count)") }, "London's tile count: \(markdown.stdout)")

        try ws.provision("plan", "--quiet", "--detailed-exitcode", job).expect(2, "changes present")
        try ws.provision("apply", "--quiet", job).expect(0)
        let none = try ws.provision("plan", "--detailed-exitcode", job)
        none.expect(0, "no changes after apply")
        try ws.provision("plan", job).expect(0, "without --detailed-exitcode, 0 either way")
    }
}
