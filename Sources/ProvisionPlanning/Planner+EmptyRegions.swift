import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// The note on a region row that gets no tiles at all.
extension Planner {
    /// A note for each row whose area and zooms give it no tile from any of its sources, naming
    /// why per source: the source's `bounds` miss the region, its zooms miss the region's (with
    /// `"overzoom": false`), or MapLibre refuses the tileset. Such a row stores only resources,
    /// so a map of it draws nothing offline; `audit` counts it a problem.
    ///
    /// Counted from the rows' zoom changes (cover counts, stored tiles included), so it costs
    /// nothing beyond the diff already made.
    static func emptyRegionNotes(_ rows: [RegionPlan], input: PlanInput) -> [PlanNote] {
        var notes: [PlanNote] = []
        for row in rows {
            let covered = row.zoomChanges.reduce(0) { $0 + $1.counts.add + $1.counts.keep }
            guard covered == 0, let region = input.job.regions.first(where: { $0.id == row.regionID }) else { continue }
            let extra = input.regionTilesets[region.id] ?? ResolvedTilesets()
            var sources = zip(extra.tileSources, extra.tileJSONURLs).map { ($0, "tileset \($1 ?? $0.template)") }
            var overzoom = true
            if let packID = row.stylePackID, let pack = input.packs[packID] {
                sources = zip(pack.tileSources, sourceNames(pack)).map { ($0, "source '\($1)'") } + sources
                overzoom = pack.pack.overzoom
            }
            let zooms = region.minZoom == region.maxZoom ? "z\(region.minZoom)" : "z\(region.minZoom)–\(region.maxZoom)"
            let reasons = sources.map { source, name in
                why(source, name: name, row: row, region: region, zooms: zooms, overzoom: overzoom)
            }
            let subject = "region '\(region.id)'" + (row.stylePackID.map { " with style pack '\($0)'" } ?? "")
            let because = reasons.isEmpty ? "its style has no tiled source" : listed(reasons)
            notes.append(PlanNote(subject: subject, message: "gets no tiles: \(because); only its "
                                  + "\(plural(row.resources.wanted.count, "resource")) are stored, so a map of it draws "
                                  + "no tiles offline (audit reports it)"))
        }
        return notes
    }

    /// Why `source` gives `row` no tile, in words.
    private static func why(_ source: TileSource, name: String, row: RegionPlan, region: Region, zooms: String,
                            overzoom: Bool) -> String {
        if let refusal = source.refusal { return "\(name) is refused (\(refusal))" }
        guard source.zoomRange(regionMin: region.minZoom, regionMax: region.maxZoom, overzoom: overzoom) != nil else {
            return "\(name) has tiles at z\(source.minZoom)–\(source.maxZoom), none at the region's \(zooms)"
                + (overzoom ? "" : " (\"overzoom\": false)")
        }
        if let b = source.bounds {
            let box = [b.west, b.south, b.east, b.north].map { "\($0)" }.joined(separator: ", ")
            return "the region lies outside the bounds of \(name) ([\(box)])"
        }
        return "\(name) covers none of the region at \(zooms)"
    }
}
