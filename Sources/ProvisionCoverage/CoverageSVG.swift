import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Draws one view of a coverage picture as SVG: the overview frame and the insets, each with its
/// graticule, the view's cells and the region outlines.
///
/// The markup is the documented contract (docs/coverage.md): each region outline is one `path`
/// with `data-region`; each cell is one `rect` with `data-z`, `data-x`, `data-y`, `data-state`
/// and `data-regions`, plus `data-change` on a single shared tile and `data-tiles` on an
/// aggregated cell. Insets draw the overview's cells and outlines again through `<use>`.
struct CoverageSVG {
    let map: CoverageMap
    let view: CoverageView
    let layout: CoverageLayout
    /// A prefix making ids unique when several views share one HTML page.
    var idPrefix: String { "cov-z\(view.zoom)" }

    /// Outline coordinates are integers in units this many per world unit: four per pixel of the
    /// most magnified panel, so outlines stay sharp in every inset.
    var outlineUnits: Double {
        4 * (panels.map(\.scale).max() ?? 1)
    }

    /// The `<svg>` element: standalone adds the namespace, the style sheet, a title band and the legend.
    func render(standalone: Bool) -> String {
        let top = standalone ? 36.0 : 0
        let bottom = standalone ? 64.0 : 0
        let height = layout.height + top + bottom
        var out = "<svg"
        if standalone { out += " xmlns=\"http://www.w3.org/2000/svg\"" }
        out += " class=\"coverage\" viewBox=\"0 0 \(fmt(CoverageLayout.width)) \(fmt(height))\" width=\"\(fmt(CoverageLayout.width))\""
        out += " height=\"\(fmt(height))\" data-kind=\"\(map.kind.rawValue)\" data-zoom=\"\(view.zoom)\""
        out += " data-cell-zoom=\"\(view.cellZoom)\" role=\"img\" aria-label=\"\(escape(caption))\">\n"
        if standalone {
            out += "<title>\(escape(map.title)): \(escape(caption))</title>\n"
            out += "<style>\n\(CoverageStyle.svg)</style>\n"
            out += "<text class=\"heading\" x=\"0\" y=\"22\">\(escape(map.title)) · z\(view.zoom)</text>\n"
            out += "<g transform=\"translate(0,\(fmt(top)))\">\n"
        }
        out += "<defs>\n"
        for (i, panel) in panels.enumerated() {
            out += "<clipPath id=\"\(idPrefix)-clip-\(i)\"><rect width=\"\(fmt(panel.width))\" height=\"\(fmt(panel.height))\"/></clipPath>\n"
        }
        out += "</defs>\n"
        out += overviewPanel()
        for (i, inset) in layout.insets.enumerated() { out += insetPanel(inset, index: i + 1) }
        if standalone {
            out += "</g>\n"
            out += legend(y: top + layout.height + 18)
        }
        out += "</svg>\n"
        return out
    }

    /// `z14: 5,401 tiles: 5,401 to add`, and what a cell is when the view is aggregated.
    var caption: String {
        var text = "z\(view.zoom): \(plural(view.tiles.total, "tile"))"
        let states = view.tiles.nonZero
        if !states.isEmpty { text += ": " + states.map { "\(grouped($0.count)) \($0.state.label)" }.joined(separator: ", ") }
        if view.isAggregated {
            text += "; each cell is a z\(view.cellZoom) tile standing for up to \(grouped(1 << (2 * (view.zoom - view.cellZoom)))) "
                + "z\(view.zoom) tiles"
        }
        return text
    }

    private var panels: [CoveragePanel] { [layout.overview] + layout.insets }

    // MARK: - Panels

    private func overviewPanel() -> String {
        let panel = layout.overview
        var out = "<g class=\"panel overview\">\n"
        out += "<rect class=\"frame\" width=\"\(fmt(panel.width))\" height=\"\(fmt(panel.height))\"/>\n"
        out += "<g clip-path=\"url(#\(idPrefix)-clip-0)\">\n"
        out += cells(in: panel)
        out += graticuleLines(panel)
        out += outlines(in: panel)
        out += "</g>\n"
        out += graticuleLabels(panel)
        out += markers(in: panel)
        out += "</g>\n"
        return out
    }

