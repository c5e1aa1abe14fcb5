import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

/// `provision export`: the store's tiles as MBTiles, PMTiles or an offline bundle.
struct ExportCommand {
    let arguments: ExportArguments
    let view: CommandView

    func run() throws(ProvisionError) -> ExitCode {
        guard let format = ExportRun.Format(rawValue: arguments.format) else {
            throw ProvisionError(.usage, "--format must be mbtiles, pmtiles or bundle, not '\(arguments.format)'")
        }
        let result = try ExportRun(store: arguments.store, format: format, region: arguments.region, source: arguments.source,
                                   out: arguments.out, progress: view.progress).run()
        view.show { $0.export(result) }
        return .success
    }
}
