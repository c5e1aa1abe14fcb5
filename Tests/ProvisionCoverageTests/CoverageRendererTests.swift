import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import ProvisionTestSupport
import TileMath
import XCTest

/// The markup of the coverage pictures, read back with an XML parser as a script would: the
/// documented `data-*` contract, one path per region, one cell per tile, nothing fetched, and the
/// size budget.
final class CoverageRendererTests: XCTestCase {
    typealias F = CoverageFixtures

    static let far = CoverArea.bbox(BoundingBox(west: -74.2, south: 40.5, east: -73.7, north: 40.9))

    /// West and east overlap; "far" (New York) is far away: the picture gets two insets.
    func map(budget: Int = CoverageMap.defaultCellBudget) throws -> CoverageMap {
        var east = F.row("east", rowID: nil, area: F.east, sets: [F.tileSet(F.vector, zooms: 5...7)])
        east.name = "East <&> \"Côte\" d'Azur"
        let plan = F.plan([F.row("west", rowID: nil, area: F.west, sets: [F.tileSet(F.vector, zooms: 5...7)]), east,
                           F.row("far", rowID: nil, area: Self.far, sets: [F.tileSet(F.vector, zooms: 6...8)])])
        return try CoverageMap.plan(plan, document: F.document(plan), store: nil, options: CoverageOptions(cellBudget: budget))
    }

    /// The cells of a view as the markup states them.
    func cellAttributes(_ map: CoverageMap, _ view: CoverageView) -> [[String: String]] {
        view.cells.map { cell in
            var attributes = ["data-z": "\(cell.tile.z)", "data-x": "\(cell.tile.x)", "data-y": "\(cell.tile.y)",
                              "data-state": cell.state.rawValue,
                              "data-regions": cell.regions.map { map.regions[$0].id }.joined(separator: " ")]
            if let change = cell.change { attributes["data-change"] = change.rawValue }
            if let tally = cell.tally { attributes["data-tiles"] = tally.nonZero.map { "\($0.state.rawValue):\($0.count)" }.joined(separator: " ") }
            return attributes
        }
    }

    func markupCells(_ root: MarkupElement) -> [[String: String]] {
        root.elements("rect").filter { $0.attributes["data-z"] != nil }.map { element in
            element.attributes.filter { $0.key.hasPrefix("data-") }
        }
    }

