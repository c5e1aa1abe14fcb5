import Foundation
import XCTest

/// The directory of the golden files: `Tests/ProvisionReportsTests/Goldens/`, found from this
/// file's path so that no resource bundle is needed.
let goldensDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens")

/// Whether this run rewrites golden files instead of comparing with them.
var isRecordingGoldens: Bool { ProcessInfo.processInfo.environment["PROVISION_RECORD_GOLDENS"] == "1" }

/// What comparing a rendering with its golden file found.
enum GoldenResult: Equatable {
    /// The file holds exactly the rendering.
    case matches
    /// The file was (re)written with the rendering: the test fails so the run is never green.
    case recorded(String)
    /// No file yet.
    case missing(String)
    /// The file differs; the message shows the first differing line.
    case differs(String)

    /// The failure message, or nil when the rendering matches.
    var failure: String? {
        switch self {
        case .matches: return nil
        case .recorded(let message), .missing(let message), .differs(let message): return message
        }
    }
}

/// Compares `actual` with the golden file `url`, or rewrites it when `record` is set.
func checkGolden(_ actual: String, at url: URL, record: Bool) -> GoldenResult {
    let name = url.lastPathComponent
    if record {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url, options: .atomic)
        } catch {
            return .differs("cannot record \(name): \(error)")
        }
        return .recorded("recorded \(name); run again without PROVISION_RECORD_GOLDENS=1 and review the diff")
    }
    guard let data = FileManager.default.contents(atPath: url.path) else {
        return .missing("no golden file \(name): run with PROVISION_RECORD_GOLDENS=1 to record it")
    }
    let expected = String(decoding: data, as: UTF8.self)
    guard expected != actual else { return .matches }
    let expectedLines = expected.components(separatedBy: "\n"), actualLines = actual.components(separatedBy: "\n")
    let index = zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(expectedLines.count, actualLines.count)
    func line(_ lines: [String]) -> String { index < lines.count ? "'\(lines[index])'" : "(end of text)" }
    return .differs("\(name) differs at line \(index + 1):\n  golden: \(line(expectedLines))\n  actual: \(line(actualLines))\n"
                    + "(PROVISION_RECORD_GOLDENS=1 rewrites the golden files)")
}

/// Asserts that `actual` equals the golden file `Goldens/<name>`; with
/// `PROVISION_RECORD_GOLDENS=1` in the environment, rewrites the file and fails, so that a
/// re-record is reviewed and then passes on the next run, never silently green.
func assertGolden(_ actual: String, named name: String, file: StaticString = #filePath, line: UInt = #line) {
    let result = checkGolden(actual, at: goldensDirectory.appendingPathComponent(name), record: isRecordingGoldens)
    if let failure = result.failure { XCTFail(failure, file: file, line: line) }
}
