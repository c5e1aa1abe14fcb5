import Foundation
import ProvisionModel
import ProvisionStore

extension PlanSession {
    /// The note that devices updated by a patch keep what `plan` removes (`Plan.patchNote`), for a
    /// store with a lock only: one built before, whose bundle may be on devices. With regions
    /// removed, it gives the rows only they link, read from `database`'s links.
    func patchNote(_ plan: Plan, store database: OfflineDatabase?) -> PlanNote? {
        guard lock != nil else { return nil }
        let removed = Set(plan.removedRegions.map(\.rowID))
        var removedOnly: ContentAmount?
        if !removed.isEmpty, let database {
            // Best effort: links that cannot be read leave the note its counts of links, without rows and bytes.
            let sharing = try? database.contentSharing()
            removedOnly = sharing.map { sharing in
                sharing.amounts.filter { Set($0.key.members).isSubset(of: removed) }.values.reduce(ContentAmount(), +)
            }
        }
        return plan.patchNote(removedOnly: removedOnly)
    }
}
