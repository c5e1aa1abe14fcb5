import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports

/// `provision merge STORE… --store OUT`: joins the stores of a sharded apply; `provision merge
/// DEVICE.db… --store OUT`: takes offline databases into an existing store, as devices do.
struct MergeCommand {
    let arguments: MergeArguments
    let view: CommandView

    func run() throws(ProvisionError) -> ExitCode {
        if try SideLoadRun.namesSideDatabases(arguments.stores) {
            let result = try SideLoadRun(databases: arguments.stores, output: arguments.store, progress: view.progress).run()
            view.show { $0.sideLoad(result) }
            return .success
        }
        let result = try MergeRun(stores: arguments.stores, output: arguments.store, progress: view.progress).run()
        view.show { $0.merge(result) }
        return .success
    }
}
