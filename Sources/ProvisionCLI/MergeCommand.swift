import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports

/// `provision merge STORE… --store OUT`: joins the stores of a sharded apply; `provision merge
/// DEVICE.db… --store OUT`: takes offline databases into an existing store, as devices do.
struct MergeCommand {
    let arguments: MergeArguments
    let console: Console
    let progress: ProgressReporter

    func run() throws(ProvisionError) -> ExitCode {
        let json = arguments.options.format == .json
        if try SideLoadRun.namesSideDatabases(arguments.stores) {
            let result = try SideLoadRun(databases: arguments.stores, output: arguments.store, progress: progress).run()
            progress.finish()
            console.out(json ? result.json.serialized(.prettySorted) + "\n" : result.text)
            return .success
        }
        let result = try MergeRun(stores: arguments.stores, output: arguments.store, progress: progress).run()
        progress.finish()
        console.out(json ? result.lock.json.serialized(.prettySorted) + "\n" : result.text)
        return .success
    }
}
