import Foundation
import ProvisionModel

/// `--repair`: the damaged rows of a store, found by re-reading every row against its kind
/// (the `check` a caller hands in, since verification lives with the executor) and the lock's
/// chunk digests, and removed so the next apply fetches them again.
public enum StoreRepair {
    /// What `removeDamage` did.
    public struct Outcome: Equatable, Sendable {
        /// What SQLite reported wrong with the file, when it was rebuilt from its readable rows.
        public var rebuiltFrom: String?
        /// Rows copied into the rebuilt file.
        public var salvagedRows = 0
        /// The damaged rows removed.
        public var damage = StoreDamage()
    }

    /// The damage in `database` (read-only).
    public static func damage(in database: OfflineDatabase, lockChunks: [ChunkDigest],
                              check: (ResourceKind, Data) -> String?) throws -> StoreDamage {
        try database.findDamage(lockChunks: lockChunks, check: check)
    }

    /// Removes the damaged rows of a locked store (rebuilding a file SQLite reports corrupt from
    /// the rows still readable first).
    public static func removeDamage(in build: StoreBuild, epoch: Int64, lockChunks: [ChunkDigest],
                                    check: (ResourceKind, Data) -> String?) throws -> Outcome {
        var outcome = Outcome()
        let path = build.path
        guard path.hasDatabase else { return outcome }
        if let problem = sqliteDamage(path) {
            let fresh = path.url.appendingPathComponent(StoreDirectory.databaseName + ".salvage")
            do {
                outcome.salvagedRows = try OfflineDatabase.salvage(from: path.databaseURL, into: fresh, epoch: epoch)
                OfflineDatabase.removeFiles(at: path.databaseURL)
                try FileManager.default.moveItem(at: fresh, to: path.databaseURL)
                outcome.rebuiltFrom = problem
            } catch {
                OfflineDatabase.removeFiles(at: fresh)
                throw error
            }
        }
        let database = try OfflineDatabase(url: path.databaseURL, epoch: epoch)
        // Best effort: closing after the damage is read.
        defer { try? database.close() }
        outcome.damage = try database.findDamage(lockChunks: lockChunks, check: check)
        if !outcome.damage.isEmpty { try database.removeRows(outcome.damage.rows.map(\.key)) }
        return outcome
    }

    /// What SQLite reports wrong with the store's database file, or nil when it reads cleanly.
    public static func sqliteDamage(_ path: StorePath) -> String? {
        do {
            let database = try OfflineDatabase(url: path.databaseURL, epoch: 0, options: .init(readOnly: true, create: false))
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            let problems = try database.integrityCheck()
            return problems.isEmpty ? nil : problems.prefix(3).joined(separator: "; ")
        } catch let error as StoreError where error.code == .corrupt {
            return error.message
        } catch {
            return nil
        }
    }
}

extension StoreDamage {
    /// One line: how many rows are damaged (the first few named) and what happens to them; nil
    /// when nothing is damaged.
    public func note(fixing: Bool) -> PlanNote? {
        guard !isEmpty else { return nil }
        let named = rows.prefix(3).map { row -> String in
            switch row.key {
            case .resource(let url): return "\(url) (\(row.reason))"
            case .tile(let key): return "tile \(key.tile.z)/\(key.tile.x)/\(key.tile.y) of \(key.urlTemplate) (\(row.reason))"
            }
        }
        let more = rows.count > named.count ? " and \(rows.count - named.count) more" : ""
        return PlanNote(subject: "repair", message: "\(rows.count) damaged row\(rows.count == 1 ? "" : "s") "
                        + (fixing ? "removed and fetched again: " : "would be fetched again by 'apply --repair': ")
                        + named.joined(separator: "; ") + more)
    }
}
