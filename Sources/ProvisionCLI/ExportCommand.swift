import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionExport
import ProvisionModel

/// `provision export`: the store's tiles as MBTiles, PMTiles, an offline bundle, or a patch for devices.
struct ExportCommand {
    let arguments: ExportArguments
    let view: CommandView

    func run() throws(ProvisionError) -> ExitCode {
        let result = try ExportRun(store: arguments.store, format: arguments.format, region: arguments.region, source: arguments.source,
                                   out: arguments.out, since: arguments.since, progress: view.progress).run()
        view.show { $0.export(result) }
        return .success
    }
}