    /// Every attribute or style that would make a browser fetch something: a `src`, `href` or
    /// `xlink:href` not pointing inside the document, a CSS `url()` that is not `url(#…)`, an
    /// `@import`, a `<script>`, `<link>`, `<iframe>`, `<img>` or `<object>`.
    static func externalReferences(_ root: MarkupElement) -> [String] {
        var found: [String] = []
        let url = try? NSRegularExpression(pattern: #"url\(\s*['"]?([^'")]*)"#)
        for element in root.all {
            if ["script", "link", "iframe", "img", "object", "embed", "audio", "video", "source"].contains(element.name) {
                found.append("<\(element.name)>")
            }
            for (name, value) in element.attributes where ["src", "href", "xlink:href", "srcset", "action", "poster", "data"].contains(name) {
                if !value.hasPrefix("#") { found.append("\(element.name) \(name)=\(value)") }
            }
            let css = (element.name == "style" ? element.allText : "") + (element.attributes["style"] ?? "")
                + (element.attributes.filter { $0.key != "style" && $0.value.contains("url(") }.values.joined(separator: " "))
            if css.contains("@import") { found.append("@import in <\(element.name)>") }
            for match in url?.matches(in: css, range: NSRange(css.startIndex..., in: css)) ?? [] {
                let target = Range(match.range(at: 1), in: css).map { String(css[$0]) } ?? ""
                if !target.hasPrefix("#") { found.append("url(\(target)) in <\(element.name)>") }
            }
        }
        return found
    }

    // MARK: - SVG

    func testTheSVGOfAZoomFollowsTheContract() throws {
        let map = try self.map()
        let view = try XCTUnwrap(map.view(zoom: 6))
        let text = try XCTUnwrap(CoverageRenderer.svg(map, zoom: 6))
        XCTAssertTrue(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""))
        let root = try MarkupElement.parse(Data(text.utf8))
        XCTAssertEqual(root.name, "svg")
        XCTAssertEqual(root.attributes["data-zoom"], "6")
        XCTAssertEqual(root.attributes["data-cell-zoom"], "6")
        // One path per region, named by its id.
        let outlines = root.elements("path").filter { $0.attributes["data-region"] != nil }
        XCTAssertEqual(outlines.compactMap { $0.attributes["data-region"] }, ["west", "east", "far"])
        XCTAssertTrue(outlines.allSatisfy { !($0.attributes["d"] ?? "").isEmpty })
        XCTAssertEqual(outlines[1].allText, "East <&> \"Côte\" d'Azur (east)", "names are escaped, not lost")
        // One cell per tile, each stating what the model says, in the same order.
        XCTAssertEqual(markupCells(root), cellAttributes(map, view))
        XCTAssertEqual(view.cells.count, Set(F.tiles(F.west, zoom: 6)).union(F.tiles(F.east, zoom: 6)).union(F.tiles(Self.far, zoom: 6)).count)
        XCTAssertTrue(markupCells(root).contains { $0["data-state"] == "shared" && $0["data-regions"] == "west east" && $0["data-change"] == "add" })
        // Three places far apart: the overview and an inset each, which draw the cells again by reference.
        let ids = Set(root.all.compactMap { $0.attributes["id"] })
        let uses = root.elements("use").compactMap { $0.attributes["href"] }
        XCTAssertEqual(uses.count, 4, "cells and outlines in each of two insets")
        XCTAssertTrue(uses.allSatisfy { $0.hasPrefix("#") && ids.contains(String($0.dropFirst())) }, "\(uses)")
        XCTAssertEqual(root.elements("g").filter { $0.attributes["class"] == "panel inset" }.compactMap { $0.attributes["data-regions"] },
                       ["west east", "far"])
        XCTAssertEqual(Self.externalReferences(root), [])
        XCTAssertNil(CoverageRenderer.svg(map, zoom: 4), "no view of z4")
    }

    /// A routing pack's graph tiles: one `rect` per tile drawn in a `g.graph-tiles` of each view, in
    /// the overview only (insets draw them again through `<use>`), those to add and remove first
    /// when the budget is short, all of them counted in the table.
    func testGraphTilesAreCellsWithTheirStateAndRegions() throws {
        func tile(_ index: Int, _ state: GraphTileState, _ regions: [String]) -> CoverageRoutingPack.Tile {
            let west = Double(index % 1440) * 0.25 - 180, south = Double(index / 1440) * 0.25 - 90
            return CoverageRoutingPack.Tile(index: index, bounds: BoundingBox(west: west, south: south, east: west + 0.25, north: south + 0.25),
                                            state: state, regions: regions)
        }
        let tiles = [tile(800_001, .present, ["west"]), tile(800_002, .absent, ["west", "east"]),
                     tile(800_003, .remove, []), tile(800_004, .add, ["east"])]
        let map = try self.map().showing(routing: [CoverageRoutingPack(id: "drive", level: 2, status: "to build (new)",
                                                                       tiles: tiles, drawn: 3)])
        let root = try MarkupElement.parse(Data(try XCTUnwrap(CoverageRenderer.svg(map, zoom: 6)).utf8))
        let groups = root.elements("g").filter { $0.attributes["class"] == "graph-tiles" }
        XCTAssertEqual(groups.map { [$0.attributes["data-routing-pack"], $0.attributes["data-graph-level"]] }, [["drive", "2"]])
        let drawn = groups.flatMap { $0.elements("rect") }.map {
            [$0.attributes["data-graph-index"] ?? "", $0.attributes["data-graph-state"] ?? "", $0.attributes["data-regions"] ?? ""]
        }
        XCTAssertEqual(drawn, [["800004", "add", "east"], ["800003", "remove", ""], ["800001", "present", "west"]],
                       "the budget of 3 drops the cell without roads first")
        let widths = groups.flatMap { $0.elements("rect") }.compactMap { $0.attributes["width"].flatMap(Int.init) }
        XCTAssertTrue(widths.allSatisfy { $0 > 0 })
        let rows = root.elements("table")
        XCTAssertTrue(rows.isEmpty, "an SVG file has no tables")
        let page = try MarkupElement.parse(Data(CoverageRenderer.html(map).utf8))
        let table = try XCTUnwrap(page.elements("table").first { $0.allText.contains("Routing packs") })
        XCTAssertEqual(table.elements("td").map(\.allText), ["drive", "2", "to build (new)", "1", "1", "1", "1", "3"],
                       "present, to add, to remove, no roads: every tile counted; drawn: 3")
    }

