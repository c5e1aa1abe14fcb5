import Foundation
import ProvisionModel

/// Shows progress on stderr: a live line on a terminal, a plain line every few seconds
/// otherwise, NDJSON events with `--progress json`, nothing with `--quiet`.
final class ProgressReporter: @unchecked Sendable {
    private let console: Console
    private let mode: ProgressMode
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var drewLive = false
    private var drewFinal = false

    init(console: Console, mode: ProgressMode) {
        self.console = console
        self.mode = mode
    }

    /// A named event with fields (NDJSON mode) or a log line (text mode).
    func event(_ name: String, _ fields: JSONObject = JSONObject(), text: String? = nil) {
        switch mode {
        case .none: return
        case .json:
            var object = JSONObject([("event", .string(name)), ("elapsed", .double((elapsed * 1000).rounded() / 1000))])
            for (k, v) in fields.members { object[k] = v }
            console.err(JSONValue.object(object).serialized(.compact) + "\n")
        case .auto:
            if let text {
                clearLive()
                console.err(text + "\n")
            }
        }
    }

    /// Download progress; throttled.
    func downloads(done: Int, total: Int, bytes: Int64, failed: Int) {
        let now = Date()
        let interval: TimeInterval = mode == .auto && console.stderrIsTerminal ? 0.1 : 2
        guard now.timeIntervalSince(lastDraw) >= interval || (done == total && !drewFinal) else { return }
        if done == total { drewFinal = true }
        lastDraw = now
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        switch mode {
        case .none: return
        case .json:
            event("progress", JSONObject([("done", .int(done)), ("total", .int(total)), ("bytes", .int(Int(bytes))),
                                          ("failed", .int(failed)), ("rate", .double((rate * 10).rounded() / 10))]))
        case .auto:
            let percent = total > 0 ? done * 100 / total : 100
            var line = "downloading \(done)/\(total) (\(percent)%) \(formatBytes(bytes)) \(Int(rate))/s"
            if failed > 0 { line += " \(failed) failed" }
            if rate > 0 && done < total { line += " eta \(Int(Double(total - done) / rate))s" }
            if console.stderrIsTerminal {
                let width = 24
                let filled = total > 0 ? width * done / total : width
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                console.err("\r\u{1B}[K\(bar) \(line)")
                drewLive = true
            } else {
                console.err(line + "\n")
            }
        }
    }

    /// Ends a live line so the next output starts on a fresh line.
    func finish() { clearLive() }

    private func clearLive() {
        if drewLive {
            console.err("\r\u{1B}[K")
            drewLive = false
        }
    }

    private var elapsed: Double { Date().timeIntervalSince(started) }

    private func formatBytes(_ b: Int64) -> String {
        let mib = Double(b) / 1_048_576
        return mib >= 1 ? String(format: "%.1f MiB", mib) : String(format: "%.0f KiB", Double(b) / 1024)
    }
}