    private func insetPanel(_ inset: CoveragePanel, index: Int) -> String {
        let overview = layout.overview
        let k = inset.scale / overview.scale
        let tx = (overview.frame.minU - inset.frame.minU) * inset.scale
        let ty = (overview.frame.minV - inset.frame.minV) * inset.scale
        let names = inset.regions.map { map.regions[$0].name }
        let ids = inset.regions.map { attributeID(map.regions[$0].id) }.joined(separator: " ")
        var out = "<g class=\"panel inset\" data-regions=\"\(ids)\" transform=\"translate(\(fmt(inset.x)),\(fmt(inset.y)))\">\n"
        out += "<text class=\"panel-title\" x=\"0\" y=\"-6\">\(escape(names.joined(separator: ", ")))</text>\n"
        out += "<rect class=\"frame\" width=\"\(fmt(inset.width))\" height=\"\(fmt(inset.height))\"/>\n"
        out += "<g clip-path=\"url(#\(idPrefix)-clip-\(index))\">\n"
        let transform = "matrix(\(num(k)) 0 0 \(num(k)) \(num(tx)) \(num(ty)))"
        out += "<use href=\"#\(idPrefix)-cells\" transform=\"\(transform)\"/>\n"
        out += graticuleLines(inset)
        out += "<use href=\"#\(idPrefix)-outlines\" transform=\"\(transform)\"/>\n"
        out += "</g>\n"
        out += graticuleLabels(inset)
        out += "</g>\n"
        return out
    }

    // MARK: - Cells

    /// The cells, in units of one cell-zoom tile, placed by a transform into the overview.
    private func cells(in panel: CoveragePanel) -> String {
        let n = Double(1 << view.cellZoom)
        let originX = (panel.frame.minU * n).rounded(.down), originY = (panel.frame.minV * n).rounded(.down)
        let size = panel.scale / n
        let tx = (originX / n - panel.frame.minU) * panel.scale, ty = (originY / n - panel.frame.minV) * panel.scale
        let columns = Int((panel.frame.maxU * n).rounded(.up) - originX)
        var out = "<g id=\"\(idPrefix)-cells\" class=\"cells\" transform=\"matrix(\(num(size)) 0 0 \(num(size)) \(num(tx)) \(num(ty)))\">\n"
        out.reserveCapacity(view.cells.count * 120)
        let wrap = 1 << view.cellZoom
        for cell in view.cells {
            var x = cell.tile.x - Int(originX)
            // A frame across the antimeridian shows the tiles east of it one world further east.
            if x < 0 && x + wrap < columns { x += wrap } else if x >= columns && x - wrap >= 0 { x -= wrap }
            out += "<rect data-z=\"\(cell.tile.z)\" data-x=\"\(cell.tile.x)\" data-y=\"\(cell.tile.y)\" data-state=\"\(cell.state.rawValue)\""
            out += " data-regions=\"\(cell.regions.map { attributeID(map.regions[$0].id) }.joined(separator: " "))\""
            if let change = cell.change { out += " data-change=\"\(change.rawValue)\"" }
            if let tally = cell.tally {
                out += " data-tiles=\"\(tally.nonZero.map { "\($0.state.rawValue):\($0.count)" }.joined(separator: " "))\""
            }
            out += " x=\"\(x)\" y=\"\(cell.tile.y - Int(originY))\" width=\"1\" height=\"1\"/>\n"
        }
        out += "</g>\n"
        return out
    }

    // MARK: - Outlines

    private func outlines(in panel: CoveragePanel) -> String {
        let units = outlineUnits
        let scale = panel.scale / units
        var out = "<g id=\"\(idPrefix)-outlines\" class=\"outlines\" transform=\"matrix(\(num(scale)) 0 0 \(num(scale)) 0 0)\">\n"
        for region in map.regions {
            let d = pathData(region.shape, panel: panel, units: units)
            out += "<path data-region=\"\(attributeID(region.id))\" class=\"outline \(region.role.rawValue)\" d=\"\(d)\">"
            out += "<title>\(escape(region.name == region.id ? region.id : "\(region.name) (\(region.id))"))</title></path>\n"
        }
        out += places(in: panel, units: units)
        out += graphTiles(in: panel, units: units)
        out += "</g>\n"
        return out
    }