    func testAggregatedCellsSayWhatTheyHold() throws {
        let map = try self.map(budget: 60)
        let view = try XCTUnwrap(map.views.first { $0.isAggregated })
        let root = try MarkupElement.parse(Data(try XCTUnwrap(CoverageRenderer.svg(map, zoom: view.zoom)).utf8))
        let cells = markupCells(root)
        XCTAssertEqual(cells, cellAttributes(map, view))
        XCTAssertTrue(cells.allSatisfy { $0["data-z"] == "\(view.cellZoom)" && $0["data-tiles"] != nil })
        let total = cells.flatMap { ($0["data-tiles"] ?? "").split(separator: " ") }.reduce(0) { $0 + (Int($1.split(separator: ":")[1]) ?? 0) }
        XCTAssertEqual(total, view.tiles.total)
        XCTAssertEqual(root.attributes["data-cell-zoom"], "\(view.cellZoom)")
    }

    // MARK: - HTML

    func testTheHTMLPageIsWellFormedWithAViewPerZoom() throws {
        let map = try self.map()
        let root = try MarkupElement.parse(Data(CoverageRenderer.html(map).utf8))
        XCTAssertEqual(root.name, "html")
        let radios = root.elements("input").filter { $0.attributes["type"] == "radio" }
        XCTAssertEqual(radios.compactMap { $0.attributes["id"] }, ["zoom-5", "zoom-6", "zoom-7", "zoom-8"])
        XCTAssertEqual(radios.filter { $0.attributes["checked"] != nil }.compactMap { $0.attributes["id"] }, ["zoom-8"])
        XCTAssertEqual(Set(root.elements("label").compactMap { $0.attributes["for"] }), Set(radios.compactMap { $0.attributes["id"] }))
        let sections = root.elements("section").filter { $0.attributes["class"] == "view" }
        XCTAssertEqual(sections.compactMap { $0.attributes["data-zoom"] }, ["5", "6", "7", "8"])
        for (section, view) in zip(sections, map.views) {
            let svgs = section.elements("svg")
            XCTAssertEqual(svgs.count, 1)
            XCTAssertEqual(markupCells(section), cellAttributes(map, view), "z\(view.zoom)")
            XCTAssertEqual(section.elements("path").compactMap { $0.attributes["data-region"] }, ["west", "east", "far"])
        }
        // Each zoom has a rule that shows its view when its radio is checked: no script needed.
        let css = root.elements("style").map(\.allText).joined()
        for view in map.views { XCTAssertTrue(css.contains("#zoom-\(view.zoom):checked ~ .views .view[data-zoom=\"\(view.zoom)\"]")) }
        XCTAssertTrue(root.elements("script").isEmpty)
        // The document's JSON, whole, and its tables.
        let json = try XCTUnwrap(root.elements("pre").first?.allText)
        XCTAssertEqual(try JSONValue.parse(Data(json.utf8)).serialized(.canonical), map.document.serialized(.canonical))
        let captions = root.elements("caption").map(\.allText)
        XCTAssertTrue(captions.contains("Regions (tile and resource links, as plan --json counts them)"), "\(captions)")
        // Ids are unique across the views, as one page holds them all.
        let ids = root.all.compactMap { $0.attributes["id"] }
        XCTAssertEqual(ids.count, Set(ids).count)
        XCTAssertEqual(Self.externalReferences(root), [])
    }

