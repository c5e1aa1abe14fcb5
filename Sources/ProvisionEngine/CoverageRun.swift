import Foundation
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import ProvisionStore

/// The offline database is what the coverage pictures read: its region rows and, zoom by zoom,
/// its links in tile order.
extension OfflineDatabase: CoverageStore {}

extension PlanSession {
    /// The coverage picture of `plan` (`plan --html`, `--svg --zoom`), read against this
    /// session's store.
    ///
    /// - Throws: `usage` (64) when `options` asks for a zoom the plan has no tiles at; `failure`
    ///   when the store cannot be read.
    public func coverage(of plan: Plan, options: CoverageOptions) throws(ProvisionError) -> CoverageMap {
        let database = try openForReading()
        // Best effort: closing a read-only connection.
        defer { try? database?.close() }
        do {
            return try CoverageMap.plan(plan, document: document(plan), store: database, options: options)
        } catch {  // a CoverageError says for itself that it is usage (64)
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
    }
}

extension AuditRun {
    /// The coverage picture of an audit (`audit --html`, `--svg --zoom`) of the store at `path`,
    /// illustrating `document`.
    static func coverage(_ document: AuditDocument, path: StorePath, lock: LockDocument?,
                         options: CoverageOptions) throws(ProvisionError) -> CoverageMap {
        do {
            let database = try path.openForReading(epoch: lock?.epoch ?? 0)
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            return try CoverageMap.audit(document, lock: lock, store: database, options: options)
        } catch {  // a CoverageError says for itself that it is usage (64)
            throw ProvisionError(store: error, context: "cannot audit the store at \(path.display)", kind: .failure)
        }
    }
}
