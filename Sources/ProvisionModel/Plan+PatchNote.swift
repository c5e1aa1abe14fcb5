import Foundation
import ProvisionFoundation

extension Plan {
    /// The note of a plan that removes regions, tiles or resources from a store a lock describes
    /// (an update of a bundle devices may have): devices updated by a patch keep what it removes,
    /// as MapLibre's side-load merge deletes nothing. Nil when nothing is removed.
    ///
    /// Why counts of links: the plan knows what each region row stops linking, not which rows no
    /// other region still links; the patch's report (`export --format patch`) lists the rows the
    /// new store dropped with their bytes.
    public var patchNote: PlanNote? {
        let tiles = tilesToRemove
        let resources = regions.reduce(0) { $0 + $1.resources.remove.count } + removedRegions.reduce(0) { $0 + $1.resourceCount }
        guard tiles > 0 || resources > 0 || !removedRegions.isEmpty else { return nil }
        var removed: [String] = []
        if !removedRegions.isEmpty {
            removed.append((removedRegions.count == 1 ? "region " : "regions ")
                           + listed(removedRegions.map { $0.key ?? "row \($0.rowID)" }))
        }
        if tiles > 0 { removed.append(plural(tiles, "tile link")) }
        if resources > 0 { removed.append(plural(resources, "resource link")) }
        return PlanNote(subject: "patches", message: "devices updated by a patch ('provision export --format patch') keep what "
                        + "this apply removes (\(listed(removed))), as a side-load merge deletes nothing; the patch's report "
                        + "lists the rows dropped with their bytes, and an app that must free them deletes the old region first")
    }
}