    /// Each routing pack's graph tiles of the level drawn, as outlined cells of Valhalla's grid
    /// (styled by attributes, as places are: the style sheet is the same with or without packs).
    private func graphTiles(in panel: CoveragePanel, units: Double) -> String {
        var out = ""
        for pack in map.routingPacks where !pack.tiles.isEmpty {
            out += "<g class=\"graph-tiles\" data-routing-pack=\"\(attributeID(pack.id))\" data-graph-level=\"\(pack.level)\" "
                + "fill=\"none\" stroke-width=\"1.5\">\n"
            for tile in pack.tiles {
                let (west, north) = WorldRect.point(LngLat(lng: tile.bounds.west, lat: tile.bounds.north))
                let (east, south) = WorldRect.point(LngLat(lng: tile.bounds.east, lat: tile.bounds.south))
                let x = Int(((west - panel.frame.minU) * units).rounded()), y = Int(((north - panel.frame.minV) * units).rounded())
                let width = max(1, Int(((east - panel.frame.minU) * units).rounded()) - x)
                let height = max(1, Int(((south - panel.frame.minV) * units).rounded()) - y)
                // vector-effect is not inherited: each cell keeps its stroke in pixels at any inset's scale.
                out += "<rect data-graph-index=\"\(tile.index)\" data-graph-state=\"\(tile.state.rawValue)\""
                    + " data-regions=\"\(tile.regions.map(attributeID).joined(separator: " "))\" stroke=\"\(tile.state.colour)\""
                    + (tile.state == .remove ? " stroke-dasharray=\"4 3\"" : "")
                    + " vector-effect=\"non-scaling-stroke\" x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"\(height)\"/>\n"
            }
            out += "</g>\n"
        }
        return out
    }

    /// Each search pack's places the view's zoom shows, as round dots (styled by attributes: the
    /// page's style sheet is the same with or without packs).
    private func places(in panel: CoveragePanel, units: Double) -> String {
        var out = ""
        for pack in map.searchPacks {
            let shown = pack.places.filter { $0.zooms.contains(view.zoom) }
            guard !shown.isEmpty else { continue }
            let d = pathData(CoverageShape(points: shown.map(\.position)), panel: panel, units: units)
            out += "<path data-search-pack=\"\(attributeID(pack.id))\" data-places=\"\(shown.count)\" class=\"places\" "
                + "\(CoverageStyle.placeDot) d=\"\(d)\">"
                + "<title>\(escape("search pack \(pack.id): \(plural(shown.count, "place")) at z\(view.zoom)"))</title></path>\n"
        }
        return out
    }

    /// The path of a shape in integer outline units from the panel's corner; consecutive positions
    /// that round to the same point are dropped, so huge polygons shrink to what can be seen.
    func pathData(_ shape: CoverageShape, panel: CoveragePanel, units: Double) -> String {
        var d = ""
        func coordinates(_ points: [LngLat]) -> [(Int, Int)] {
            var projected = points.map(WorldRect.point)
            // A ring wholly beyond the frame's east or west edge is drawn one world over.
            if let maxU = projected.map(\.u).max(), maxU < panel.frame.minU { projected = projected.map { ($0.u + 1, $0.v) } }
            if let minU = projected.map(\.u).min(), minU > panel.frame.maxU { projected = projected.map { ($0.u - 1, $0.v) } }
            var out: [(Int, Int)] = []
            for (u, v) in projected {
                let point = (Int(((u - panel.frame.minU) * units).rounded()), Int(((v - panel.frame.minV) * units).rounded()))
                if let last = out.last, last == point { continue }
                out.append(point)
            }
            return out
        }
        func append(_ points: [(Int, Int)], close: Bool) {
            guard let first = points.first else { return }
            d += "M\(first.0) \(first.1)"
            if points.count > 1 { d += "L" + points.dropFirst().map { "\($0.0) \($0.1)" }.joined(separator: " ") }
            if close { d += "Z" }
        }
        for ring in shape.rings { append(coordinates(ring), close: true) }
        for line in shape.lines { append(coordinates(line), close: false) }
        for point in coordinates(shape.points) { d += "M\(point.0) \(point.1)h0" }
        return d
    }

