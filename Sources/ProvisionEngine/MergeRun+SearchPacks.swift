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
        let files: StagedPackFiles
        /// The lock's records of them, in job order.
        let records: [SearchPackRecord]

        /// Moves each file into the output's `search/` (see `StagedPackFiles.place`); returns the records.
        func place() throws -> [SearchPackRecord] {
            try files.place(records.map(\.file))
            return records
        }

        /// Removes the staging directory (idempotent).
        func discard() { files.discard() }
    }

    /// Builds the packs the shards' locks record from the shards' tiles into a staging directory
    /// of `store`; nil when the job has none. A pack that cannot be built throws what stops an
    /// apply's (`SearchPackStep.failure`), the staging directory removed.
    func buildSearchPacks(_ inputs: [Input], into store: StorePath, epoch: Int64) throws -> StagedSearchPacks? {
        guard let recipe = inputs[0].entry.searchPacks, !recipe.packs.isEmpty else { return nil }
        let staged = StagedPackFiles(store: store, directory: StoreDirectory.searchDirectoryName, suffix: ".db", what: "search pack")
        let staging = staged.staging
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
        return StagedSearchPacks(files: staged, records: records)
    }
}