    func testTheReferenceCheckFindsWhatWouldBeFetched() throws {
        let page = """
            <html><head><link rel="stylesheet" href="https://example.invalid/a.css"/><style>@import "x.css"; \
            a { background: url('//example.invalid/b.png') } b { fill: url(#ok) }</style></head>\
            <body><img src="http://example.invalid/c.png"/><svg><use href="#local"/><image href="d.png"/></svg></body></html>
            """
        let found = Self.externalReferences(try MarkupElement.parse(Data(page.utf8)))
        XCTAssertEqual(found, ["<link>", "link href=https://example.invalid/a.css", "@import in <style>",
                               "url(//example.invalid/b.png) in <style>", "<img>", "img src=http://example.invalid/c.png",
                               "image href=d.png"])
    }

    /// The documented budget: a plan of about a million tiles makes a page under 5 MB.
    func testAMillionTilePlanStaysUnderFiveMegabytes() throws {
        let area = CoverArea.bbox(BoundingBox(west: -1, south: 44.5, east: 3.5, north: 48))
        let set = F.tileSet(F.vector, zooms: 0...16)
        let tiles = (0...16).reduce(0) { $0 + TileCover.count(area, zoom: $1) }
        XCTAssertGreaterThan(tiles, 1_000_000)
        let plan = F.plan([F.row("france", rowID: nil, area: area, sets: [set]),
                           F.row("centre", rowID: nil, area: .bbox(BoundingBox(west: 1, south: 46, east: 2, north: 47)), sets: [set])])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: nil)
        XCTAssertLessThanOrEqual(map.views.reduce(0) { $0 + $1.cells.count }, CoverageMap.defaultCellBudget)
        let html = CoverageRenderer.html(map)
        XCTAssertLessThan(html.utf8.count, 5_000_000)
        XCTAssertEqual(map.views.reduce(0) { sum, view in sum + view.cells.reduce(0) { $0 + ($1.tally?.total ?? 1) } },
                       map.views.reduce(0) { $0 + $1.tiles.total }, "every tile is in a cell")
    }

    // MARK: - Layout and the Markdown line

    func testFarApartRegionsGetAnInsetEachAndNeighboursShareOne() throws {
        func plan(_ areas: [CoverArea]) throws -> String {
            let plan = F.plan(areas.enumerated().map { F.row("r\($0.offset)", rowID: nil, area: $0.element, sets: [F.tileSet(F.vector, zooms: 8...8)]) })
            let map = try CoverageMap.plan(plan, document: F.document(plan), store: nil)
            let root = try MarkupElement.parse(Data(try XCTUnwrap(CoverageRenderer.svg(map, zoom: 8)).utf8))
            return root.elements("g").filter { $0.attributes["class"] == "panel inset" }.compactMap { $0.attributes["data-regions"] }
                .joined(separator: " | ")
        }
        let london = CoverArea.bbox(BoundingBox(west: -0.1278, south: 51.4874, east: -0.0978, north: 51.5174))
        let paris = CoverArea.bbox(BoundingBox(west: 2.3522, south: 48.8366, east: 2.3822, north: 48.8666))
        let parisEast = CoverArea.bbox(BoundingBox(west: 2.3722, south: 48.8266, east: 2.4122, north: 48.8566))
        XCTAssertEqual(try plan([Self.far, london, paris]), "r0 | r1 | r2")
        XCTAssertEqual(try plan([paris, london, parisEast]), "r0 r2 | r1")
        XCTAssertEqual(try plan([paris, parisEast]), "", "one place: the overview alone")
    }

    func testTheMarkdownLineLinksWherePublished() throws {
        let map = try self.map()
        XCTAssertEqual(CoverageRenderer.markdownLine(map, file: "out/coverage.html", url: "https://ci.example.com/a b/(1).html"),
                       "Coverage map: [coverage.html](https://ci.example.com/a%20b/%281%29.html) (z5–8; z8: "
                       + "\(grouped(F.tiles(Self.far, zoom: 8).count)) to add).")
        XCTAssertTrue(CoverageRenderer.markdownLine(map, file: "out/coverage.html", url: nil).hasPrefix("Coverage map: `coverage.html` (z5–8"))
    }
}