    /// A circle and the names of each place (an inset's regions) too small to see in the
    /// overview; the name goes left of the circle near the right edge.
    private func markers(in panel: CoveragePanel) -> String {
        var out = ""
        for inset in layout.insets {
            let boxes = inset.regions.compactMap { WorldRect(shape: map.regions[$0].shape) }
            guard let first = boxes.first else { continue }
            let box = boxes.dropFirst().reduce(first) { $0.union($1) }
            guard box.extent * panel.scale < 8 else { continue }
            let (x, y) = panel.local((box.minU + box.maxU) / 2, (box.minV + box.maxV) / 2)
            guard x >= 0, y >= 0, x <= panel.width, y <= panel.height else { continue }
            let name = inset.regions.map { map.regions[$0].name }.joined(separator: ", ")
            let leftward = x + 10 + Double(name.count) * 7.5 > panel.width
            out += "<g class=\"marker\"><circle cx=\"\(fmt(x))\" cy=\"\(fmt(y))\" r=\"7\"/>"
            out += "<text x=\"\(fmt(leftward ? x - 10 : x + 10))\" y=\"\(fmt(y + 4))\"\(leftward ? " text-anchor=\"end\"" : "")>"
            out += "\(escape(name))</text></g>\n"
        }
        return out
    }

    // MARK: - Graticule

    private func graticuleLines(_ panel: CoveragePanel) -> String {
        let graticule = Graticule(frame: panel.frame)
        var d = ""
        for lng in graticule.longitudes {
            let x = panel.local((lng + 180) / 360, 0).x
            d += "M\(fmt(x)) 0V\(fmt(panel.height))"
        }
        for lat in graticule.latitudes {
            let y = panel.local(0, WebMercator.tileY(lat: lat, zoom: 0)).y
            d += "M0 \(fmt(y))H\(fmt(panel.width))"
        }
        return d.isEmpty ? "" : "<path class=\"graticule\" d=\"\(d)\"/>\n"
    }

    private func graticuleLabels(_ panel: CoveragePanel) -> String {
        let graticule = Graticule(frame: panel.frame)
        var out = "<g class=\"graticule-labels\">"
        for lng in graticule.longitudes {
            let x = panel.local((lng + 180) / 360, 0).x
            guard x > 44, x < panel.width - 44 else { continue }
            let wrapped = (lng + 540).truncatingRemainder(dividingBy: 360) - 180
            out += "<text x=\"\(fmt(x + 3))\" y=\"11\">\(graticule.label(wrapped, positive: "E", negative: "W"))</text>"
        }
        for lat in graticule.latitudes {
            let y = panel.local(0, WebMercator.tileY(lat: lat, zoom: 0)).y
            guard y > 24, y < panel.height - 4 else { continue }
            out += "<text x=\"3\" y=\"\(fmt(y - 3))\">\(graticule.label(lat, positive: "N", negative: "S"))</text>"
        }
        return out + "</g>\n"
    }

    // MARK: - Legend

    private func legend(y: Double) -> String {
        var out = "<g class=\"legend\" transform=\"translate(0,\(fmt(y)))\">\n"
        var x = 0.0
        for state in CoverageStyle.states(for: map.kind) {
            out += "<rect class=\"swatch\" data-state=\"\(state.rawValue)\" x=\"\(fmt(x))\" y=\"-10\" width=\"12\" height=\"12\"/>"
            out += "<text x=\"\(fmt(x + 17))\" y=\"0\">\(state.label)</text>\n"
            x += 34 + Double(state.label.count) * 7
        }
        out += "<path class=\"outline job\" d=\"M\(fmt(x)) -4h24\"/><text x=\"\(fmt(x + 30))\" y=\"0\">region</text>\n"
        if !map.searchPacks.isEmpty {
            x += 84
            out += "<path \(CoverageStyle.placeDot) d=\"M\(fmt(x + 4)) -4h0\"/><text x=\"\(fmt(x + 14))\" y=\"0\">search pack place</text>\n"
        }
        if let level = map.routingPacks.first?.level {
            x += map.searchPacks.isEmpty ? 84 : 130
            out += "<rect x=\"\(fmt(x))\" y=\"-10\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"\(GraphTileState.add.colour)\"/>"
            out += "<text x=\"\(fmt(x + 17))\" y=\"0\">graph tile, level \(level) (green to add, blue kept, red dashed to remove, grey no roads)</text>\n"
        }
        out += "<text class=\"caption\" x=\"0\" y=\"24\">\(escape(caption))</text>\n"
        return out + "</g>\n"
    }
}

