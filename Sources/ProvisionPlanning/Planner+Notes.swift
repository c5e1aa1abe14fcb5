import ProvisionFoundation
import ProvisionModel
import TileMath

/// The notes the planner adds about how tilesets were read and which zooms are fetched.
extension Planner {
    /// The names of a pack's tile sources (their keys in the style), in `tileSources` order.
    static func sourceNames(_ pack: ResolvedPack) -> [String] {
        pack.summaries.count == pack.tileSources.count ? pack.summaries.map(\.name) : pack.tileSources.map(\.template)
    }

    /// Notes about the TileJSONs themselves: several templates listed (MapLibre uses the first),
    /// bounds clamped or refused. Once per style pack source and per region tileset.
    static func sourceNotes(_ input: PlanInput) -> [PlanNote] {
        var notes: [PlanNote] = []
        func add(_ subject: String, _ name: String, _ source: TileSource) {
            if source.templateCount > 1 {
                notes.append(PlanNote(subject: subject, message: "\(name) lists \(source.templateCount) templates; "
                                      + "MapLibre uses the first, \(source.template)"))
            }
            for sentence in source.readingNotes {
                notes.append(PlanNote(subject: subject, message: "\(name): \(sentence)"))
            }
        }
        for pack in input.job.stylePacks {
            guard let resolved = input.packs[pack.id] else { continue }
            for (source, name) in zip(resolved.tileSources, sourceNames(resolved)) {
                add("stylePack '\(pack.id)'", "source '\(name)'", source)
            }
        }
        for region in input.job.regions {
            guard let resolved = input.regionTilesets[region.id] else { continue }
            for (source, url) in zip(resolved.tileSources, resolved.tileJSONURLs) {
                add("region '\(region.id)'", "tileset \(url ?? source.template)", source)
            }
        }
        return notes
    }

    /// A note for each source of `row` whose `maxzoom` lies below all of the region's zooms:
    /// its `maxzoom` tiles are fetched to overzoom (or, with `overzoom` off, none are).
    static func overzoomNotes(_ row: RegionPlan, region: Region, sources: [TileSource], names: [String],
                              overzoom: Bool) -> [PlanNote] {
        var notes: [PlanNote] = []
        let zooms = region.minZoom == region.maxZoom ? "z\(region.minZoom)" : "z\(region.minZoom)–\(region.maxZoom)"
        let subject = "region '\(region.id)'" + (row.stylePackID.map { " with style pack '\($0)'" } ?? "")
        for (source, name) in zip(sources, names)
        where source.isOverzoomed(regionMin: region.minZoom, regionMax: region.maxZoom) {
            let z = source.maxZoom
            if overzoom {
                let set = row.tileSets.first { $0.urlTemplate == source.template && $0.zooms == z...z }
                let count = set.map { $0.cover(of: row.area, zoom: z).count } ?? 0
                notes.append(PlanNote(subject: subject, message: "\(name) stops at z\(z), below the region's \(zooms): "
                                      + "its \(plural(count, "tile")) at z\(z) covering the region are fetched "
                                      + "for the renderer to overzoom (MapLibre's own download fetches none)"))
            } else {
                notes.append(PlanNote(subject: subject, message: "\(name) stops at z\(z), below the region's \(zooms): "
                                      + "none of its tiles are fetched (\"overzoom\": false), so its layers are "
                                      + "missing offline"))
            }
        }
        return notes
    }
}
