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
        // Read before anything is planned: a key that cannot sign fails the apply before it downloads.
        run.signingKey = try arguments.signKey.map { path throws(ProvisionError) in
            try LockSignature.signingKey(path: path, flag: "--sign-key")
        }
        run.shouldStop = { stops.isStopping }
        run.stopSignal = { stops.receivedSignal.map(StopSignals.name) }
        var result = try run.run()
        result.report.reportPath = arguments.report
        if let path = arguments.report {
            do {
                try AtomicFile.write(result.report.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: path))
            } catch {
                throw ProvisionError(.cannotWriteStore, "cannot write the report to \(path): \(describe(error))", cause: error)
            }
        }
        view.show { $0.apply(result.report) }
        let signal = stops.receivedSignal.map { (number: $0, name: StopSignals.name($0)) }
        guard let failure = result.failure(signal: signal, reportPath: reportPath) else { return .success }
        progress.error(failure.error, lines: failure.lines)
        return failure.error.kind
    }

    /// Where the JSON report is: `--report`'s file, or stdout under `--json`; nil when none is written.
    private var reportPath: String? {
        arguments.report ?? view.results.reportOnStdout
    }
}
