import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Renders coverage pictures: one self-contained HTML page with every zoom, or one SVG file
/// for one zoom. Nothing is fetched: styles are inline, fonts are the system's, and the zoom
/// selector is radio buttons and CSS, so the page works from `file://` without JavaScript.
public enum CoverageRenderer {
    /// The HTML page: every view, a zoom selector, the legend, the per-zoom counts, the document's
    /// tables and the JSON document itself. Well-formed XML too, so scripts can parse it.
    public static func html(_ map: CoverageMap) -> String {
        let layout = self.layout(map)
        let selected = map.views.last?.zoom
        var out = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <meta name="generator" content="provision"/>
        <title>\(escape(map.title))</title>
        <style>
        \(pageStyle(map))</style>
        </head>
        <body data-kind="\(map.kind.rawValue)" data-cell-budget="\(map.cellBudget)">
        <h1>\(escape(map.title))</h1>

        """
        for view in map.views {
            out += "<input type=\"radio\" name=\"zoom\" class=\"zoom-radio\" id=\"zoom-\(view.zoom)\""
            out += view.zoom == selected ? " checked=\"checked\"/>\n" : "/>\n"
        }
        out += "<nav class=\"zooms\" aria-label=\"zoom\"><span>Zoom</span>"
        for view in map.views {
            out += "<label for=\"zoom-\(view.zoom)\" data-zoom=\"\(view.zoom)\">\(view.zoom)</label>"
        }
        out += "</nav>\n"
        out += legend(map)
        out += "<div class=\"views\">\n"
        for view in map.views {
            let svg = CoverageSVG(map: map, view: view, layout: layout)
            out += "<section class=\"view\" data-zoom=\"\(view.zoom)\">\n"
            out += "<p class=\"caption\">\(escape(svg.caption))</p>\n"
            out += svg.render(standalone: false)
            out += zoomTable(map, view: view)
            for note in view.notes { out += "<p class=\"note\">\(escape(note))</p>\n" }
            out += "</section>\n"
        }
        if map.views.isEmpty { out += "<p class=\"note\">No tiles at any zoom.</p>\n" }
        out += "</div>\n"
        for table in map.tables { out += self.table(table) }
        out += "<details><summary>\(map.kind == .plan ? "plan --json" : "audit --json")</summary>\n<pre>"
        out += escape(map.document.serialized(.prettySorted)) + "</pre>\n</details>\n"
        out += "<footer>Written by provision. Each region outline is a path with data-region; each cell a rect with "
        out += "data-z, data-x, data-y, data-state (present, missing, add, remove, shared) and data-regions "
        out += "(see docs/coverage.md). At most \(grouped(map.cellBudget)) cells; denser zooms are drawn as coarser tiles.</footer>\n"
        out += "</body>\n</html>\n"
        return out
    }

    /// The SVG file of one zoom (`--svg FILE --zoom Z`), or nil when the map has no view of `zoom`.
    public static func svg(_ map: CoverageMap, zoom: Int) -> String? {
        guard let view = map.view(zoom: zoom) else { return nil }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + CoverageSVG(map: map, view: view, layout: layout(map)).render(standalone: true)
    }

    /// The frames of a map: around its regions, else around the cells of its views.
    static func layout(_ map: CoverageMap) -> CoverageLayout {
        var cellBox: WorldRect?
        for view in map.views {
            let n = Double(1 << view.cellZoom)
            for cell in view.cells {
                let box = WorldRect(minU: Double(cell.tile.x) / n, minV: Double(cell.tile.y) / n,
                                    maxU: Double(cell.tile.x + 1) / n, maxV: Double(cell.tile.y + 1) / n)
                cellBox = cellBox?.union(box) ?? box
            }
        }
        return CoverageLayout(regions: map.regions, fallback: cellBox)
    }

    // MARK: - Parts of the page

    private static func legend(_ map: CoverageMap) -> String {
        var out = "<ul class=\"legend\">"
        for state in CoverageStyle.states(for: map.kind) {
            out += "<li><svg width=\"14\" height=\"14\" class=\"coverage\"><rect data-state=\"\(state.rawValue)\" width=\"14\" "
            out += "height=\"14\"/></svg>\(state.label)</li>"
        }
        out += "<li><svg width=\"26\" height=\"14\" class=\"coverage\"><path class=\"outline job\" d=\"M1 7h24\"/></svg>region</li>"
        if map.regions.contains(where: { $0.role == .removed }) {
            out += "<li><svg width=\"26\" height=\"14\" class=\"coverage\"><path class=\"outline removed\" d=\"M1 7h24\"/></svg>"
            out += "region the job drops</li>"
        }
        if !map.searchPacks.isEmpty {
            out += "<li><svg width=\"14\" height=\"14\" class=\"coverage\"><path \(CoverageStyle.placeDot) d=\"M7 7h0\"/></svg>"
            out += "search pack place</li>"
        }
        if let level = map.routingPacks.first?.level {
            out += "<li><svg width=\"14\" height=\"14\" class=\"coverage\"><rect x=\"1\" y=\"1\" width=\"12\" height=\"12\" "
            out += "fill=\"none\" stroke=\"\(GraphTileState.add.colour)\"/></svg>graph tile of level \(level) (outlined: "
            out += "green to add, blue kept, red dashed to remove, grey no roads)</li>"
        }
        return out + "</ul>\n"
    }

    /// Per region, its tiles at this zoom by its own state; the last row counts each tile once.
    private static func zoomTable(_ map: CoverageMap, view: CoverageView) -> String {
        let states: [CoverageState] = map.kind == .plan ? [.present, .add, .remove] : [.present, .missing]
        var out = "<table class=\"zoom-counts\" data-zoom=\"\(view.zoom)\"><caption>Tiles at z\(view.zoom) per region "
        out += "(a tile two regions share counts for each)</caption>\n<thead><tr><th>region</th><th>name</th>"
        for state in states { out += "<th>\(state.label)</th>" }
        out += "<th>shared</th></tr></thead>\n<tbody>\n"
        for (i, region) in map.regions.enumerated() {
            let counts = i < view.regionTiles.count ? view.regionTiles[i] : StateCounts()
            out += "<tr data-region=\"\(attributeID(region.id))\"><td>\(escape(region.id))</td><td>\(escape(region.name))</td>"
            for state in states { out += "<td data-state=\"\(state.rawValue)\">\(grouped(counts[state]))</td>" }
            out += "<td data-state=\"shared\">\(grouped(counts[.shared]))</td></tr>\n"
        }
        out += "</tbody>\n<tfoot><tr><td>distinct tiles</td><td>\(grouped(view.tiles.total))</td>"
        for state in states { out += "<td data-state=\"\(state.rawValue)\">\(grouped(view.tiles[state]))</td>" }
        out += "<td data-state=\"shared\">\(grouped(view.tiles[.shared]))</td></tr></tfoot></table>\n"
        return out
    }

    private static func table(_ table: CoverageTable) -> String {
        var out = "<table class=\"numbers\"><caption>\(escape(table.caption))</caption>\n"
        if table.header.contains(where: { !$0.isEmpty }) {
            out += "<thead><tr>" + table.header.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead>\n"
        }
        out += "<tbody>\n"
        for row in table.rows { out += "<tr>" + row.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n" }
        out += "</tbody>\n"
        if !table.footer.isEmpty {
            out += "<tfoot><tr>" + table.footer.map { "<td>\(escape($0))</td>" }.joined() + "</tr></tfoot>\n"
        }
        return out + "</table>\n"
    }

    private static func pageStyle(_ map: CoverageMap) -> String {
        var css = """
        body { font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: #1d232a; background: #fff; margin: 16px 20px; max-width: 960px; }
        h1 { font-size: 18px; margin: 0 0 10px; }
        .zoom-radio { position: absolute; opacity: 0; pointer-events: none; }
        nav.zooms { display: flex; gap: 4px; align-items: center; margin: 0 0 8px; flex-wrap: wrap; }
        nav.zooms span { margin-right: 6px; font-weight: bold; }
        nav.zooms label { border: 1px solid #b9bfc6; border-radius: 3px; padding: 1px 8px; cursor: pointer; min-width: 16px; text-align: center; }
        ul.legend { list-style: none; padding: 0; margin: 0 0 8px; display: flex; flex-wrap: wrap; gap: 14px; }
        ul.legend li { display: flex; align-items: center; gap: 5px; }
        .view { display: none; }
        .view .caption { margin: 0 0 6px; color: #3c4650; }
        table { border-collapse: collapse; margin: 12px 0; font-size: 13px; }
        caption { text-align: left; font-weight: bold; padding-bottom: 4px; }
        th, td { border-bottom: 1px solid #dde1e5; padding: 2px 10px 2px 0; text-align: right; }
        th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
        tfoot td { font-weight: bold; }
        .note { color: #8a4a00; }
        details pre { font-size: 11px; max-height: 360px; overflow: auto; background: #f4f5f7; padding: 8px; }
        footer { margin-top: 16px; color: #5f6b76; font-size: 12px; }

        """
        for view in map.views {
            css += "#zoom-\(view.zoom):checked ~ .views .view[data-zoom=\"\(view.zoom)\"] { display: block; }\n"
            css += "#zoom-\(view.zoom):checked ~ nav.zooms label[data-zoom=\"\(view.zoom)\"] { background: #1d232a; color: #fff; }\n"
            css += "#zoom-\(view.zoom):focus-visible ~ nav.zooms label[data-zoom=\"\(view.zoom)\"] { outline: 2px solid #2e6fd8; }\n"
        }
        return css + CoverageStyle.svg
    }
}

extension CoverageRenderer {
    /// The Markdown summary's line about the picture: a link when CI says where it publishes the
    /// file (`url`), else the file's name; then the zooms and, for the finest, what changes.
    public static func markdownLine(_ map: CoverageMap, file: String, url: String?) -> String {
        let name = URL(fileURLWithPath: file).lastPathComponent
        let target = url.map { "[\(markdownText(name))](\(markdownURL($0)))" } ?? "`\(name.replacingOccurrences(of: "`", with: "'"))`"
        var line = "Coverage map: \(target)"
        if let first = map.views.first, let last = map.views.last {
            line += first.zoom == last.zoom ? " (z\(first.zoom)" : " (z\(first.zoom)–\(last.zoom)"
            let states = last.tiles.nonZero.map { "\(grouped($0.count)) \($0.state.label)" }.joined(separator: ", ")
            line += states.isEmpty ? ")" : "; z\(last.zoom): \(states))"
        }
        return line + (url == nil ? ", attached to this run." : ".")
    }

    /// Text with Markdown's link punctuation escaped.
    static func markdownText(_ text: String) -> String {
        text.reduce(into: "") { out, c in
            if "[]()\\*_`<>|".contains(c) { out.append("\\") }
            out.append(c)
        }
    }

    /// A link target with the characters that would end it percent-encoded.
    static func markdownURL(_ url: String) -> String {
        url.reduce(into: "") { out, c in
            switch c {
            case " ": out += "%20"
            case "(": out += "%28"
            case ")": out += "%29"
            case "<": out += "%3C"
            case ">": out += "%3E"
            default: out.append(c)
            }
        }
    }
}
