import Foundation
import ProvisionFoundation
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
            out += "    tiles: -\(grouped(removed.tileCount)), resources: -\(grouped(removed.resourceCount))\n"
        }
        if let refresh = doc.refresh, refresh.resources + refresh.tiles > 0 {
            let expired = listedCounts([(refresh.tiles, "tile"), (refresh.resources, "resource")])
            out += "~ \(expired.text) \(expired.isSingular ? "has" : "have") expired: apply --refresh revalidates "
                + "\(expired.isSingular ? "it" : "them")\n"
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
                .sorted { $0.key < $1.key }.map { kindText($0.value, $0.key) }.joined(separator: ", ")
            out += "style pack \(pack.id): \(plural(pack.resources.count, "resource")) (\(kinds)), "
                + "\(grouped(pack.missing.count)) to download\n"
            guard pack.overview != StyleOverview() else { continue }
            for source in pack.overview.sources {
                out += "    source \(source.name) (\(source.type)): \(fetchText(source, pack: pack))"
                let zooms = zoomsText(source.zooms)
                out += zooms.isEmpty ? "\n" : ", \(zooms)\n"
            }
            out += "    fonts: \(fontsText(pack, doc: doc))\n"
        }
        if let footprint = doc.footprint {
            out += "\n" + FootprintRenderer.text(footprint, title: "Bytes in offline.db after the apply")
        }
        if !doc.searchPacks.isEmpty { out += "\n" }
        for pack in doc.searchPacks {
            let what = pack.action == .build ? "build (\(pack.reason))" : "keep"
            out += "search pack \(pack.pack.id): \(what), \(pack.pack.file) from \(listed(pack.sources.map(\.name))) over "
                + "\(plural(pack.regions.count, "region"))\n"
        }
        out += routingPacksText(doc.routingPacks)
        let tiles = doc.tileTotals, resources = doc.resourceTotals
        let scope = doc.shard.map { " (shard \($0.shard), this shard's apply)" } ?? ""
        out += "\nPlan\(scope): \(plural(tiles.add, "tile")) to add, \(grouped(tiles.remove)) to remove, \(grouped(tiles.keep)) to keep; "
        out += "\(plural(resources.add, "resource link")) to add, \(grouped(resources.remove)) to remove.\n"
        out += "Downloads: \(plural(doc.tilesToDownload, "tile")) (~\(ByteFormat.string(doc.bytesToDownload))"
        out += doc.countsArePrecise ? ")" : ", estimated)"
        out += doc.hasChanges ? ".\n"
            : doc.shard.map { ". No changes: the store holds shard \($0.shard)'s share of the job.\n" }
            ?? ". No changes: the store matches the job.\n"
        if !doc.driftChecked { out += Self.driftNotChecked + "\n" }
        return out
    }

    /// A block per routing pack: what happens to its extract, then per level the graph tiles added,
    /// removed and kept (absent cells counted as kept) with their bytes, per region and level the
    /// tiles added and kept, and what must be downloaded.
    static func routingPacksText(_ packs: [RoutingPackPlan]) -> String {
        guard !packs.isEmpty else { return "" }
        var out = "\n"
        for pack in packs {
            let symbol = pack.action == .build ? "~" : " "
            let what = pack.action == .build ? "build (\(pack.reason))" : "keep"
            out += "\(symbol) routing pack \(pack.pack.id): \(what), \(pack.pack.file) over \(plural(pack.regions.count, "region")), "
                + "\(plural(pack.add.count, "graph tile")) to download (\(addedBytesText(pack.bytesToDownload)))\n"
            for (level, bytes) in zip(pack.levelChanges, pack.levelBytes) {
                out += "      level \(level.level) \(countsText(level.counts)), bytes \(routingBytesText(bytes.bytes))\n"
            }
            for change in pack.regionChanges {
                out += "    region \(change.tiles.region) level \(change.tiles.level) +\(grouped(change.add)) =\(grouped(change.keep)), "
                    + "bytes \(routingBytesText(change.bytes, removed: false))\n"
            }
        }
        return out
    }

    /// `12.1 KiB`, or `size unknown until fetched`.
    static func addedBytesText(_ bytes: Int64?) -> String { bytes.map(ByteFormat.string) ?? "size unknown until fetched" }

    /// `+12.1 KiB -0 B =55.5 KiB` (`+?` when the added tiles' size is unknown until fetched).
    static func routingBytesText(_ bytes: RoutingPackPlan.RoutingBytes, removed: Bool = true) -> String {
        "+\(bytes.add.map(ByteFormat.string) ?? "?")" + (removed ? " -\(ByteFormat.string(bytes.remove))" : "")
            + " =\(ByteFormat.string(bytes.keep))"
    }

    /// What a plan made with `--offline` says under its totals and in its Markdown summary.
    static let driftNotChecked = "Upstream drift not checked (--offline): planned from the store's copies of the styles and "
        + "TileJSONs; run plan without --offline to compare them with upstream."

    /// A compact Markdown summary for pull-request comments; `coverage` is a line about the
    /// coverage picture (`CoverageRenderer.markdownLine`), placed after the totals.
    public static func markdown(_ doc: PlanDocument, coverage: String? = nil) -> String {
        var out = "### provision plan: \(doc.jobName)\(doc.shard.map { " (shard \($0.shard))" } ?? "")\n\n"
        out += "| | region | style pack | tiles + | tiles − | tiles = | est. download |\n"
        out += "|---|---|---|--:|--:|--:|--:|\n"
        for region in doc.regions {
            out += "| \(region.action.symbol == " " ? "" : "`\(region.action.symbol)`") | \(region.id) | \(region.stylePack ?? "—") "
            out += "| \(grouped(region.tiles.add)) | \(grouped(region.tiles.remove)) | \(grouped(region.tiles.keep)) "
            out += "| \(ByteFormat.string(region.estimatedBytes)) |\n"
        }
        for removed in doc.removedRegions {
            out += "| `-` | \(removed.key ?? "row \(removed.rowID)") | | 0 | \(grouped(removed.tileCount)) | 0 | 0 B |\n"
        }
        let tiles = doc.tileTotals
        out += "| | **total** | | **\(grouped(tiles.add))** | **\(grouped(tiles.remove))** | **\(grouped(tiles.keep))** "
        out += "| **\(ByteFormat.string(doc.bytesToDownload))** |\n\n"
        out += doc.hasChanges ? "\(plural(doc.tilesToDownload, "tile")) to download.\n" : "No changes.\n"
        if !doc.driftChecked { out += Self.driftNotChecked + "\n" }
        if let maxTiles = doc.limits.maxTiles {
            let used = tiles.add + tiles.keep
            out += "Limits: \(grouped(used)) of \(plural(maxTiles, "tile")) (\(maxTiles > 0 ? used * 100 / maxTiles : 0)%).\n"
        }
        for pack in doc.routingPacks {
            let levels = zip(pack.levelChanges, pack.levelBytes).map { level, bytes in
                "level \(level.level) \(countsText(level.counts)) (\(routingBytesText(bytes.bytes)))"
            }.joined(separator: ", ")
            out += "Routing pack `\(pack.pack.id)`: \(pack.action == .build ? "build (\(pack.reason))" : "keep"), "
                + "\(plural(pack.add.count, "graph tile")) to download, \(addedBytesText(pack.bytesToDownload)) (\(levels)).\n"
        }
        if let coverage { out += coverage + "\n" }
        if let footprint = doc.footprint {
            out += "\n" + FootprintRenderer.markdown(footprint, title: "Bytes in offline.db after the apply")
        }
        for pack in doc.stylePacks where pack.overview != StyleOverview() {
            out += "\n<details><summary>style pack \(pack.id): \(plural(pack.overview.sources.count, "source")), "
            out += "\(plural(pack.overview.fontStacks.count, "font stack"))</summary>\n\n"
            out += "| source | type | fetched | zooms |\n|---|---|---|---|\n"
            for source in pack.overview.sources {
                let cells = [source.name, source.type, fetchText(source, pack: pack, code: true), zoomsText(source.zooms)]
                out += "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
            }
            out += "\nFonts: \(fontsText(pack, doc: doc)).\n\n</details>\n"
        }
        if !doc.notes.isEmpty {
            out += "\n<details><summary>\(plural(doc.notes.count, "note"))</summary>\n\n"
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
            let listed = source.templateCount > 1 ? " (first of \(plural(source.templateCount, "template")))" : ""
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

    /// The font stacks and the glyph ranges fetched: per stack, or for `"glyphs": "used"` in
    /// all, and whether the apply determines them.
    static func fontsText(_ pack: StylePackPlan, doc: PlanDocument) -> String {
        guard pack.glyphPolicy == .used, pack.overview.glyphsTemplate != nil, !pack.overview.fontStacks.isEmpty else {
            return fontsText(pack.overview)
        }
        let ranges = pack.resources.filter { $0.kind == .glyphs }.count
        let how = doc.glyphsAtApply(pack: pack.id)
            ? "glyphs \"used\": determined at apply from the labels of the tiles (\(plural(ranges, "glyph range")) known now)"
            : "glyphs \"used\": \(plural(ranges, "glyph range")) the labels of the stored tiles need"
        return "\(plural(pack.overview.fontStacks.count, "stack")), \(how): "
            + pack.overview.fontStacks.map { $0.joined(separator: ", ") }.joined(separator: "; ")
    }

    /// The font stacks and how many glyph ranges each fetches.
    public static func fontsText(_ overview: StyleOverview) -> String {
        guard overview.glyphsTemplate != nil else { return "none (the style has no glyphs template)" }
        guard !overview.fontStacks.isEmpty else { return "none (no symbol layer draws text)" }
        return "\(plural(overview.fontStacks.count, "stack")) × \(plural(overview.glyphRangesPerStack, "glyph range")): "
            + overview.fontStacks.map { $0.joined(separator: ", ") }.joined(separator: "; ")
    }

    static func verb(_ action: PlanAction) -> String {
        switch action {
        case .add: return "create"
        case .update: return "update"
        case .keep: return "no changes"
        case .remove: return "remove"
        }
    }

    static func countsText(_ c: ChangeCounts) -> String { "+\(grouped(c.add)) -\(grouped(c.remove)) =\(grouped(c.keep))" }

    /// `3 glyph ranges`, `1 sprite image`: a count of resources of one kind, in words.
    static func kindText(_ count: Int, _ kind: ResourceKind) -> String {
        switch kind {
        case .glyphs: return plural(count, "glyph range")
        case .spriteImage: return plural(count, "sprite image")
        case .spriteJSON: return plural(count, "sprite index", "sprite indexes")
        case .source: return plural(count, "TileJSON", "TileJSONs")
        case .unknown: return plural(count, "other resource")
        default: return plural(count, kind.name)
        }
    }

    static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
}
