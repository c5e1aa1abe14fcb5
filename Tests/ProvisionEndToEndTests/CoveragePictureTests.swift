import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// `plan --html/--svg` and `audit --html/--svg` on the built binary: the pictures' cells, read
/// back from the markup, are the plan's and the audit's counts tile for tile; outputs are
/// checked before any work and written atomically.
final class CoveragePictureTests: WorkspaceTestCase {
    /// Cells of each view of a page (or of one SVG), by zoom: `region state → count`, a shared
    /// tile under every region it lists.
    struct Cells {
        var byZoom: [Int: [String: Int]] = [:]
        var tiles: [Int: [(z: Int, x: Int, y: Int, state: String, regions: String)]] = [:]

        init(_ root: MarkupElement) {
            for svg in root.elements("svg") {
                guard let zoom = svg.attributes["data-zoom"].flatMap(Int.init) else { continue }
                for rect in svg.elements("rect") {
                    guard let z = rect.attributes["data-z"].flatMap(Int.init), let x = rect.attributes["data-x"].flatMap(Int.init),
                          let y = rect.attributes["data-y"].flatMap(Int.init), let state = rect.attributes["data-state"],
                          let regions = rect.attributes["data-regions"] else { continue }
                    tiles[zoom, default: []].append((z, x, y, state, regions))
                    for region in regions.split(separator: " ") { byZoom[zoom, default: [:]]["\(region) \(state)", default: 0] += 1 }
                }
            }
        }

        func count(_ region: String, _ state: String, zoom: Int) -> Int { byZoom[zoom]?["\(region) \(state)"] ?? 0 }
    }

