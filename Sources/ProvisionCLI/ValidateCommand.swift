import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

/// `provision validate JOB…`: reports every problem of every job file.
struct ValidateCommand {
    let arguments: ValidateArguments
    let console: Console
    let progress: ProgressReporter
    private var jobs: [String] { arguments.jobs }
    private var options: CommonOptions { arguments.options }

    func run() throws(ProvisionError) -> ExitCode {
        var worst = ExitCode.success
        var files: [JSONValue] = []
        var failed: [String] = []
        var problems: [Diagnostic] = []
        var text = ""
        for argument in jobs {
            let path = argument == JobLoader.standardInputArgument ? JobLoader.standardInputName : argument
            switch JobLoader.load(argument: argument) {
            case .success(let job):
                text += "\(path): valid (\(plural(job.regions.count, "region")), \(plural(job.stylePacks.count, "style pack")))\n"
                files.append(["file": .string(path), "valid": true, "problems": []])
            case .invalid(let diagnostics):
                failed.append(path)
                problems += diagnostics
                // A job whose only problems are files it names that do not exist (an origin
                // archive) is missing input, as the job file itself would be.
                let missing = diagnostics.allSatisfy(\.isMissingFile)
                if worst == .success || (missing && worst == .invalidJob) { worst = missing ? .missingInput : .invalidJob }
                text += "\(path): \(plural(diagnostics.count, "problem"))\n"
                text += diagnostics.map { "  \($0)\n" }.joined()
                files.append(["file": .string(path), "valid": false, "problems": .array(diagnostics.map(diagnosticJSON))])
            case .unreadable(let where_, let reason):
                failed.append(path)
                worst = .missingInput
                text += "\(path): cannot read \(where_): \(reason)\n"
                files.append(["file": .string(path), "valid": false, "unreadable": .string(reason), "problems": []])
            }
        }
        progress.event("validate-finished", JSONObject([("valid", .bool(worst == .success)), ("files", .array(files))]))
        if options.format == .json {
            let doc: JSONValue = ["schemaVersion": 1, "kind": "validation", "valid": .bool(worst == .success),
                                  "files": .array(files)]
            console.out(doc.serialized(.prettySorted) + "\n")
        } else if worst == .success {
            if options.progress != .none { console.out(text) }
        } else {
            progress.errorLines(text)
        }
        if worst != .success, progress.style == .json {
            // The NDJSON stream of a failing command ends with an `error` event.
            let message = jobs.count == 1 ? "\(failed.joined()) is not a valid job file"
                : "\(failed.count) of \(jobs.count) job files are not valid: \(failed.joined(separator: ", "))"
            progress.error(ProvisionError(worst == .missingInput ? .missingInput : .invalidJob, message, diagnostics: problems))
        }
        return worst
    }
}
