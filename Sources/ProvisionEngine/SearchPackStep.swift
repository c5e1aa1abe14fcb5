import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

extension PlanSession {
    /// The job's search packs resolved against `plan`, each with what the apply does with its file
    /// (judged by the lock's records and the files in the store); invalid job (65) for a source
    /// the plan has no vector tiles of or whose schema is unknown without a mapping.
    public func searchPackPlans(_ plan: Plan) throws(ProvisionError) -> [SearchPackPlan] {
        guard !input.job.searchPacks.isEmpty else { return [] }
        do {
            return try SearchPackPlanning.plan(input.job, plan: plan, records: lock?.searchPacks ?? [], directory: store.url)
        } catch {
            throw ProvisionError(.invalidJob, "\(error)")
        }
    }
}

/// The apply's last step before the lock: each search pack's file built from the stored tiles, or
/// kept, and recorded in the lock.
struct SearchPackStep {
    let session: PlanSession
    let progress: ProgressSink

    /// Brings every pack of `plan` (or, for a saved plan, of the job) up to date in the store and
    /// records it in `lock`; files of packs the job no longer has are removed. Returns the error
    /// that stopped a pack (its record is left out, so the next apply builds it, and its file is
    /// the one it had, or none), after the others were done, and what each pack built read and skipped.
    func run(_ plan: Plan, lock: inout LockDocument, buildTime: Int64) -> (ProvisionError?, [SearchPackFindings]) {
        let packs: [SearchPackPlan]
        do {
            packs = plan.searchPacks.isEmpty ? try session.searchPackPlans(plan) : plan.searchPacks
        } catch {
            return (error, [])
        }
        let previous = session.lock?.searchPacks ?? []
        // A shard's store holds no pack: what it held before goes too.
        for old in previous where plan.shard != nil || !packs.contains(where: { $0.pack.id == old.id }) {
            // A file already gone is what removing it wants.
            try? FileManager.default.removeItem(at: session.store.url.appendingPathComponent(old.file))
        }
        guard !packs.isEmpty else { return (nil, []) }
        if plan.shard != nil {
            // A shard holds only its share of the tiles: the merge builds every pack once, from all of them.
            lock.shard?.searchPacks = ShardSearchPacks(packs: packs, plan: plan)
            return (nil, [])
        }
        let database: OfflineDatabase
        do {
            database = try session.store.openForReading(epoch: buildTime)
        } catch {
            return (ProvisionError(store: error, context: "cannot read the store at \(session.store.display) to build search packs",
                                   kind: .failure), [])
        }
        // Best effort: closing a read-only connection.
        defer { try? database.close() }
        var failure: ProvisionError?
        var findings: [SearchPackFindings] = []
        for pack in packs {
            let record = previous.first { $0.id == pack.pack.id }
            if pack.action == .keep, let record {
                lock.searchPacks.append(record)
                continue
            }
            let started = Date()
            do {
                let outcome = try SearchPackBuild.run(pack, plan: plan, store: database, directory: session.store.url,
                                                      buildTime: buildTime, record: record)
                lock.searchPacks.append(outcome.record)
                if let found = outcome.findings { findings.append(found) }
                progress.emit(Self.event(pack, outcome: outcome, started: started))
            } catch {
                failure = failure ?? Self.failure(error, pack: pack.pack.id)
            }
        }
        return (failure, findings)
    }

    /// The progress event of `pack`'s step, which began at `started`.
    static func event(_ pack: SearchPackPlan, outcome: SearchPackBuild.Outcome, started: Date) -> ProvisionEvent {
        let seconds = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
        return .searchPack(id: pack.pack.id, file: pack.pack.file, built: outcome.built, entries: outcome.record.entries,
                           tiles: outcome.record.tiles, bytes: outcome.record.bytes, seconds: seconds)
    }

    /// What stops the build of search pack `id`: its job's settings (65), else the store (73).
    static func failure(_ error: any Error, pack id: String) -> ProvisionError {
        ProvisionError(store: error, context: "cannot build search pack '\(id)'")
    }
}