/// The colours and shapes of the pictures, shared by the SVG files and the HTML page.
enum CoverageStyle {
    /// A search pack's place: a round dot, styled by attributes so the style sheet is the same
    /// with or without packs (a deep magenta, apart from every state's fill).
    static let placeDot = "fill=\"none\" stroke=\"#c2006b\" stroke-width=\"4\" stroke-linecap=\"round\" "
        + "vector-effect=\"non-scaling-stroke\""

    /// The fill of each state.
    static let colours: [(CoverageState, String)] = [
        (.present, "#6fa8dc"), (.missing, "#f0a030"), (.add, "#2e9e4f"), (.remove, "#d9413a"), (.shared, "#8a5cc2"),
    ]

    /// The states a picture of `kind` can show, for its legend.
    static func states(for kind: CoverageMap.Kind) -> [CoverageState] {
        kind == .plan ? [.present, .add, .remove, .shared] : [.present, .missing, .shared]
    }

    /// The SVG rules (also inside the HTML page's style sheet).
    ///
    /// No rule names an ancestor: the insets draw the cells and outlines through `<use>`, whose
    /// copies match only selectors that stay inside the copied tree.
    static let svg: String = {
        var css = """
        svg.coverage { font: 11px "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; background: #fff; }
        .frame { fill: #f4f5f7; stroke: #b9bfc6; stroke-width: 1; }
        .graticule { fill: none; stroke: #8d96a0; stroke-opacity: .45; stroke-width: .6; }
        .graticule-labels text { fill: #5f6b76; font-size: 9.5px; }
        .cells rect { stroke: none; }
        .outline { fill: none; stroke: #1d232a; stroke-width: 1.6; stroke-linejoin: round; stroke-linecap: round; vector-effect: non-scaling-stroke; }
        .outline.removed { stroke: #a8322c; stroke-dasharray: 5 3; }
        .marker circle { fill: none; stroke: #1d232a; stroke-width: 1.6; }
        .marker text, .panel-title { fill: #1d232a; font-size: 12px; font-weight: bold; }
        .heading { fill: #1d232a; font-size: 15px; font-weight: bold; }
        .legend text { fill: #1d232a; font-size: 12px; }
        .legend .caption { fill: #3c4650; }

        """
        for (state, colour) in colours {
            css += "rect[data-state=\"\(state.rawValue)\"] { fill: \(colour); }\n"
        }
        return css
    }()
}

/// A number for SVG geometry: at most three decimals, no trailing zeros.
func fmt(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int(rounded)) }
    var text = String(format: "%.3f", rounded)
    while text.hasSuffix("0") { text.removeLast() }
    return text
}

/// A transform coefficient: seven significant digits (exponents allowed, as SVG reads them).
func num(_ value: Double) -> String {
    value == 0 ? "0" : String(format: "%.7g", value)
}

/// Text escaped for XML and HTML content and attribute values.
func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}

/// A region id as one token of a space-separated attribute: escaped, whitespace replaced by `_`.
func attributeID(_ id: String) -> String {
    escape(String(id.map { $0.isWhitespace ? "_" : $0 }))
}
