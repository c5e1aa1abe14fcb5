import Foundation
import ProvisionModel
import ProvisionStore

extension RoutingPackStep {
    /// `apply --repair`, once the store is held: each pack is planned again from its tiles as they
    /// are, and the whole tiles of a damaged one are staged from its extract, so the step fetches
    /// only the damaged or missing ones and writes the extract anew.
    static func prepareRepair(_ plan: inout Plan, session: PlanSession) throws(ProvisionError) {
        if plan.routingPacks.isEmpty { plan.routingPacks = try session.routingPackPlans(shard: plan.shard?.share.shard) }
        let records = session.lock?.routingPacks ?? []
        RoutingPackRepair.recheck(&plan.routingPacks, records: records, directory: session.store.url)
        for pack in plan.routingPacks {
            do {
                try RoutingPackRepair.stageKept(pack, record: records.first { $0.id == pack.pack.id }, directory: session.store.url)
            } catch {
                throw ProvisionError(.cannotWriteStore, "cannot repair routing pack '\(pack.pack.id)': \(describe(error))", cause: error)
            }
        }
    }
}
