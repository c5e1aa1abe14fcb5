import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionExport
import ProvisionModel

/// `provision export`: the store's tiles as MBTiles, PMTiles or an offline bundle.
struct ExportCommand {
    let arguments: ExportArguments
    let console: Console
    let progress: ProgressReporter

    func run() throws(ProvisionError) -> ExitCode {
        let result = try ExportRun(store: arguments.store, format: arguments.format, region: arguments.region, source: arguments.source,
                                   out: arguments.out, progress: progress).run()
        progress.finish()
        console.out(arguments.options.format == .json ? result.json.serialized(.prettySorted) + "\n" : result.text)
        return .success
    }
}
