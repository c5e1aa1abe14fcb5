import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The search packs of a merge: no shard builds one (each holds only its share of the tiles), so
/// the merge builds every pack its shards' locks record (`shard.searchPacks`) once, from all the
/// shards' tiles, with the whole apply's settings and build time: the same bytes one apply writes.
///
/// Why before the merged file replaces the output's: a pack that cannot be built then fails the
/// merge with nothing of the output changed. The files are written into a hidden directory of the
/// output's `search/` and renamed into place after the database, before the lock.
extension MergeRun {
    /// Pack files built and waiting in `staging` to be moved into the output's `search/`.
    struct StagedSearchPacks {
        /// The output store.
        let store: StorePath
        /// Where the files were written: `search/<pack>.db` under it.
        let staging: URL
        /// The lock's records of them, in job order.
        let records: [SearchPackRecord]

        /// Moves each file into the output's `search/`, removes any other pack file there (the
        /// output's previous job's) and the staging directory; returns the records.
        func place() throws -> [SearchPackRecord] {
            let manager = FileManager.default
            let directory = store.url.appendingPathComponent(StoreDirectory.searchDirectoryName)
            for record in records {
                let from = staging.appendingPathComponent(record.file), to = store.url.appendingPathComponent(record.file)
                guard rename(from.path, to.path) == 0 else {
                    throw StoreError(.io, "cannot move the search pack \(record.file) into place: \(String(cString: strerror(errno)))",
                                     path: to.path, underlyingCode: errno)
                }
            }
            let kept = Set(records.map { URL(fileURLWithPath: $0.file).lastPathComponent })
            for name in try manager.contentsOfDirectory(atPath: directory.path)
            where name.hasSuffix(".db") && !name.hasPrefix(".") && !kept.contains(name) {
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

    /// Builds the packs the shards' locks record from the shards' tiles into a staging directory
    /// of `store`; nil when the job has none. A pack that cannot be built throws what stops an
    /// apply's (`SearchPackStep.failure`), the staging directory removed.
    func buildSearchPacks(_ inputs: [Input], into store: StorePath, epoch: Int64) throws -> StagedSearchPacks? {
        guard let recipe = inputs[0].entry.searchPacks, !recipe.packs.isEmpty else { return nil }
        let staging = store.url.appendingPathComponent(StoreDirectory.searchDirectoryName)
            .appendingPathComponent(".merging")
        let staged = StagedSearchPacks(store: store, staging: staging, records: [])
        staged.discard()  // a killed merge's files (this merge holds the output's writer lock)
        let tiles = try ShardTiles(shards: inputs.map(\.path), epoch: epoch)
        defer { tiles.close() }
        let plan = recipe.plan(jobName: inputs[0].lock.jobName, jobDigest: inputs[0].lock.jobDigest, epoch: epoch)
        var records: [SearchPackRecord] = []
        for pack in recipe.packs {
            let started = Date()
            do {
                let outcome = try SearchPackBuild.run(pack, plan: plan, store: tiles, directory: staging, buildTime: epoch,
                                                      record: nil)
                records.append(outcome.record)
                progress.emit(SearchPackStep.event(pack, outcome: outcome, started: started))
            } catch {
                staged.discard()
                throw SearchPackStep.failure(error, pack: pack.pack.id)
            }
        }
        return StagedSearchPacks(store: store, staging: staging, records: records)
    }
}
