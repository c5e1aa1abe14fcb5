import Foundation
import ProvisionFoundation

extension Plan {
    /// The note of a plan that removes regions, tiles or resources from a store a lock describes
    /// (an update of a bundle devices may have): devices updated by a patch keep what it removes,
    /// as MapLibre's side-load merge deletes nothing. Nil when nothing is removed.
    ///
    /// Why counts of links: the plan knows what each region row stops linking, not which rows no
    /// other region still links; `removedOnly`, what only the removed regions link (the store's
    /// `ContentSharing`), is the part known exactly, given when the caller read it. The patch's
    /// report (`export --format patch`) lists every row the new store dropped with its bytes.
    public func patchNote(removedOnly: ContentAmount? = nil) -> PlanNote? {
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
        var held = ""
        if let removedOnly, !removedOnly.isZero {
            held = "; rows only the removed " + (removedRegions.count == 1 ? "region links: " : "regions link: ")
                + listed([removedOnly.tiles > 0 ? plural(removedOnly.tiles, "tile") : "",
                          removedOnly.resources > 0 ? plural(removedOnly.resources, "resource") : ""])
                + " (\(ByteFormat.string(removedOnly.bytes)))"
        }
        return PlanNote(subject: "patches", message: "devices updated by a patch ('provision export --format patch') keep what "
                        + "this apply removes (\(listed(removed))\(held)), as a side-load merge deletes nothing; the patch's report "
                        + "lists the rows dropped with their bytes, and an app that must free them deletes the old region first")
    }
}
