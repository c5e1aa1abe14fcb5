import Foundation
import ProvisionFoundation
import ProvisionExecution
import ProvisionModel
import ProvisionStore

/// Whether the rows of a store's `offline.db` are the ones an apply of this store recorded.
///
/// Why: the planner takes a stored row as good and the canonical writer copies it into the next
/// build, so a row no apply verified (a database written by something else, a store whose lock
/// was deleted, a lock that records other content) would be kept unverified: a garbage tile
/// stays, and `plan` says "No changes". Such rows are checked by kind before anything reuses
/// them (`apply` removes the invalid ones, which are then fetched again; `plan` counts them).
///
/// A lock vouches for the database when its tile and resource counts and its stored byte total
/// equal the database's, counted without reading the rows' bytes, and the rows carry the build
/// time it records (every apply stamps each row's `accessed` with it); a change these do not show
/// (same-sized bytes, another tile's valid bytes) is what `apply --repair` and `audit --verify`
/// find with the lock's chunk digests.
public enum StoreTrust {
    /// Why the rows of `session`'s store are not vouched for by its lock, or nil when they are
    /// (or when it has no database).
    public static func unvouchedReason(_ session: PlanSession) -> String? {
        guard session.store.hasDatabase else { return nil }
        guard let lock = session.lock else {
            if let problem = session.lockProblem { return "its \(StoreDirectory.lockName) cannot be used (\(problem))" }
            return "it has no \(StoreDirectory.lockName), so no apply of this store recorded its rows"
        }
        do {
            let database = try session.store.openForReading(epoch: session.epoch)
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            let totals = try database.storedTotals()
            if totals == (lock.tileCount, lock.resourceCount, lock.byteCount) {
                // Every apply stamps each row's `accessed` with its build time, which its lock records.
                guard let stamp = OfflineDatabase.latestStamp(at: session.store.databaseURL), stamp != lock.epoch else { return nil }
                return "its rows were last stamped at \(stamp) (Unix time), not at the build time its "
                    + "\(StoreDirectory.lockName) records (\(lock.epoch))"
            }
            return "its \(StoreDirectory.lockName) records \(plural(lock.tileCount, "tile")), "
                + "\(plural(lock.resourceCount, "resource")) and \(grouped(Int(lock.byteCount))) bytes but \(StoreDirectory.databaseName) "
                + "holds \(plural(totals.tiles, "tile")), \(plural(totals.resources, "resource")) and \(grouped(Int(totals.bytes))) bytes"
        } catch {
            return "its \(StoreDirectory.databaseName) cannot be compared with its lock (\(describe(error)))"
        }
    }

    /// The rows of a store not vouched for (`unvouchedReason`) that are not usable for their kind,
    /// read-only.
    public static func invalidRows(in database: OfflineDatabase) throws -> StoreDamage {
        try StoreRepair.damage(in: database, lockChunks: [], check: Verifier.rowCheck())
    }

    /// The note a plan carries for rows not vouched for: why they were checked and what was
    /// found; `removed` when the apply removed the invalid ones (to fetch them again).
    public static func note(reason: String, damage: StoreDamage, removed: Bool) -> PlanNote {
        let named = damage.rows.prefix(3).map { row -> String in
            switch row.key {
            case .resource(let url): return "\(url) (\(row.reason))"
            case .tile(let key): return "tile \(key.tile.z)/\(key.tile.x)/\(key.tile.y) of \(key.urlTemplate) (\(row.reason))"
            }
        }
        let more = damage.rows.count > named.count ? " and \(grouped(damage.rows.count - named.count)) more" : ""
        let found = damage.isEmpty
            ? "all \(grouped(damage.checked)) are valid for their kind and are kept"
            : "\(plural(damage.rows.count, "row")) \(damage.rows.count == 1 ? "is" : "are") not valid for \(damage.rows.count == 1 ? "its" : "their") kind and "
                + (removed ? "\(damage.rows.count == 1 ? "was" : "were") removed to be fetched again: " : "will be fetched again by 'apply': ")
                + named.joined(separator: "; ") + more
        let rewrite = removed ? "" : "; 'apply' then rewrites \(StoreDirectory.databaseName) at this build's time and writes "
            + "\(StoreDirectory.lockName), so the plan has changes"
        return PlanNote(subject: "unverified rows", message: "every stored row was checked before reuse because \(reason); \(found)\(rewrite)")
    }
}
