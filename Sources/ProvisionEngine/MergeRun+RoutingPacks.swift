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
    /// Pack files a merge wrote into `<directory>/.merging/` of the output, waiting to be moved
    /// into place once the database is.
    struct StagedPackFiles {
        /// The output store.
        let store: StorePath
        /// `search` or `routing`.
        let directory: String
        /// The pack files' suffix (`.db`, `.tar`): others of the directory are left alone.
        let suffix: String
        /// `search pack`, `routing pack`: what an error names.
        let what: String

        /// Where the files are written: `<directory>/<pack file>` under it.
        var staging: URL { store.url.appendingPathComponent(directory).appendingPathComponent(".merging") }

        /// Moves each of `files` (store paths) into place, removes any other pack file of the
        /// directory (the output's previous job's) and the staging directory.
        func place(_ files: [String]) throws {
            let manager = FileManager.default
            for file in files {
                let from = staging.appendingPathComponent(file), to = store.url.appendingPathComponent(file)
                guard rename(from.path, to.path) == 0 else {
                    throw StoreError(.io, "cannot move the \(what) \(file) into place: \(String(cString: strerror(errno)))",
                                     path: to.path, underlyingCode: errno)
                }
            }
            let kept = Set(files.map { URL(fileURLWithPath: $0).lastPathComponent })
            let parent = store.url.appendingPathComponent(directory)
            guard manager.fileExists(atPath: parent.path) else { return }  // no pack now, none before
            for name in try manager.contentsOfDirectory(atPath: parent.path)
            where name.hasSuffix(suffix) && !name.hasPrefix(".") && !kept.contains(name) {
                try manager.removeItem(at: parent.appendingPathComponent(name))
            }
            discard()
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
    func mergeRoutingPacks(_ inputs: [Input], into store: StorePath) throws -> (files: StagedPackFiles, records: [RoutingPackRecord]) {
        let staged = StagedPackFiles(store: store, directory: StoreDirectory.routingDirectoryName, suffix: ".tar", what: "routing pack")
        let staging = staged.staging
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
            let started = Date()
            do {
                let record = try RoutingPackShards.merge(shards, target: staging.appendingPathComponent(pack.file))
                records.append(record)
                progress.emit(.routingPack(id: record.id, file: record.file, built: true, tiles: record.tiles.count, fetched: 0,
                                           absent: record.absent.count, bytes: record.bytes,
                                           seconds: (Date().timeIntervalSince(started) * 1000).rounded() / 1000))
            } catch {
                staged.discard()
                throw StoreError(.invalidInput, "cannot merge routing pack '\(pack.id)': \(describe(error))")
            }
        }
        return (staged, records)
    }
}
