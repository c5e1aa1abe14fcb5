import Foundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports

/// `provision merge STORE… --store OUT`: joins the stores of a sharded apply.
struct MergeCommand {
    let arguments: MergeArguments
    let console: Console
    let progress: ProgressReporter

    func run() throws(ProvisionError) -> ExitCode {
        let result = try MergeRun(stores: arguments.stores, output: arguments.store, progress: progress).run()
        progress.finish()
        console.out(arguments.options.format == .json ? result.lock.json.serialized(.prettySorted) + "\n" : result.text)
        return .success
    }
}
