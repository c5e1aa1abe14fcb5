@testable import ProvisionCLI
import XCTest

/// `--html FILE`, `--svg FILE --zoom Z` and `--html-url URL` on plan and audit: what parses and
/// each usage error (exit 64), found before any work.
final class CoverageArgumentsTests: XCTestCase {
    private func parse(_ arguments: [String]) -> Result<Invocation, UsageError> {
        do { return .success(try ArgumentParser.parse(arguments)) } catch { return .failure(error) }
    }

    private func usage(_ arguments: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(parse(arguments), .failure(UsageError(message: message, command: arguments[0])), file: file, line: line)
    }

    func testPlanAndAuditTakeThePictures() {
        var plan = PlanArguments(job: "job.json")
        plan.coverage = CoverageArguments(html: "map.html", svg: "z14.svg", zoom: 14)
        plan.htmlURL = "https://ci.example.com/map.html"
        XCTAssertEqual(parse(["plan", "--html", "map.html", "--svg", "z14.svg", "--zoom", "14",
                              "--html-url", "https://ci.example.com/map.html", "job.json"]), .success(.plan(plan)))
        var audit = AuditArguments()
        audit.coverage = CoverageArguments(html: "map.html")
        XCTAssertEqual(parse(["audit", "--html", "map.html"]), .success(.audit(audit)))
        XCTAssertEqual(audit.coverage.outputs.map(\.flag), ["--html"])
        XCTAssertEqual(plan.coverage.outputs.map(\.flag), ["--html", "--svg"])
    }

    func testGraphLevelPicksTheRoutingPacksLevelOfEveryPicture() {
        var audit = AuditArguments()
        audit.coverage = CoverageArguments(html: "map.html", svg: "z9.svg", zoom: 9, graphLevel: 1)
        XCTAssertEqual(parse(["audit", "--html", "map.html", "--svg", "z9.svg", "--zoom", "9", "--graph-level", "1"]),
                       .success(.audit(audit)))
        XCTAssertEqual(audit.coverage.requests.map(\.graphLevel), [1, 1])
        XCTAssertEqual(CoverageArguments(html: "map.html").requests.map(\.graphLevel), [nil])
        for bad in ["4", "-1", "two"] {
            usage(["plan", "--html", "m.html", "--graph-level", bad, "job.json"], "--graph-level must be a whole number from 0 to 3, not '\(bad)'")
        }
    }

    func testSVGAndZoomGoTogether() {
        usage(["plan", "--svg", "z.svg", "job.json"], "--svg goes with --zoom")
        usage(["audit", "--zoom", "12"], "--zoom goes with --svg")
        usage(["plan", "--html-url", "https://ci.example.com/x", "job.json"], "--html-url goes with --html")
        for bad in ["23", "-1", "twelve", "1.5"] {
            usage(["plan", "--svg", "z.svg", "--zoom", bad, "job.json"], "--zoom must be a whole number from 0 to 22, not '\(bad)'")
        }
    }

    func testAPictureOverwritesNeitherAnInputNorAnotherOutput() {
        usage(["plan", "--html", "job.json", "job.json"], "--html job.json would overwrite the job file job.json; write it elsewhere")
        usage(["plan", "--svg", "./job.json", "--zoom", "3", "job.json"],
              "--svg ./job.json would overwrite the job file job.json; write it elsewhere")
        usage(["plan", "--out", "p.json", "--html", "p.json", "job.json"], "--html p.json is also --out; give each output its own file")
        usage(["audit", "--html", "a.html", "--svg", "a.html", "--zoom", "3"], "--svg a.html is also --html; give each output its own file")
        usage(["audit", "--manifest", "job.json", "--html", "job.json"],
              "--html job.json would overwrite the --manifest job job.json; write it elsewhere")
    }

    /// The plan commands of the CI examples (Examples/ci) parse, and ask for the coverage map.
    func testTheCIExamplesPlanCommandsParse() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for name in ["github-actions.yml", "gitlab-ci.yml"] {
            let text = try String(contentsOf: root.appendingPathComponent("Examples/ci/\(name)"), encoding: .utf8)
            // Continuation lines joined (a shell `\` or a YAML plain scalar folded over lines).
            let joined = text.replacingOccurrences(of: "\\\n", with: " ").replacingOccurrences(of: "\n        --", with: " --")
            let commands = joined.split(separator: "\n").compactMap { line -> [String]? in
                guard let start = line.range(of: "provision plan ") else { return nil }
                let words = line[start.upperBound...].split(separator: " ").map { $0.replacingOccurrences(of: "\"", with: "") }
                return ["plan"] + words.prefix { ![">", ">>", "||"].contains($0) }
            }
            XCTAssertEqual(commands.count, 1, name)
            for command in commands {
                guard case .success(.plan(let plan)) = parse(command) else {
                    XCTFail("\(name): \(command) does not parse: \(parse(command))")
                    continue
                }
                XCTAssertEqual(plan.coverage.html, "coverage.html", name)
            }
        }
    }
}
