import Foundation
import ProvisionModel
import XCTest

/// Usage errors the command line refuses before doing anything, each with its exit code and a
/// message naming what to fix.
final class CommandLineContractTests: WorkspaceTestCase {
    private struct Case {
        var name: String
        var arguments: [String]
        var status: Int32
        var message: String
    }

    func testConflictingRepeatedAndUnsafeOptionsAreRefusedBeforeAnyWork() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .mbtiles)).path
        let file = ws.root.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let cases: [Case] = [
            Case(name: "json and markdown", arguments: ["plan", "--json", "--format", "markdown", job], status: 64,
                 message: "--format markdown conflicts with --json"),
            Case(name: "two formats", arguments: ["plan", "--format", "text", "--format", "json", job], status: 64,
                 message: "--format is given twice"),
            Case(name: "two reports", arguments: ["apply", "--report", "a.json", "--report", "b.json", job], status: 64,
                 message: "--report is given twice"),
            Case(name: "out over the job", arguments: ["plan", "--out", job, job], status: 64,
                 message: "would overwrite the job file"),
            Case(name: "report over the job", arguments: ["apply", "--report", job, job], status: 64,
                 message: "would overwrite the job file"),
            Case(name: "empty store", arguments: ["plan", "--store", "", job], status: 64,
                 message: "--store needs a directory path, not an empty string"),
            Case(name: "store is a file", arguments: ["plan", "--store", file.path, job], status: 73,
                 message: "is a file, not a directory"),
            Case(name: "report in a missing directory", arguments: ["apply", "--report", ws.root.path + "/no/such/dir/r.json", job],
                 status: 73, message: "the directory \(ws.root.path)/no/such/dir does not exist"),
            Case(name: "out in a missing directory", arguments: ["plan", "--out", ws.root.path + "/nope/p.json", job],
                 status: 73, message: "cannot write --out"),
        ]
        for c in cases {
            let result = try ProvisionProcess.provision(c.arguments, in: ws.root)
            XCTAssertEqual(result.status, c.status, "\(c.name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(c.message), "\(c.name): \(result.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "nothing was written")
        XCTAssertEqual(try String(contentsOf: file, encoding: .utf8), "x")
        XCTAssertNotNil(JobLoader.load(from: URL(fileURLWithPath: job)).job, "the job file is intact")
    }
}
