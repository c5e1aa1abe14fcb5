import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Exit statuses and error output of the built binary (sysexits; DESIGN "Command-line contract").
final class ExitCodeTests: WorkspaceTestCase {
    func testNoArgumentsPrintsHelp() throws {
        let result = try ws.provision()
        result.expect(0)
        XCTAssertTrue(result.stdout.contains("USAGE: provision <command>"), result.stdout)
        for command in ["validate", "plan", "apply", "audit"] { XCTAssertTrue(result.stdout.contains(command), command) }
    }

    func testUnknownCommandSuggestsTheClosest() throws {
        let result = try ws.provision("plam", "job.json")
        result.expect(64)
        XCTAssertTrue(result.stderr.contains("unknown command 'plam'"), result.stderr)
        XCTAssertTrue(result.stderr.contains("did you mean 'plan'?"), result.stderr)
        XCTAssertEqual(result.stdout, "", "errors go to stderr")
    }

    func testUnknownOption() throws {
        let result = try ws.provision("apply", "--detailed-exitcode", "job.json")
        result.expect(64)
        XCTAssertTrue(result.stderr.contains("unknown option '--detailed-exitcode' for 'apply'"), result.stderr)
    }

    func testUsageErrorWithJSONIsAJSONDocument() throws {
        let result = try ws.provision("plan", "--json", "--bogus", "job.json")
        result.expect(64)
        let error = try parseJSON(result.stdout)
        XCTAssertEqual(error["schemaVersion"], .int(1))
        XCTAssertEqual(error["kind"], "error")
        XCTAssertEqual(error["exitCode"], .int(64))
        XCTAssertTrue(error["message"]?.stringValue?.contains("--bogus") == true, result.stdout)
    }

    func testMissingJobFile() throws {
        let result = try ws.provision("plan", "no-such-job.json")
        result.expect(66)
        XCTAssertTrue(result.stderr.contains("no-such-job.json"), result.stderr)
        try ws.provision("validate", "no-such-job.json").expect(66)
    }

    func testInvalidJobNamesEveryProblemByPointer() throws {
        // An unknown key in region 0 and a zoom range [15, 3] in region 1.
        let regions = [Demo.london.region(extra: [("colour", "red")]), replacingZoom(Demo.paris.region(), [15, 3])]
        let job = replacingRegions(ws.job([Demo.london, Demo.paris], tiles: .mbtiles), regions)
        let bad = try ws.write(job, to: "bad.json").path
        let good = try ws.write(ws.job([Demo.paris], tiles: .mbtiles), to: "good.json").path

        for command in ["plan", "apply"] {
            let result = try ws.provision(command, bad)
            result.expect(65, command)
            XCTAssertTrue(result.stderr.contains("/regions/0/colour"), result.stderr)
            XCTAssertTrue(result.stderr.contains("/regions/1/zoom"), result.stderr)
            XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "nothing is written for an invalid job")

        try ws.provision("validate", good).expect(0)
        let both = try ws.provision("validate", good, bad)
        both.expect(65)
        XCTAssertTrue(both.stderr.contains("/regions/1/zoom"), both.stderr)
        let json = try ws.provision("validate", "--json", bad)
        json.expect(65)
        let document = try parseJSON(json.stdout)
        XCTAssertEqual(document["valid"], .bool(false))
        let pointers = document["files"]?.arrayValue?.first?["problems"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue }
        XCTAssertEqual(Set(pointers ?? []), ["/regions/0/colour", "/regions/1/zoom"])
    }

    func testOriginWithoutTheStyleIsUpstreamUnavailable() throws {
        let empty = ws.root.appendingPathComponent("empty-origin")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let job = Demo.job(regions: [Demo.paris.region()], origins: [(Demo.canonicalBase, .string(empty.path))])
        let file = try ws.write(job).path
        for command in ["plan", "apply"] {
            let result = try ws.provision(command, file)
            result.expect(69, command)
            XCTAssertTrue(result.stderr.contains(Demo.styleURL), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "apply writes nothing when planning fails")

        // The same through an HTTP mirror that answers 404.
        let mirrored = Demo.job(regions: [Demo.paris.region()],
                                origins: [(Demo.canonicalBase, .string(ws.server.baseURL + "/nothing-here/"))])
        let result = try ws.provision("plan", try ws.write(mirrored, to: "mirror.json").path)
        result.expect(69)
        XCTAssertEqual(ws.server.requestCount("/nothing-here/styles/streets.json"), 1, "a 404 is not retried")
    }

    private func replacingRegions(_ job: JSONValue, _ regions: [JSONValue]) -> JSONValue {
        guard var object = job.objectValue else { return job }
        object["regions"] = .array(regions)
        return .object(object)
    }

    private func replacingZoom(_ region: JSONValue, _ zoom: [Int]) -> JSONValue {
        guard var object = region.objectValue else { return region }
        object["zoom"] = .array(zoom.map { .int($0) })
        return .object(object)
    }
}
