import Dispatch
import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

/// Shows progress on stderr in the mode `--progress` chose: a live bar that fits the terminal
/// (`tty`), a line every few seconds (`plain`), one NDJSON event a line (`json`, errors and
/// failed downloads included, documented in `Jobs/schema/events.schema.json`), or nothing.
/// Each event is rendered by the view the mode chose once: `HumanView` or `JSONView`.
///
/// Called from the command's thread, the download thread and the signal queue: all its state
/// sits behind one lock, and every write to stderr happens under it, so lines never interleave.
final class ProgressReporter: ProgressSink {
    /// How the reporter draws, resolved from the mode and the terminal.
    enum Style: Equatable, Sendable {
        case none, json, plain
        case tty(color: Bool)
    }

    private struct State {
        var lastDraw: Double = -.infinity
        var drewLive = false
        var drewFinal = false
        var width: Int
    }

    private let console: Console
    let style: Style
    private let clock: @Sendable () -> Double
    private let started: Double
    private let state: Mutex<State>
    /// The SIGWINCH source of a live bar (behind a lock: sources are not Sendable).
    private let resize = Mutex<DispatchSourceSignal?>(nil)

    /// A reporter for `mode`; `environment` gives `COLUMNS` and `NO_COLOR`, `clock` monotonic
    /// seconds (injected by tests).
    init(console: Console, mode: ProgressMode, environment: [String: String] = [:],
         clock: @escaping @Sendable () -> Double = ProgressReporter.monotonicSeconds) {
        self.console = console
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        switch mode {
        case .none: style = .none
        case .json: style = .json
        case .plain: style = .plain
        case .tty: style = .tty(color: !noColor)
        case .auto: style = console.stderrIsTerminal ? .tty(color: !noColor) : .plain
        }
        self.clock = clock
        started = clock()
        let columns = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
        state = Mutex(State(width: columns ?? console.stderrColumns ?? 80))
        if case .tty = style, columns == nil, console.stderrIsTerminal {
            // SIGWINCH: the terminal was resized; the next redraw fits the new width.
            signal(SIGWINCH, SIG_IGN)
            resize.withLock { [state, console] slot in
                let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
                source.setEventHandler {
                    if let width = console.stderrColumns { state.withLock { $0.width = width } }
                }
                source.resume()
                slot = source
            }
        }
    }

    deinit { resize.withLock { $0?.cancel() } }

    /// Monotonic seconds since an arbitrary start.
    @Sendable static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// An event, as the mode shows it: an NDJSON line (`JSONView`), or in the text modes the line
    /// `HumanView` gives it, if any. Download progress is throttled (`downloads`).
    func emit(_ event: ProvisionEvent) {
        if case .downloads(let done, let total, let bytes, let failed) = event {
            return downloads(done: done, total: total, bytes: bytes, failed: failed)
        }
        let elapsed = clock() - started
        let (name, fields) = JSONView.event(event, elapsed: elapsed)
        self.event(name, fields, text: HumanView.line(event, elapsed: elapsed))
    }

    /// A named event with fields (NDJSON mode) or a log line (`text`, in the other modes).
    func event(_ name: String, _ fields: JSONObject, text: String? = nil) {
        state.withLock { state in
            switch style {
            case .none: return
            case .json: writeEvent(name, fields)
            case .plain, .tty:
                guard let text else { return }
                clearLive(&state)
                console.err(text + "\n")
            }
        }
    }

    /// A download that failed for good: an event in NDJSON mode (the text modes list failures
    /// once the apply ends).
    func failure(url: String, reason: String) {
        emit(.failure(url: url, reason: reason))
    }

    /// An error: the `error` event in NDJSON mode (the stream's last), else `error: …` on
    /// stderr with `lines` (failed URLs) and the diagnostics indented below, in every other
    /// mode, `none` included.
    func error(_ error: ProvisionError, lines: [String] = [], verbose: Bool = false) {
        state.withLock { state in
            guard style != .json else {
                let (name, fields) = JSONView.error(error)
                writeEvent(name, fields)
                return
            }
            clearLive(&state)
            console.err(HumanView.error(error, lines: lines, verbose: verbose))
        }
    }

    /// The error that ends the NDJSON stream of a command whose result already told people what
    /// failed (the text modes print nothing more).
    func closingError(_ error: ProvisionError) {
        guard style == .json else { return }
        self.error(error)
    }

