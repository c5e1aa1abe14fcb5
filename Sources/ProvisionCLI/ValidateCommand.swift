import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

/// `provision validate JOB…`: reports every problem of every job file.
struct ValidateCommand {
    let arguments: ValidateArguments
    let view: CommandView
    private var jobs: [String] { arguments.jobs }

    func run() throws(ProvisionError) -> ExitCode {
        let checks = jobs.map(JobCheck.init(argument:))
        view.progress.emit(.validateFinished(checks))
        view.show(validation: checks)
        let worst = Self.exitCode(checks)
        if worst != .success {
            // The NDJSON stream of a failing command ends with an `error` event.
            let failed = checks.filter { !$0.isValid }.map(\.path)
            let message = jobs.count == 1 ? "\(failed.joined()) is not a valid job file"
                : "\(failed.count) of \(jobs.count) job files are not valid: \(failed.joined(separator: ", "))"
            let problems = checks.flatMap { check -> [Diagnostic] in
                if case .invalid(let diagnostics) = check.outcome { return diagnostics }
                return []
            }
            view.progress.closingError(ProvisionError(worst, message, diagnostics: problems))
        }
        return worst
    }

    /// 66 when a file cannot be read, or when its only problems are files it names that do not
    /// exist (an origin archive: missing input, as the job file itself would be); else 65 when
    /// one is invalid; else 0.
    static func exitCode(_ checks: [JobCheck]) -> ExitCode {
        var worst = ExitCode.success
        for check in checks {
            switch check.outcome {
            case .valid: break
            case .invalid(let diagnostics):
                let missing = diagnostics.allSatisfy(\.isMissingFile)
                if worst == .success || (missing && worst == .invalidJob) { worst = missing ? .missingInput : .invalidJob }
            case .unreadable: worst = .missingInput
            }
        }
        return worst
    }
}
