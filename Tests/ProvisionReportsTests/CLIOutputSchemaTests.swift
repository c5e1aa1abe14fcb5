import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionTestSupport
import XCTest

/// Runs the real `provision` binary on the bundled demo job (local files only, no network) and
/// checks every JSON it prints or writes against the schemas. Skipped when the binary has not
/// been built next to the test bundle (set PROVISION_BINARY to point at one).
final class CLIOutputSchemaTests: XCTestCase {
    private struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        func json() throws -> JSONValue { try JSONValue.parse(stdout) }

        /// The NDJSON events on stderr.
        func events() throws -> [JSONValue] {
            try stderr.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        }
    }

    private var binary: URL!
    private var directory: URL!

    override func setUpWithError() throws {
        guard let found = Self.findBinary() else { throw MissingTool("the provision binary next to the tests", package: "it with swift build") }
        guard FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent("Jobs/cities.json").path) else {
            return XCTFail("the demo job Jobs/cities.json is not in this checkout")
        }
        binary = found
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("provision-reports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let created = directory!
        addTeardownBlock { try? FileManager.default.removeItem(at: created) }
    }

    func testPlanApplyAndAuditOutputsOfTheDemoJobMatchTheSchemas() throws {
        let job = repositoryRoot.appendingPathComponent("Jobs/cities.json").path
        let store = directory.appendingPathComponent("store").path
        let reportFile = directory.appendingPathComponent("report.json")

        let plan = try run(["plan", job, "--store", store, "--json", "--progress", "json"])
        XCTAssertEqual(plan.status, 0, plan.stderr)
        try assertValid(plan.json(), against: "plan", "first plan")

        let apply = try run(["apply", job, "--store", store, "--json", "--progress", "json", "--report", reportFile.path])
        XCTAssertEqual(apply.status, 0, apply.stderr)
        try assertValid(apply.json(), against: "report", "apply --json")
        try assertValid(JSONValue.parse(Data(contentsOf: reportFile)), against: "report", "apply --report")
        let lockURL = URL(fileURLWithPath: store).appendingPathComponent("provision.lock.json")
        try assertValid(JSONValue.parse(Data(contentsOf: lockURL)), against: "lock", "provision.lock.json")

        let events = try plan.events() + apply.events()
        for event in events { try assertValid(event, against: "events", event.serialized()) }
        XCTAssertEqual(Set(events.compactMap { $0["event"]?.stringValue }),
                       ["plan-started", "plan-finished", "phase", "progress", "region", "apply-finished"])

        let replan = try run(["plan", job, "--store", store, "--json"])
        try assertValid(replan.json(), against: "plan", "plan after apply")

        let audit = try run(["audit", "--store", store, "--json"])
        XCTAssertEqual(audit.status, 0, audit.stdout)
        try assertValid(audit.json(), against: "audit")

        // The footprint: estimated before the apply, exact after; the audit's text table shows the JSON's bytes.
        XCTAssertEqual(try plan.json()["footprint"]?["exact"], false)
        XCTAssertEqual(try apply.json()["footprint"], try audit.json()["footprint"])
        let footprint = try XCTUnwrap(try audit.json()["footprint"])
        XCTAssertEqual(footprint["exact"], true)
        XCTAssertEqual(try replan.json()["footprint"], footprint)
        XCTAssertEqual(footprint["all"]?["total"]?["bytes"], try apply.json()["store"]?["bytes"])
        let regions = footprint["regions"]?.arrayValue ?? []
        XCTAssertEqual(regions.compactMap { $0["id"]?.stringValue }, ["new-york", "london", "paris"])
        let text = try run(["audit", "--store", store]).stdout
        XCTAssertTrue(text.contains("\nBytes in offline.db (as stored, compressed where the row is; marginal: what removing it frees):\n"), text)
        for region in regions {
            let id = region["id"]?.stringValue ?? ""
            let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("  region \(id) ") }, id)
            let words = line.dropFirst("  region \(id)".count).split(separator: " ").map(String.init)
            let cells = stride(from: 0, to: 6, by: 2).map { words[$0] + " " + words[$0 + 1] }
            XCTAssertEqual(cells, ["marginal", "shared", "total"].map { ByteFormat.string(Int64(region[$0]?["bytes"]?.intValue ?? -1)) },
                           String(line))
            let others = (region["sharedWith"]?.arrayValue ?? []).compactMap { $0["region"]?.stringValue }
            XCTAssertEqual(others.count, 2, "every city shares the style pack's resources with the two others")
            for other in others { XCTAssertTrue(line.contains(other), String(line)) }
        }
        XCTAssertNotNil(text.split(separator: "\n").first { $0.hasPrefix("  style pack streets ") && $0.contains("glyphs ") }, text)
    }

    func testValidateAndErrorOutputsMatchTheSchemas() throws {
        let job = repositoryRoot.appendingPathComponent("Jobs/cities.json").path
        let invalid = directory.appendingPathComponent("invalid.json")
        try Data(#"{"version": 1, "name": "x", "regions": [{"id": "a b"}], "extra": true}"#.utf8).write(to: invalid)
        let broken = directory.appendingPathComponent("broken.json")
        try Data("{\n  \"version\": 1,\n".utf8).write(to: broken)

        let validate = try run(["validate", job, invalid.path, broken.path, "/nonexistent/job.json", "--json"])
        XCTAssertNotEqual(validate.status, 0)
        let document = try validate.json()
        try assertValid(document, against: "validation")
        XCTAssertEqual(document["files"]?.arrayValue?.map { $0["valid"] }, [true, false, false, false])
        XCTAssertNotNil(document["files"]?[3]?["unreadable"])
        XCTAssertNotNil(document["files"]?[2]?["problems"]?[0]?["line"]?.intValue, "a syntax error has a line")

        for (arguments, status) in [(["plan", invalid.path, "--json"], 65), (["plan", "/nonexistent/job.json", "--json"], 66),
                                    (["plan", job, "--bogus", "--json"], 64), (["audit", "--store", directory.path, "--json"], 66),
                                    (["audit", "--format", "json"], 64)] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, Int32(status), arguments.joined(separator: " "))
            let error = try result.json()
            try assertValid(error, against: "error", arguments.joined(separator: " "))
            XCTAssertEqual(error["exitCode"]?.intValue, status)
        }
    }

    // MARK: - Helpers

    private func run(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = directory.appendingPathComponent("stdout-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   stdout: try String(contentsOf: out, encoding: .utf8),
                   stderr: try String(contentsOf: err, encoding: .utf8))
    }

    private static func findBinary() -> URL? {
        if let path = ProcessInfo.processInfo.environment["PROVISION_BINARY"] { return URL(fileURLWithPath: path) }
        var candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        #if os(macOS)
        candidates.append(Bundle(for: CLIOutputSchemaTests.self).bundleURL.deletingLastPathComponent())
        #endif
        return candidates.map { $0.appendingPathComponent("provision") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