    /// Lines for stderr that only the text modes show (`none` included: they are errors); NDJSON
    /// carries the same as events.
    func errorLines(_ text: String) {
        guard style != .json else { return }
        state.withLock { state in
            clearLive(&state)
            console.err(text)
        }
    }

    /// Download progress; throttled (every 0.1 s on a live bar, every 2 s otherwise), the last
    /// step always shown.
    func downloads(done: Int, total: Int, bytes: Int64, failed: Int) {
        state.withLock { state in
            let now = clock()
            let interval: Double = { if case .tty = style { return 0.1 } else { return 2 } }()
            let last = done == total && !state.drewFinal
            guard now - state.lastDraw >= interval || last else { return }
            if last { state.drewFinal = true }
            state.lastDraw = now
            let elapsed = now - started
            let event = ProvisionEvent.downloads(done: done, total: total, bytes: bytes, failed: failed)
            switch style {
            case .none: return
            case .json:
                let (name, fields) = JSONView.event(event, elapsed: elapsed)
                writeEvent(name, fields)
            case .plain:
                console.err((HumanView.line(event, elapsed: elapsed) ?? "") + "\n")
            case .tty(let color):
                let rate = Self.rate(done: done, elapsed: elapsed)
                let fields = Self.progressFields(done: done, total: total, bytes: bytes, failed: failed, rate: rate)
                console.err("\r\u{1B}[K" + Self.liveLine(fields, done: done, total: total, width: state.width, color: color))
                state.drewLive = true
            }
        }
    }

    /// Ends a live line so the next output starts on a fresh line.
    func finish() {
        state.withLock { clearLive(&$0) }
    }

    /// Downloads a second over `elapsed` seconds (0 before any time passed).
    static func rate(done: Int, elapsed: Double) -> Double {
        elapsed > 0 ? Double(done) / elapsed : 0
    }

    /// `downloading 295/1,573 (18%) 4.2 MiB 980/s 3 failed eta 1s`.
    static func progressText(done: Int, total: Int, bytes: Int64, failed: Int, rate: Double) -> String {
        progressFields(done: done, total: total, bytes: bytes, failed: failed, rate: rate).joined(separator: " ")
    }

    /// The progress line's fields, most important first: each a whole unit (a number with its
    /// unit), so a line that must be shortened drops fields from the right and never cuts a number.
    static func progressFields(done: Int, total: Int, bytes: Int64, failed: Int, rate: Double) -> [String] {
        let percent = total > 0 ? done * 100 / total : 100
        var fields = ["downloading", "\(grouped(done))/\(grouped(total))", "(\(percent)%)", ByteFormat.string(bytes),
                      TextFormat.rate(rate)]
        if failed > 0 { fields.append("\(grouped(failed)) failed") }
        if rate > 0 && done < total {
            fields.append("eta " + TextFormat.duration(seconds: Int((Double(total - done) / rate).rounded(.up))))
        }
        return fields
    }

    /// The live line: a bar and the fields, in at most `width - 1` columns (so the cursor never
    /// wraps to a new line); the bar shrinks first (and goes below 5 cells), then whole fields
    /// are dropped from the right.
    static func liveLine(_ fields: [String], done: Int, total: Int, width: Int, color: Bool) -> String {
        let room = max(1, width - 1)
        var shown = fields
        var text = shown.joined(separator: " ")
        while text.count > room && !shown.isEmpty {
            shown.removeLast()
            text = shown.joined(separator: " ")
        }
        let barWidth = min(24, room - text.count - 1)
        guard barWidth >= 5 else { return text }
        let filled = total > 0 ? barWidth * min(done, total) / total : barWidth
        let bar = String(repeating: "█", count: filled), rest = String(repeating: "░", count: barWidth - filled)
        return (color ? "\u{1B}[32m\(bar)\u{1B}[0m" : bar) + rest + " " + text
    }

    private func writeEvent(_ name: String, _ fields: JSONObject) {
        console.err(JSONView.line(name, fields, elapsed: clock() - started))
    }

    private func clearLive(_ state: inout State) {
        if state.drewLive {
            console.err("\r\u{1B}[K")
            state.drewLive = false
        }
    }
}
