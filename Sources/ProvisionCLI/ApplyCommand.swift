import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision apply JOB|PLAN`: plans (or loads a saved plan), then brings the store to it.
struct ApplyCommand {
    let arguments: ApplyArguments
    let view: CommandView
    let context: RunContext

    func run() throws(ProvisionError) -> ExitCode {
        if let path = arguments.report { try checkWritableOutput(path, flag: "--report") }
        let request = try arguments.run.request(outputs: arguments.outputs, environment: context.environment)
        let progress = view.progress
        let stops = StopSignals { number in progress.emit(.stopping(signal: number)) }
        var run = ApplyRun(request: request, context: context, progress: progress)
        run.shouldStop = { stops.isStopping }
        run.stopSignal = { stops.receivedSignal.map(StopSignals.name) }
        var result = try run.run()
        result.report.reportPath = arguments.report
        if let path = arguments.report {
            do {
                try AtomicFile.write(result.report.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: path))
            } catch {
                throw ProvisionError(.cannotWrite, "cannot write the report to \(path): \(describe(error))")
            }
        }
        view.show { $0.apply(result.report) }
        let outcome = result.outcome
        if let number = stops.receivedSignal {
            // The stream ends with an error event like any other failure; the report says `stopped`.
            let left = outcome.notAttempted > 0 ? ", \(plural(outcome.notAttempted, "planned download")) not attempted" : ""
            progress.error(ProvisionError(number == SIGTERM ? .terminated : .interrupted,
                                          "stopped by \(StopSignals.name(number)) after committing what arrived\(left); "
                                          + "run apply again to resume"))
            return number == SIGTERM ? .terminated : .interrupted
        }
        if let stop = outcome.stopMessage, outcome.stopIsTemporary {
            progress.error(ProvisionError(.partial, "\(stop); what was verified before is kept: run apply again to "
                                          + "read the archive anew"), lines: Self.failureLines(outcome, report: reportPath))
            return .partial
        }
        if let stop = outcome.stopMessage {
            let packs = result.refusedPacks
            let names = packs.map { "'\($0)'" }.joined(separator: ", ")
            let subject = packs.isEmpty ? "" : " (\(packs.count == 1 ? "style pack" : "style packs") \(names))"
            progress.error(ProvisionError(.upstreamUnavailable, "\(stop)\(subject); what was verified before is kept"))
            return .upstreamUnavailable
        }
        if !outcome.isComplete {
            let message = outcome.failed > 0 ? "\(plural(outcome.failed, "download")) failed; run apply again to retry them"
                : "the apply stopped before every download; run apply again"
            progress.error(ProvisionError(.partial, message),
                           lines: Self.failureLines(outcome, report: reportPath))
            return .partial
        }
        return .success
    }

    /// Where the JSON report is: `--report`'s file, or stdout under `--json`; nil when none is written.
    private var reportPath: String? {
        arguments.report ?? view.results.reportOnStdout
    }

    /// The stderr lines of a partial apply: which URLs failed and why (the first ten), so a CI
    /// log shows them without the report; says how many more the JSON report holds, naming the
    /// report `report` (`--report`'s file, "on stdout"), or how to get one when none is written.
    static func failureLines(_ outcome: ApplyOutcome, report: String?) -> [String] {
        let shown = outcome.failures.prefix(10)
        var lines = shown.map { "\($0.url): \($0.reason)" }
        if outcome.failed > shown.count {
            let more = outcome.failed - shown.count
            let listed = outcome.failures.count - shown.count
            lines.append(listed > 0 ? "… and \(grouped(more)) more (\(ApplyReport.reportPointer(report)) lists \(grouped(listed)) of them)"
                : "… and \(grouped(more)) more")
        }
        return lines
    }
}
