import Foundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision apply JOB|PLAN`: plans (or loads a saved plan), then brings the store to it.
struct ApplyCommand {
    let arguments: ApplyArguments
    let console: Console
    let progress: ProgressReporter
    let context: RunContext

    func run() throws(ProvisionError) -> ExitCode {
        if let path = arguments.report { try checkWritableOutput(path, flag: "--report") }
        var request = ApplyRun.Request(job: arguments.job, store: arguments.store, refresh: arguments.refresh,
                                       repair: arguments.repair)
        request.outputs = arguments.report.map { [("--report", $0)] } ?? []
        request.shard = try RunEnvironment.shard(arguments.shard, environment: context.environment)
        let stops = StopSignals { [progress] number in
            progress.event("stopping", JSONObject([("signal", .int(Int(number)))]),
                           text: "\nStopping: finishing the downloads in flight and committing them (signal again to quit now)")
        }
        var run = ApplyRun(request: request, context: context, progress: progress)
        run.shouldStop = { stops.isStopping }
        let result = try run.run()
        if let path = arguments.report {
            do {
                try AtomicFile.write(result.report.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: path))
            } catch {
                throw ProvisionError(.cannotWrite, "cannot write the report to \(path): \(describe(error))")
            }
        }
        console.out(arguments.options.format == .json ? result.report.json.serialized(.prettySorted) + "\n" : result.report.text)
        if let number = stops.receivedSignal { return number == SIGTERM ? .terminated : .interrupted }
        let outcome = result.outcome
        if let stop = outcome.stopMessage, outcome.stopIsTemporary {
            progress.error(ProvisionError(.partial, "\(stop); what was verified before is kept: run apply again to "
                                          + "read the archive anew"), lines: Self.failureLines(outcome))
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
                           lines: Self.failureLines(outcome))
            return .partial
        }
        return .success
    }

    /// The stderr lines of a partial apply: which URLs failed and why (the first ten), so a CI
    /// log shows them without the report; says how many more the JSON report holds.
    static func failureLines(_ outcome: ApplyOutcome) -> [String] {
        let shown = outcome.failures.prefix(10)
        var lines = shown.map { "\($0.url): \($0.reason)" }
        if outcome.failed > shown.count {
            let more = outcome.failed - shown.count
            let listed = outcome.failures.count - shown.count
            lines.append(listed > 0 ? "… and \(grouped(more)) more (\(grouped(listed)) of them in the JSON report)" : "… and \(grouped(more)) more")
        }
        return lines
    }
}
