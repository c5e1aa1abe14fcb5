import Foundation
import ProvisionModel

/// Renders a plan document for people: a terminal text view and a Markdown table.
public enum PlanRenderer {
    /// The text view, Terraform-like: one block per region with `+ - ~` symbols.
    public static func text(_ doc: PlanDocument) -> String {
        var out = "Plan for job \"\(doc.jobName)\" against \(doc.store)\n\n"
        for region in doc.regions {
            let pack = region.stylePack.map { " with \($0)" } ?? ""
            out += "\(region.action.symbol) region \(region.id) (\(region.name))\(pack): \(verb(region.action))\n"
            out += "    tiles: \(countsText(region.tiles))"
            if region.estimatedBytes > 0 { out += ", ~\(ByteFormat.string(region.estimatedBytes)) to download" }
            out += "\n"
            for zoom in region.zooms {
                out += "      z\(pad(zoom.zoom, 2)) \(countsText(zoom.counts))\n"
            }
            out += "    resources: \(countsText(region.resources))\n"
        }
        for removed in doc.removedRegions {
            out += "- region \(removed.key ?? "row \(removed.rowID)"): remove\n"
            out += "    tiles: -\(removed.tileCount), resources: -\(removed.resourceCount)\n"
        }
        if let refresh = doc.refresh, refresh.resources + refresh.tiles > 0 {
            out += "~ \(refresh.tiles) tiles and \(refresh.resources) resources have expired: apply --refresh revalidates them\n"
        }
        for drift in doc.drift {
            out += "~ \(drift.url) changed upstream since the last apply (\(drift.pinned.prefix(19))… → \(drift.current.prefix(19))…)\n"
        }
        for template in doc.refetchTemplates {
            out += "~ every tile of \(template) is fetched again: its TileJSON changed upstream\n"
        }
        if !doc.notes.isEmpty { out += "\n" }
        for note in doc.notes {
            out += "note: \(note.subject): \(note.message)\n"
        }
        if !doc.stylePacks.isEmpty { out += "\n" }
        for pack in doc.stylePacks {
            let kinds = pack.resources.reduce(into: [ResourceKind: Int]()) { $0[$1.kind, default: 0] += 1 }
                .sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.name)" }.joined(separator: ", ")
            out += "style pack \(pack.id): \(pack.resources.count) resources (\(kinds)), \(pack.missing.count) to download\n"
            guard pack.overview != StyleOverview() else { continue }
            for source in pack.overview.sources {
                out += "    source \(source.name) (\(source.type)): \(fetchText(source, pack: pack))"
                let zooms = zoomsText(source.zooms)
                out += zooms.isEmpty ? "\n" : ", \(zooms)\n"
            }
            out += "    fonts: \(fontsText(pack.overview))\n"
        }
        let tiles = doc.tileTotals, resources = doc.resourceTotals
        out += "\nPlan: \(tiles.add) tiles to add, \(tiles.remove) to remove, \(tiles.keep) to keep; "
        out += "\(resources.add) resource links to add, \(resources.remove) to remove.\n"
        out += "Downloads: \(doc.tilesToDownload) tiles (~\(ByteFormat.string(doc.bytesToDownload))"
        out += doc.countsArePrecise ? ")" : ", estimated)"
        out += doc.hasChanges ? ".\n" : ". No changes: the store matches the job.\n"
        return out
    }

    /// A compact Markdown summary for pull-request comments.
    public static func markdown(_ doc: PlanDocument) -> String {
        var out = "### provision plan: \(doc.jobName)\n\n"
        out += "| | region | style pack | tiles + | tiles − | tiles = | est. download |\n"
        out += "|---|---|---|--:|--:|--:|--:|\n"
        for region in doc.regions {
            out += "| \(region.action.symbol == " " ? "" : "`\(region.action.symbol)`") | \(region.id) | \(region.stylePack ?? "—") "
            out += "| \(region.tiles.add) | \(region.tiles.remove) | \(region.tiles.keep) | \(ByteFormat.string(region.estimatedBytes)) |\n"
        }
        for removed in doc.removedRegions {
            out += "| `-` | \(removed.key ?? "row \(removed.rowID)") | | 0 | \(removed.tileCount) | 0 | 0 B |\n"
        }
        let tiles = doc.tileTotals
        out += "| | **total** | | **\(tiles.add)** | **\(tiles.remove)** | **\(tiles.keep)** | **\(ByteFormat.string(doc.bytesToDownload))** |\n\n"
        out += doc.hasChanges ? "\(doc.tilesToDownload) tiles to download.\n" : "No changes.\n"
        if let maxTiles = doc.limits.maxTiles {
            let used = tiles.add + tiles.keep
            out += "Limits: \(used) of \(maxTiles) tiles (\(maxTiles > 0 ? used * 100 / maxTiles : 0)%).\n"
        }
        for pack in doc.stylePacks where pack.overview != StyleOverview() {
            let count = pack.overview.sources.count
            out += "\n<details><summary>style pack \(pack.id): \(count) source\(count == 1 ? "" : "s"), "
            out += "\(pack.overview.fontStacks.count) font stack\(pack.overview.fontStacks.count == 1 ? "" : "s")</summary>\n\n"
            out += "| source | type | fetched | zooms |\n|---|---|---|---|\n"
            for source in pack.overview.sources {
                let cells = [source.name, source.type, fetchText(source, pack: pack, code: true), zoomsText(source.zooms)]
                out += "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
            }
            out += "\nFonts: \(fontsText(pack.overview)).\n\n</details>\n"
        }
        if !doc.notes.isEmpty {
            out += "\n<details><summary>\(doc.notes.count) note\(doc.notes.count == 1 ? "" : "s")</summary>\n\n"
            for note in doc.notes { out += "- **\(note.subject)**: \(note.message)\n" }
            out += "\n</details>\n"
        }
        return out
    }

    /// What is fetched for a source: `tiles TEMPLATE (first of N)`, a resource URL, or why nothing.
    /// With `code`, URLs are Markdown code spans.
    static func fetchText(_ source: StyleSourceSummary, pack: StylePackPlan, code: Bool = false) -> String {
        func url(_ text: String) -> String { code ? "`\(text)`" : text }
        switch source.fetch {
        case .tiles:
            guard let tileset = pack.sources.first(where: { $0.name == source.name }) else { return "tiles" }
            let scheme = tileset.scheme == "tms" ? " (tms)" : ""
            let listed = source.templateCount > 1 ? " (first of \(source.templateCount) templates)" : ""
            return "tiles \(url(tileset.urlTemplate))\(scheme)\(listed)"
        case .resource(let resource): return url(resource)
        case .nothing: return "nothing to fetch (inline)"
        case .skipped(let reason): return "skipped: \(reason)"
        }
    }

    /// The tile zooms of a source per region: `z10-14` when every region fetches the same ones,
    /// else `paris z10-14, london none`; empty when no region draws with the pack.
    public static func zoomsText(_ zooms: [RegionZooms]) -> String {
        func text(_ range: ClosedRange<Int>?) -> String {
            guard let range else { return "no zooms" }
            return range.count == 1 ? "z\(range.lowerBound)" : "z\(range.lowerBound)-\(range.upperBound)"
        }
        guard let first = zooms.first else { return "" }
        if zooms.allSatisfy({ $0.zooms == first.zooms }) { return text(first.zooms) }
        return zooms.map { "\($0.region) \(text($0.zooms))" }.joined(separator: ", ")
    }

    /// The font stacks and how many glyph ranges each fetches.
    public static func fontsText(_ overview: StyleOverview) -> String {
        guard overview.glyphsTemplate != nil else { return "none (the style has no glyphs template)" }
        guard !overview.fontStacks.isEmpty else { return "none (no symbol layer draws text)" }
        let count = overview.fontStacks.count
        return "\(count) stack\(count == 1 ? "" : "s") × \(overview.glyphRangesPerStack) glyph ranges: "
            + overview.fontStacks.map { $0.joined(separator: ", ") }.joined(separator: "; ")
    }

    static func verb(_ action: PlanAction) -> String {
        switch action {
        case .create: return "create"
        case .update: return "update"
        case .keep: return "no changes"
        case .delete: return "remove"
        }
    }

    static func countsText(_ c: ChangeCounts) -> String { "+\(c.add) -\(c.remove) =\(c.keep)" }

    static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
}

/// Human byte sizes (1024-based, one decimal).
public enum ByteFormat {
    /// `1536` → `1.5 KiB`.
    public static func string(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
