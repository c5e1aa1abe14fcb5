import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The routing packs of a merge: each shard fetched a contiguous share of every pack's graph-tile
/// cells and wrote them as its own extract (`RoutingPackShards.share`), recorded in its lock; the
/// merge writes each pack's whole extract from the shards' tiles, the bytes one apply writes.
///
/// Why staged like the search packs: a pack that cannot be merged then fails the merge with
/// nothing of the output changed. The extracts are written into `routing/.merging/` of the output
/// and renamed into place after the database, before the lock.
extension MergeRun {
    /// Extracts written and waiting in `staging` to be moved into the output's `routing/`.
    struct StagedRoutingPacks {
        let store: StorePath
        let staging: URL
        /// The lock's records of them, in job order.
        let records: [RoutingPackRecord]

        /// Moves each extract into the output's `routing/`, removes any other extract there (the
        /// output's previous job's) and the staging directory; returns the records.
        func place() throws -> [RoutingPackRecord] {
            let manager = FileManager.default
            let directory = store.url.appendingPathComponent(StoreDirectory.routingDirectoryName)
            for record in records {
                let from = staging.appendingPathComponent(record.file), to = store.url.appendingPathComponent(record.file)
                guard rename(from.path, to.path) == 0 else {
                    throw StoreError(.io, "cannot move the routing pack \(record.file) into place: \(String(cString: strerror(errno)))",
                                     path: to.path, underlyingCode: errno)
                }
            }
            let kept = Set(records.map { URL(fileURLWithPath: $0.file).lastPathComponent })
            // No routing directory (no pack, none before): nothing to remove.
            let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names where name.hasSuffix(".tar") && !name.hasPrefix(".") && !kept.contains(name) {
                try manager.removeItem(at: directory.appendingPathComponent(name))
            }
            discard()
            return records
        }

        /// Removes the staging directory (idempotent).
        func discard() {
            // Best effort: a staging directory already gone is what removing it wants.
            try? FileManager.default.removeItem(at: staging)
        }
    }

    /// Writes each routing pack the shards' locks record from their extracts into a staging
    /// directory of `store`. A pack some shard lacks (its apply did not finish it) or whose tiles
    /// cannot be merged is invalid input (65, named), the staging directory removed.
    func mergeRoutingPacks(_ inputs: [Input], into store: StorePath) throws -> StagedRoutingPacks {
        let staging = store.url.appendingPathComponent(StoreDirectory.routingDirectoryName).appendingPathComponent(".merging")
        let staged = StagedRoutingPacks(store: store, staging: staging, records: [])
        staged.discard()  // a killed merge's files (this merge holds the output's writer lock)
        var records: [RoutingPackRecord] = []
        for pack in inputs[0].lock.routingPacks {
            var shards: [(record: RoutingPackRecord, store: URL)] = []
            for input in inputs {
                guard let record = input.lock.routingPacks.first(where: { $0.id == pack.id }) else {
                    staged.discard()
                    throw StoreError(.invalidInput, "\(input.label) has no routing pack '\(pack.id)' (its apply did not write "
                                     + "it): apply that shard again")
                }
                shards.append((record, input.path.url))
            }
            do {
                records.append(try RoutingPackShards.merge(shards, target: staging.appendingPathComponent(pack.file)))
            } catch {
                staged.discard()
                throw StoreError(.invalidInput, "cannot merge routing pack '\(pack.id)': \(describe(error))")
            }
        }
        return StagedRoutingPacks(store: store, staging: staging, records: records)
    }
}
