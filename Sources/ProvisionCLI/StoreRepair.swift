import Foundation
import ProvisionExecution
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `--repair`: the damaged rows of a store, found by re-reading every row against its kind
/// (`Verifier`) and the lock's chunk digests, and removed so the apply fetches them again.
enum StoreRepair {
    /// The damage in `database` (read-only).
    static func damage(in database: OfflineDatabase, lock: LockDocument?, store: StoreDirectoryPath) throws(CLIError) -> StoreDamage {
        let verifier = Verifier()
        do {
            return try database.findDamage(lockChunks: lock?.chunks ?? []) { kind, payload in
                if case .failure(let failure) = verifier.verify(payload, kind: kind) { return failure.description }
                return nil
            }
        } catch {
            throw CLIError(.cannotWriteStore, "cannot read every row of the store at \(store.display): \(describe(error))")
        }
    }

    /// Removes the damaged rows of the locked store before it is planned; a note saying what was
    /// removed, or nil when nothing was damaged.
    static func removeDamage(_ session: PlanSession, progress: ProgressReporter) throws(CLIError) -> PlanNote? {
        guard FileManager.default.fileExists(atPath: session.store.databaseURL.path) else { return nil }
        progress.event("phase", JSONObject([("phase", .string("repair"))]), text: "Re-reading every stored row for damage")
        do {
            let database = try OfflineDatabase(url: session.store.databaseURL, epoch: session.epoch)
            defer { try? database.close() }
            let found = try damage(in: database, lock: session.lock, store: session.store)
            guard !found.isEmpty else { return nil }
            try database.removeRows(found.rows.map(\.key))
            let removed = note(found, fixing: true)
            progress.event("repair", JSONObject([("rows", .int(found.rows.count)), ("unusable", .int(found.unusable.count))]),
                           text: removed.map { "\($0.subject): \($0.message)" })
            return removed
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.cannotWriteStore, "cannot repair the store at \(session.store.display): \(describe(error))")
        }
    }

    /// One line: how many rows are damaged (the first few named) and what happens to them.
    static func note(_ damage: StoreDamage, fixing: Bool) -> PlanNote? {
        guard !damage.isEmpty else { return nil }
        let named = damage.rows.prefix(3).map { row -> String in
            switch row.key {
            case .resource(let url): return "\(url) (\(row.reason))"
            case .tile(let key): return "tile \(key.tile.z)/\(key.tile.x)/\(key.tile.y) of \(key.urlTemplate) (\(row.reason))"
            }
        }
        let count = damage.rows.count
        let more = count > named.count ? " and \(count - named.count) more" : ""
        return PlanNote(subject: "repair", message: "\(count) damaged row\(count == 1 ? "" : "s") "
                        + (fixing ? "removed and fetched again: " : "would be fetched again by 'apply --repair': ")
                        + named.joined(separator: "; ") + more)
    }
}