    private func read(_ name: String) throws -> MarkupElement {
        try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent(name)))
    }

    /// Asserts that each region's cells per zoom are the plan's add, keep and remove counts (one
    /// tile set per region, no region sharing a tile, so links and tiles are the same count).
    private func assertCellsCount(_ cells: Cells, plan: JSONValue, zooms: [Int]? = nil, file: StaticString = #filePath, line: UInt = #line) {
        var compared = 0
        for region in plan["regions"]?.arrayValue ?? [] {
            let id = region["id"]?.stringValue ?? ""
            for zoom in region["zooms"]?.arrayValue ?? [] {
                guard let z = zoom["zoom"]?.intValue, zooms?.contains(z) ?? true else { continue }
                for (key, state) in [("add", "add"), ("keep", "present"), ("remove", "remove")] {
                    XCTAssertEqual(cells.count(id, state, zoom: z), zoom[key]?.intValue, "\(id) z\(z) \(key)", file: file, line: line)
                }
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 0, "no zoom compared", file: file, line: line)
    }

    func testThePlanPictureHoldsWhatThePlanCounts() throws {
        let job = try ws.write(ws.job([Demo.newYork, Demo.london, Demo.paris], tiles: .mbtiles)).path
        let result = try ws.provision("plan", job, "--html", "map.html", "--svg", "z13.svg", "--zoom", "13", "--json", "--progress", "json")
        result.expect(0)
        let plan = try parseJSON(result.stdout)
        let page = try read("map.html")
        let cells = Cells(page)
        XCTAssertEqual(cells.byZoom.keys.sorted(), Array(10...14))
        assertCellsCount(cells, plan: plan)
        XCTAssertFalse(cells.tiles.values.joined().contains { $0.state == "shared" }, "the three cities share no tile")
        for svg in page.elements("svg") where svg.attributes["data-zoom"] != nil {
            XCTAssertEqual(svg.elements("path").compactMap { $0.attributes["data-region"] }, ["new-york", "london", "paris"])
        }
        // The SVG of z13 holds the same cells as the page's z13 view.
        let svg = try read("z13.svg")
        XCTAssertEqual(svg.attributes["data-zoom"], "13")
        XCTAssertEqual(Cells(svg).tiles[13]?.map { "\($0)" }, cells.tiles[13]?.map { "\($0)" })
        XCTAssertEqual(svg.elements("path").compactMap { $0.attributes["data-region"] }, ["new-york", "london", "paris"])
        // Each file written is an event of the schema, with what it holds.
        let schema = try SchemaSubset(named: "events.schema.json")
        let written = result.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
            .filter { $0["event"] == "coverage-written" }
        XCTAssertEqual(written.compactMap { $0["path"]?.stringValue }, ["map.html", "z13.svg"])
        for event in written { XCTAssertEqual(schema.problems(event), [], "\(event)") }
        XCTAssertEqual(written.last?["cells"]?.intValue, cells.tiles[13]?.count)
        XCTAssertEqual(written.first?["bytes"]?.intValue,
                       try Data(contentsOf: ws.root.appendingPathComponent("map.html")).count)
        // Written atomically: nothing but the pictures is left beside them.
        let files = try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(files, [])
    }

    func testAfterAnApplyCellsArePresentAndAnAuditPlacesTheMissingTiles() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", job, "--quiet").expect(0)
        var result = try ws.provision("plan", job, "--html", "kept.html", "--json", "--quiet")
        result.expect(0)
        let kept = Cells(try read("kept.html"))
        XCTAssertEqual(Set(kept.tiles.values.joined().map(\.state)), ["present"])
        assertCellsCount(kept, plan: try parseJSON(result.stdout))

        // Unlink three z14 tiles of London: the audit finds them missing, the plan adds them again.
        let rows = try ws.sqlite.rows("""
            SELECT t.id, t.x, t.y FROM tiles t JOIN region_tiles rt ON rt.tile_id = t.id
            JOIN regions r ON r.id = rt.region_id WHERE t.z = 14 AND CAST(r.description AS TEXT) LIKE '%London%' ORDER BY t.x, t.y LIMIT 3
            """)
        XCTAssertEqual(rows.count, 3)
        _ = try ws.sqlite.rows("DELETE FROM region_tiles WHERE tile_id IN (\(rows.map { $0[0] }.joined(separator: ",")))", writing: true)
        let unlinked = Set(rows.map { "14/\($0[1])/\($0[2])" })  // the demo tileset is xyz: stored rows are geographic

        result = try ws.provision("audit", "--store", ws.store.path, "--html", "audit.html", "--svg", "audit14.svg", "--zoom", "14", "--quiet")
        result.expect(1)
        for name in ["audit.html", "audit14.svg"] {
            let tiles = Cells(try read(name)).tiles[14] ?? []
            XCTAssertEqual(Set(tiles.filter { $0.state == "missing" }.map { "\($0.z)/\($0.x)/\($0.y)" }), unlinked, name)
            XCTAssertEqual(Set(tiles.filter { $0.state == "missing" }.map(\.regions)), ["london"], name)
            XCTAssertEqual(tiles.filter { $0.state == "present" }.count, kept.tiles[14].map { $0.count - 3 }, name)
        }
        result = try ws.provision("plan", job, "--svg", "again.svg", "--zoom", "14", "--json", "--quiet")
        result.expect(0)
        let again = Cells(try read("again.svg"))
        XCTAssertEqual(Set((again.tiles[14] ?? []).filter { $0.state == "add" }.map { "\($0.z)/\($0.x)/\($0.y)" }), unlinked)
        assertCellsCount(again, plan: try parseJSON(result.stdout), zooms: [14])
    }

    func testPictureOutputsAreCheckedBeforeAnyWork() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", job, "--quiet").expect(0)
        let lockBefore = try Data(contentsOf: ws.lock)
        func refused(_ arguments: [String], _ status: Int32, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try ProvisionProcess.provision(arguments, in: ws.root, file: file, line: line)
            result.expect(status, arguments.joined(separator: " "), file: file, line: line)
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)", file: file, line: line)
        }
        try refused(["plan", job, "--html", job], 64, "would overwrite the job file")
        try refused(["plan", job, "--svg", ws.database.path, "--zoom", "12"], 64, "would overwrite the store's offline.db")
        try refused(["plan", job, "--html", ws.lock.path], 64, "would overwrite the store's provision.lock.json")
        try refused(["audit", "--store", ws.store.path, "--html", ws.lock.path], 64, "would overwrite the store's provision.lock.json")
        try refused(["plan", job, "--svg", "z.svg"], 64, "--svg goes with --zoom")
        try refused(["plan", job, "--svg", "z.svg", "--zoom", "9", "--out", "saved.json"], 64,
                    "--zoom 9: the picture has tiles at z10–14 only")
        try refused(["plan", job, "--html", "no-such-dir/map.html"], 73, "the directory")
        try refused(["audit", "--store", ws.store.path, "--html", ws.root.path], 73, "it is a directory")
        try refused(["audit", "--store", ws.root.appendingPathComponent("elsewhere").path, "--html", "a.html"], 66, "no store at")
        for name in ["z.svg", "saved.json"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: ws.root.appendingPathComponent(name).path), "nothing written")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.root.appendingPathComponent("a.html").path), "nothing written")
        XCTAssertEqual(try Data(contentsOf: ws.lock), lockBefore, "the store is untouched")
    }

    func testTheMarkdownSummaryLinksThePicture() throws {
        let job = try ws.write(ws.job([Demo.london], tiles: .mbtiles)).path
        let result = try ws.provision("plan", job, "--format", "markdown", "--html", "out/coverage.html",
                                      "--html-url", "https://ci.example.com/runs/7/coverage.html", "--quiet", "--detailed-exitcode")
        result.expect(73, "out/ does not exist yet")
        try FileManager.default.createDirectory(at: ws.root.appendingPathComponent("out"), withIntermediateDirectories: true)
        let ok = try ws.provision("plan", job, "--format", "markdown", "--html", "out/coverage.html",
                                  "--html-url", "https://ci.example.com/runs/7/coverage.html", "--quiet", "--detailed-exitcode")
        ok.expect(2)
        XCTAssertTrue(ok.stdout.contains("Coverage map: [coverage.html](https://ci.example.com/runs/7/coverage.html) (z10–14; z14: 6 to add)."),
                      ok.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: ws.root.appendingPathComponent("out/coverage.html").path))
    }
}
