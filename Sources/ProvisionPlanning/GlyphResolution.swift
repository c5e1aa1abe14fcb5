import Foundation
import ProvisionModel
import TileMath

/// The glyph ranges of `"glyphs": "used"` region rows, read from the tiles a store holds.
///
/// A plan computes them exactly when the store holds every tile a row wants (after an apply it
/// does, so a re-plan converges); otherwise the row is marked `glyphsAtApply` and the apply
/// calls `resolve` once its tiles are stored, in the same run. Both read the same tiles the same
/// way (`scan(row:demand:store:requireAll:)`), streaming them page by page.
public enum GlyphResolution {
    /// Rows read from the store at a time.
    static let page = 256

    /// The scan of the labels of the tiles `store` holds of `row`'s covers (the templates label
    /// layers read); nil when `requireAll` and a tile the row wants is not stored.
    public static func scan(row: RegionPlan, demand: GlyphDemand, store: StoredTiles, requireAll: Bool) throws -> GlyphScan? {
        var scan = GlyphScan(demand: demand)
        let templates = scan.templates
        for set in row.tileSets where templates.contains(set.urlTemplate) {
            for z in set.zooms {
                let cover = set.cover(of: row.area, zoom: z)
                if requireAll, try !allStored(row.area, set: set, zoom: z, store: store) { return nil }
                var matched = 0
                try store.forEachTileRow(urlTemplate: set.urlTemplate, pixelRatio: set.pixelRatio, zoom: z, page: page) { stored in
                    let t = stored.key.tile
                    let tile = set.isTMS ? TileID(z: t.z, x: t.x, y: t.tmsY) : t
                    guard cover.contains(tile) else { return }
                    matched += 1
                    if let data = stored.content.data {
                        scan.add(payload: data, compressed: stored.content.compressed, urlTemplate: set.urlTemplate, tile: tile)
                    }
                }
                if requireAll && matched < cover.count { return nil }
            }
        }
        return scan
    }

    /// Whether `store` holds every tile of `set` at `zoom` that `area` covers (read a column at a
    /// time, as the planner counts downloads).
    static func allStored(_ area: CoverArea, set: PlannedTileSet, zoom: Int, store: StoredTiles) throws -> Bool {
        let group = TileGroup(tileSet: set, zoom: zoom, areas: [area], rows: [0], desiredCount: 0)
        var all = true
        try group.forEachTile(store: store) { _, isStored in if !isStored { all = false } }
        return all
    }

    /// At apply, once the tiles are stored: the glyph resources of every row whose glyphs wait
    /// for the apply (of every `"used"` row with `all`, as after a refresh that may have changed
    /// tiles), by row key.
    public static func resolve(_ plan: Plan, store: StoredTiles, all: Bool) throws -> [String: [ResourceRef]] {
        var out: [String: [ResourceRef]] = [:]
        for row in plan.regions where row.glyphsAtApply || all {
            guard let demand = plan.stylePacks.first(where: { $0.id == row.stylePackID })?.glyphDemand,
                  let scan = try scan(row: row, demand: demand, store: store, requireAll: false) else { continue }
            out[row.key] = scan.resources
        }
        return out
    }
}

extension Planner {
    /// For a row of a `"used"` pack: adds the glyph resources its stored tiles' labels need when
    /// the store holds all of them and none is fetched again; otherwise marks it `glyphsAtApply`.
    static func planGlyphs(_ row: inout RegionPlan, input: PlanInput, store: StoredTiles?, refetch: Set<String>) throws {
        guard let packID = row.stylePackID, let demand = input.packs[packID]?.glyphDemand else { return }
        let templates = Set(demand.layers.compactMap(\.urlTemplate))
        let relevant = row.tileSets.filter { templates.contains($0.urlTemplate) }
        guard !relevant.isEmpty else { return }
        guard let store, !relevant.contains(where: { refetch.contains($0.urlTemplate) }),
              let scan = try GlyphResolution.scan(row: row, demand: demand, store: store, requireAll: true) else {
            row.glyphsAtApply = true
            return
        }
        let wanted = Array(Set(row.resources.wanted + scan.resources)).sorted()
        row.resources = ResourceChanges(wanted: wanted, add: wanted, remove: [])
    }

    /// One note per style pack with rows whose glyph ranges the apply decides.
    static func glyphNotes(_ rows: [RegionPlan]) -> [PlanNote] {
        var pending: [(pack: String, rows: [String])] = []
        for row in rows where row.glyphsAtApply {
            let pack = row.stylePackID ?? "-"
            if let i = pending.firstIndex(where: { $0.pack == pack }) { pending[i].rows.append(row.regionID) } else { pending.append((pack, [row.regionID])) }
        }
        return pending.map { entry in
            PlanNote(subject: "stylePack '\(entry.pack)'",
                     message: "glyphs \"used\": the glyph ranges of \(entry.rows.map { "'\($0)'" }.joined(separator: ", ")) "
                        + "are determined at apply, from the labels of the tiles once they are stored; until then only "
                        + "0-255 (and the ranges of layers that cannot be evaluated) are counted, so the counts are estimated")
        }
    }
}
