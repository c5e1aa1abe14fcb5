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
        var salvageNote: PlanNote?
        if let problem = sqliteDamage(session.store) {
            salvageNote = try rebuild(session, problem: problem, progress: progress)
        }
        do {
            let database = try OfflineDatabase(url: session.store.databaseURL, epoch: session.epoch)
            defer { try? database.close() }
            let found = try damage(in: database, lock: session.lock, store: session.store)
            guard !found.isEmpty else { return salvageNote }
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

    /// What SQLite reports wrong with the store's database file, or nil when it reads cleanly.
    static func sqliteDamage(_ store: StoreDirectoryPath) -> String? {
        do {
            let database = try OfflineDatabase(url: store.databaseURL, epoch: 0, options: .init(readOnly: true, create: false))
            defer { try? database.close() }
            let problems = try database.integrityCheck()
            return problems.isEmpty ? nil : problems.prefix(3).joined(separator: "; ")
        } catch let error as StoreError where error.code == .corrupt {
            return error.message
        } catch {
            return nil
        }
    }

    /// Replaces a database SQLite reports as corrupt with the rows that can still be read from it.
    private static func rebuild(_ session: PlanSession, problem: String, progress: ProgressReporter) throws(CLIError) -> PlanNote {
        let store = session.store
        let fresh = store.url.appendingPathComponent(StoreDirectory.databaseName + ".salvage")
        do {
            let copied = try OfflineDatabase.salvage(from: store.databaseURL, into: fresh, epoch: session.epoch)
            OfflineDatabase.removeFiles(at: store.databaseURL)
            try FileManager.default.moveItem(at: fresh, to: store.databaseURL)
            let note = PlanNote(subject: "repair", message: "offline.db was damaged (SQLite: \(problem)); it was rebuilt from "
                                + "the \(copied) rows that could still be read, and the rest is fetched again")
            progress.event("phase", JSONObject([("phase", .string("repair"))]), text: "\(note.subject): \(note.message)")
            return note
        } catch {
            OfflineDatabase.removeFiles(at: fresh)
            throw CLIError(.cannotWriteStore, "cannot rebuild the damaged offline.db at \(store.display): \(describe(error))")
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
