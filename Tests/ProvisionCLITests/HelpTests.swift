import Foundation
@testable import ProvisionCLI
import XCTest

/// `--help` and the README's option tables come from the command declarations.
final class HelpTests: XCTestCase {
    func testHelpListsEveryOptionAndExitCode() {
        for spec in Commands.all {
            let help = Help.text(for: spec.name)
            XCTAssertTrue(help.hasPrefix("USAGE: provision \(spec.name)"), help)
            for option in spec.options {
                XCTAssertTrue(help.contains("  \(option.synopsis) "), "\(spec.name) --help lacks \(option.synopsis)")
            }
            for (code, _) in spec.exitCodes {
                XCTAssertTrue(help.contains("\n  \(code.rawValue) "), "\(spec.name) --help lacks exit code \(code.rawValue)")
            }
            for line in help.split(separator: "\n") {
                XCTAssertLessThanOrEqual(line.count, 100, "\(spec.name) --help line too long: \(line)")
            }
        }
        let apply = Help.text(for: "apply")
        XCTAssertTrue(apply.contains("130") && apply.contains("143"), apply)
        let overview = Help.text(for: nil)
        for spec in Commands.all { XCTAssertTrue(overview.contains("  \(spec.name) "), spec.name) }
        XCTAssertTrue(overview.contains("--version"), overview)
    }

    func testEveryCommandTakesProgressQuietJSONAndVerbose() {
        for spec in Commands.all {
            for name in ["--progress", "--quiet", "--json", "--verbose"] {
                XCTAssertNotNil(spec.option(name), "\(spec.name) lacks \(name)")
            }
        }
    }

    /// The README's option tables equal the generated ones; `PROVISION_RECORD_GOLDENS=1`
    /// rewrites them and fails once, so a re-record is never silently green.
    func testReadmeOptionTablesMatchTheDeclarations() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        var updated = text
        for spec in Commands.all {
            let open = "<!-- options: \(spec.name) -->\n", close = "<!-- /options: \(spec.name) -->"
            guard let start = updated.range(of: open), let end = updated.range(of: close, range: start.upperBound..<updated.endIndex) else {
                XCTFail("README.md has no \(open)…\(close) section")
                continue
            }
            updated.replaceSubrange(start.upperBound..<end.lowerBound, with: Help.markdownTable(for: spec) + "\n")
        }
        if ProcessInfo.processInfo.environment["PROVISION_RECORD_GOLDENS"] == "1", updated != text {
            try updated.write(to: readme, atomically: true, encoding: .utf8)
            XCTFail("README.md's option tables were recorded; run the tests again")
            return
        }
        XCTAssertEqual(text, updated, "README.md's option tables differ from the declarations; "
                       + "record them with PROVISION_RECORD_GOLDENS=1")
    }
}
