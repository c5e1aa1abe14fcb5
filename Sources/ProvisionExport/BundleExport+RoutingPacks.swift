import Foundation
import ProvisionEngine
import ProvisionFoundation
import ProvisionModel
import ProvisionStore

extension BundleExport {
    /// Copies each routing pack the lock records (`routing/<pack>.tar`) into the bundle, checked
    /// first against the lock (present, its index holding the recorded tiles, its size) and, as
    /// copied, by its SHA-256: a pack missing or damaged is damaged input (65), named, before any
    /// tile is written. The tar is copied as a file, never held in memory.
    func writeRoutingPacks(into bundle: BundleDirectory) throws(ProvisionError) -> [ExportResult.RoutingPackFile] {
        var written: [ExportResult.RoutingPackFile] = []
        for record in exporter.lock?.routingPacks ?? [] {
            let damaged = { (why: String) in
                ProvisionError(.invalidJob, "routing pack '\(record.id)': \(record.file) in the store at \(store.display) is "
                               + "damaged (\(why)); run 'provision apply --repair' to fetch its damaged tiles again")
            }
            if let problem = RoutingPackCheck.fileProblems(record, directory: store.url).problems.first { throw damaged(problem) }
            _ = try PackCopy.copy(record.file, from: store, into: bundle, digest: record.digest,
                                  unreadable: { damaged("it cannot be read: \(describe($0))") },
                                  damaged: { damaged("its bytes are not the ones the lock recorded") })
            written.append(ExportResult.RoutingPackFile(path: record.file, pack: record.id, tiles: record.tiles.count,
                                                        bytes: record.bytes))
        }
        return written
    }
}
