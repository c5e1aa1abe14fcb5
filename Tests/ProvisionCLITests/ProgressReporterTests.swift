import Foundation
import ProvisionFoundation
@testable import ProvisionCLI
import ProvisionEngine
import ProvisionModel
import XCTest

/// What stderr carries in each progress mode, with a manual clock.
final class ProgressReporterTests: XCTestCase {
    /// Captures what a console writes.
    final class Capture: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        func append(_ more: String) { lock.lock(); text += more; lock.unlock() }
        var value: String { lock.lock(); defer { lock.unlock() }; return text }
    }

    /// A clock the test moves.
    final class ManualClock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds = 100.0
        func advance(_ by: Double) { lock.lock(); seconds += by; lock.unlock() }
        var now: Double { lock.lock(); defer { lock.unlock() }; return seconds }
    }

    private func reporter(_ mode: ProgressMode, terminal: Bool = false, environment: [String: String] = [:],
                          clock: ManualClock = ManualClock()) -> (ProgressReporter, Capture) {
        let err = Capture()
        let console = Console(out: { _ in }, err: { err.append($0) }, stderrIsTerminal: terminal, columns: { 50 })
        return (ProgressReporter(console: console, mode: mode, environment: environment, clock: { clock.now }), err)
    }

    func testJSONIsACompleteStreamOfEvents() throws {
        let clock = ManualClock()
        let (progress, err) = reporter(.json, clock: clock)
        progress.event("plan-started", JSONObject([("job", .string("j.json"))]), text: "Planning")
        clock.advance(1.5)
        progress.downloads(done: 1, total: 3, bytes: 10, failed: 0)
        progress.failure(url: "https://x/1/2/3.pbf", reason: "HTTP 500")
        progress.downloads(done: 3, total: 3, bytes: 30, failed: 1)
        progress.error(ProvisionError(.partial, "1 download failed", diagnostics: [Diagnostic(file: "j.json", pointer: "/regions/0", message: "m")]))
        let lines = err.value.split(separator: "\n").map(String.init)
        let events = try lines.map { try JSONValue.parse(Data($0.utf8)) }
        XCTAssertEqual(events.map { $0["event"]?.stringValue }, ["plan-started", "progress", "failure", "progress", "error"])
        XCTAssertEqual(events[1]["elapsed"], .double(1.5))
        XCTAssertEqual(events[2]["url"], "https://x/1/2/3.pbf")
        XCTAssertEqual(events[2]["reason"], "HTTP 500")
        XCTAssertEqual(events[4]["exitCode"], .int(75))
        XCTAssertEqual(events[4]["code"], "partial")
        XCTAssertEqual(events[4]["message"], "1 download failed")
        XCTAssertEqual(events[4]["diagnostics"]?.arrayValue?.first?["pointer"], "/regions/0")
    }

    func testTextModesPrintErrorsAndLinesButNoEvents() {
        for mode in [ProgressMode.plain, .tty, .none] {
            let (progress, err) = reporter(mode)
            progress.failure(url: "u", reason: "r")
            progress.error(ProvisionError(.usage, "bad"))
            progress.errorLines("  u: r\n")
            progress.error(ProvisionError(.partial, "1 download failed"), lines: ["u: HTTP 500"])
            XCTAssertEqual(err.value, "error: bad\n  u: r\nerror: 1 download failed:\n  u: HTTP 500\n", "\(mode)")
        }
        let (json, err) = reporter(.json)
        json.errorLines("  u: r\n")
        XCTAssertEqual(err.value, "", "NDJSON carries failures as events only")
    }

    private struct DiskError: Error, CustomStringConvertible {
        var description: String { "/s/offline.db: no space" }
    }

    func testVerbosePrintsTheCauseChainRedacted() {
        let cause = ProvisionError(.failure, "cannot fetch https://t.test/a?access_token=at-SECRET",
                                   cause: DiskError())
        let error = ProvisionError(.cannotWriteStore, "cannot write the store", cause: cause)
        let (quiet, quietErr) = reporter(.plain)
        quiet.error(error)
        XCTAssertEqual(quietErr.value, "error: cannot write the store\n", "without --verbose, no cause")
        let (verbose, err) = reporter(.plain)
        verbose.error(error, verbose: true)
        XCTAssertEqual(err.value, "error: cannot write the store\n"
                       + "  caused by: cannot fetch https://t.test/a?access_token=REDACTED\n"
                       + "  caused by: /s/offline.db: no space\n")
    }

    func testPlainLinesAreThrottledByTheClockAndTheLastIsAlwaysShown() {
        let clock = ManualClock()
        let (progress, err) = reporter(.plain, clock: clock)
        progress.downloads(done: 1, total: 10, bytes: 0, failed: 0)
        clock.advance(1)
        progress.downloads(done: 2, total: 10, bytes: 0, failed: 0)  // within 2 s: not shown
        clock.advance(1.5)
        progress.downloads(done: 5, total: 10, bytes: 0, failed: 0)
        progress.downloads(done: 10, total: 10, bytes: 0, failed: 0)  // the last: shown at once
        progress.downloads(done: 10, total: 10, bytes: 0, failed: 0)  // and once only
        let lines = err.value.split(separator: "\n")
        XCTAssertEqual(lines.map { $0.split(separator: " ")[1] }, ["1/10", "5/10", "10/10"], err.value)
        XCTAssertFalse(err.value.contains("\u{1B}"), "plain lines carry no escapes")
    }

    func testLiveLineFitsEveryWidth() {
        for width in 1...160 {
            for color in [false, true] {
                let fields = ProgressReporter.progressFields(done: 295, total: 1573, bytes: 5_000_000, failed: 2, rate: 120)
                let text = fields.joined(separator: " ")
                let line = ProgressReporter.liveLine(fields, done: 295, total: 1573, width: width, color: color)
                let visible = line.replacingOccurrences(of: "\u{1B}[32m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
                XCTAssertLessThanOrEqual(visible.count, max(1, width - 1), "width \(width): \(visible)")
                if width >= 100 { XCTAssertTrue(visible.hasSuffix(text), visible) }
            }
        }
    }

    /// The live line never cuts inside a number: at any width it shows whole fields of the full
    /// line from the left (whole numbers, grouped, each unit beside its number) and drops the
    /// fields that do not fit from the right.
    func testNarrowLiveLineDropsWholeFieldsFromTheRight() {
        let cases: [(done: Int, total: Int, bytes: Int64, failed: Int, rate: Double)] = [
            (1, 1_573, 57_344, 0, 3), (295, 1_573, 5_000_000, 2, 120), (1_287, 1_573, 537_600, 0, 15_613.4),
            (1_573, 1_573, 623_411, 0, 15_613), (12_345, 213_711, 1_300_000_000, 17, 16_618),
        ]
        for c in cases {
            let fields = ProgressReporter.progressFields(done: c.done, total: c.total, bytes: c.bytes, failed: c.failed, rate: c.rate)
            let full = fields.joined(separator: " ")
            XCTAssertNil(full.range(of: #"\d{5,}"#, options: .regularExpression), "ungrouped number in \(full)")
            XCTAssertEqual(full, ProgressReporter.progressText(done: c.done, total: c.total, bytes: c.bytes, failed: c.failed, rate: c.rate))
            let prefixes = Set((0...fields.count).map { fields.prefix($0).joined(separator: " ") })
            for width in [1, 10, 20, 30, 40, 45, 50, 60, 80, 120] {
                for color in [false, true] {
                    let line = ProgressReporter.liveLine(fields, done: c.done, total: c.total, width: width, color: color)
                    let visible = line.replacingOccurrences(of: "\u{1B}[32m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
                    XCTAssertLessThanOrEqual(visible.count, max(1, width - 1), "width \(width): \(visible)")
                    let text = String(visible.drop { $0 == "█" || $0 == "░" }).trimmingCharacters(in: .whitespaces)
                    XCTAssertTrue(prefixes.contains(text), "COLUMNS=\(width) cut inside a field: '\(visible)' of '\(full)'")
                }
            }
        }
        // The issue's case: COLUMNS=40 at 15,613/s shows the rate whole or not at all, and never a bare "eta".
        let fields = ProgressReporter.progressFields(done: 1_287, total: 1_573, bytes: 537_600, failed: 0, rate: 15_613)
        let line = ProgressReporter.liveLine(fields, done: 1_287, total: 1_573, width: 40, color: false)
        XCTAssertFalse(line.hasSuffix("eta"), line)
        XCTAssertFalse(line.contains("/s") && !line.contains("15,613/s"), line)
        XCTAssertTrue(line.contains("1,287/1,573"), line)
    }

    func testTTYHonoursColumnsAndNoColor() {
        let (colored, err) = reporter(.tty, environment: ["COLUMNS": "60"])
        colored.downloads(done: 10, total: 10, bytes: 0, failed: 0)
        XCTAssertTrue(err.value.contains("\u{1B}[32m"), err.value)
        let drawn = err.value.replacingOccurrences(of: "\r\u{1B}[K", with: "")
            .replacingOccurrences(of: "\u{1B}[32m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        XCTAssertLessThanOrEqual(drawn.count, 59, drawn)

        let (plain, err2) = reporter(.tty, environment: ["NO_COLOR": "1"])
        plain.downloads(done: 10, total: 10, bytes: 0, failed: 0)
        plain.finish()
        XCTAssertFalse(err2.value.contains("\u{1B}[32m"), err2.value)
        XCTAssertTrue(err2.value.hasSuffix("\r\u{1B}[K"), "finish clears the live line")
        XCTAssertEqual(plain.style, .tty(color: false))
        XCTAssertEqual(reporter(.auto, terminal: true).0.style, .tty(color: true))
        XCTAssertEqual(reporter(.auto, terminal: false).0.style, .plain)
    }

    func testConcurrentCallersNeverInterleaveLines() throws {
        let (progress, err) = reporter(.json)
        DispatchQueue.concurrentPerform(iterations: 2_000) { i in
            switch i % 3 {
            case 0: progress.downloads(done: i, total: 2_000, bytes: 0, failed: 0)
            case 1: progress.failure(url: "https://x/\(i)", reason: "r")
            default: progress.event("phase", JSONObject([("phase", .string("p\(i)"))]))
            }
        }
        for line in err.value.split(separator: "\n") {
            XCTAssertNoThrow(try JSONValue.parse(Data(line.utf8)), String(line))
        }
        XCTAssertEqual(err.value.split(separator: "\n").filter { $0.contains("\"failure\"") }.count, 667)
    }
}
