import Foundation
import ProvisionModel
import XCTest

/// The flow of issue 2 on the built binary: plan, apply, converge, drop a region, audit.
final class PlanApplyFlowTests: WorkspaceTestCase {
    func testPlanApplyConvergeDropRegionAudit() throws {
        let cities = [Demo.newYork, Demo.london, Demo.paris]
        // The oracle agrees with the numbers of issue 2 (a check of the oracle, not of the product).
        XCTAssertEqual(cities.map { $0.tiles.count }, [1410, 13, 16])
        let jobFile = try ws.write(ws.job(cities, tiles: .mbtiles)).path

        // plan: 0; with --detailed-exitcode: 2 (changes); --json: the documented document.
        let plan = try ws.provision("plan", jobFile)
        plan.expect(0)
        for city in cities { XCTAssertTrue(plan.stdout.contains(city.id), "text plan names \(city.id)") }
        try ws.provision("plan", "--detailed-exitcode", jobFile).expect(2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "plan must not create the store")

        let planJSONRun = try ws.provision("plan", "--json", jobFile)
        planJSONRun.expect(0)
        let planJSON = try parseJSON(planJSONRun.stdout)
        XCTAssertEqual(planJSON["schemaVersion"], .int(6))
        XCTAssertEqual(planJSON["kind"], "plan")
        XCTAssertEqual(planJSON["hasChanges"], .bool(true))
        let regions = planJSON["regions"]?.arrayValue ?? []
        XCTAssertEqual(regions.compactMap { $0["id"]?.stringValue }, cities.map(\.id))
        for (region, city) in zip(regions, cities) {
            XCTAssertEqual(region["action"], "create")
            XCTAssertEqual(region["tiles"]?["add"]?.intValue, city.tiles.count, city.id)
            let perZoom = Dictionary(uniqueKeysWithValues: (region["zooms"]?.arrayValue ?? []).compactMap { zoom in
                zoom["zoom"]?.intValue.map { ($0, zoom["add"]?.intValue ?? -1) }
            })
            let expected = Dictionary(uniqueKeysWithValues: Demo.zooms.map {
                ($0, WebMercatorOracle.count(bbox: city.bbox, zoom: $0))
            })
            XCTAssertEqual(perZoom, expected, "per-zoom counts of \(city.id)")
        }
        let allTiles = cities.reduce(into: Set<TileAddress>()) { $0.formUnion($1.tiles) }
        XCTAssertEqual(planJSON["summary"]?["tilesToDownload"]?.intValue, allTiles.count)

        // apply: 0, report written and valid, every tile and resource downloaded once.
        let reportURL = ws.root.appendingPathComponent("report.json")
        try ws.provision("apply", "--quiet", "--report", reportURL.path, jobFile).expect(0)
        let report = try readJSON(reportURL)
        XCTAssertEqual(report["schemaVersion"], .int(4))
        XCTAssertEqual(report["kind"], "apply-report")
        XCTAssertEqual(report["status"], "complete")
        XCTAssertEqual(report["downloads"]?["failed"]?.intValue, 0)
        // The style and the TileJSON were fetched while planning; apply stores them without a second request.
        XCTAssertEqual(report["downloads"]?["requested"]?.intValue, allTiles.count + 136 - 2,
                       "1439 tiles + 136 style-pack resources - style and TileJSON")
        XCTAssertEqual(report["downloads"]?["plannedTiles"]?.intValue, allTiles.count)
        XCTAssertEqual(report["downloads"]?["plannedResources"]?.intValue, 136 - 2)
        XCTAssertEqual(report["downloads"]?["planned"], report["downloads"]?["requested"], "a whole run requests what it planned")
        XCTAssertEqual(report["downloads"]?["notAttempted"]?.intValue, 0)
        XCTAssertEqual(report["store"]?["tiles"]?.intValue, allTiles.count)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM regions"), 3)

        // Converges: planning the same job again changes nothing.
        let again = try ws.provision("plan", "--detailed-exitcode", "--json", jobFile)
        again.expect(0, "plan right after apply")
        XCTAssertEqual(try parseJSON(again.stdout)["hasChanges"], .bool(false))

        // Drop London: the plan shows it removed.
        let londonRow = try ws.sqlite.int("SELECT id FROM regions WHERE CAST(description AS TEXT) = '{\"name\":\"London\"}'")
        XCTAssertGreaterThan(londonRow, 0)
        let kept = [Demo.newYork, Demo.paris]
        let dropped = try ws.write(ws.job(kept, tiles: .mbtiles), to: "dropped.json").path
        let dropPlan = try ws.provision("plan", "--detailed-exitcode", "--json", dropped)
        dropPlan.expect(2)
        let dropJSON = try parseJSON(dropPlan.stdout)
        let removed = dropJSON["removedRegions"]?.arrayValue ?? []
        XCTAssertEqual(removed.count, 1)
        XCTAssertEqual(removed.first?["key"], "london/streets")
        XCTAssertEqual(removed.first?["rowId"]?.intValue, londonRow)
        XCTAssertEqual(removed.first?["tiles"]?.intValue, Demo.london.tiles.count)
        XCTAssertEqual(dropJSON["summary"]?["regionsToDelete"]?.intValue, 1)
        XCTAssertEqual(dropJSON["summary"]?["tilesToDownload"]?.intValue, 0)
        let dropText = try ws.provision("plan", dropped)
        dropText.expect(0)
        XCTAssertTrue(dropText.stdout.contains("- region london"), dropText.stdout)

        // Apply the drop: London's row, links and tiles are gone; shared resources stay.
        try ws.provision("apply", "--quiet", dropped).expect(0)
        let sql = ws.sqlite
        XCTAssertEqual(try sql.int("SELECT count(*) FROM regions"), 2)
        XCTAssertEqual(try sql.int("SELECT count(*) FROM regions WHERE CAST(description AS TEXT) LIKE '%London%'"), 0)
        // Row ids are renumbered in job order by the key-order rewrite, so London's old id now
        // belongs to Paris: check that no link points at a missing region instead.
        XCTAssertEqual(try sql.int("SELECT count(*) FROM region_tiles WHERE region_id NOT IN (SELECT id FROM regions)"), 0)
        XCTAssertEqual(try sql.int("SELECT count(*) FROM region_resources WHERE region_id NOT IN (SELECT id FROM regions)"), 0)
        XCTAssertEqual(try sql.int("SELECT count(*) FROM region_tiles"), Demo.newYork.tiles.count + Demo.paris.tiles.count)
        let keptTiles = kept.reduce(into: Set<TileAddress>()) { $0.formUnion($1.tiles) }
        let londonOnly = Demo.london.tiles.subtracting(keptTiles)
        XCTAssertEqual(londonOnly.count, Demo.london.tiles.count, "the demo cities share no tile")
        XCTAssertEqual(try sql.int("SELECT count(*) FROM tiles WHERE " + tileMatch(londonOnly)), 0,
                       "tiles only London used are deleted")
        XCTAssertEqual(try storedTiles(sql), keptTiles, "the store holds exactly New York's and Paris's tiles")
        XCTAssertEqual(try sql.int("SELECT count(*) FROM resources"), 136, "the shared style pack stays")
        XCTAssertEqual(try sql.int("SELECT count(*) FROM region_resources"), 2 * 136)

        // audit: whole, two regions.
        try ws.provision("audit", "--store", ws.store.path).expect(0)
        let audit = try ws.provision("audit", "--json", "--store", ws.store.path)
        audit.expect(0)
        let auditJSON = try parseJSON(audit.stdout)
        XCTAssertEqual(auditJSON["schemaVersion"], .int(6))
        XCTAssertEqual(auditJSON["ok"], .bool(true))
        XCTAssertEqual(auditJSON["regions"]?.arrayValue?.compactMap { $0["key"]?.stringValue },
                       ["new-york/streets", "paris/streets"])
        XCTAssertEqual(auditJSON["totals"]?["tiles"]?.intValue, keptTiles.count)
    }

    /// A tile linked to two regions is stored once and outlives the removal of one of them.
    func testSharedTileOutlivesRemovalOfOneRegion() throws {
        try ws.serveTiles()
        let centre = Demo.City(id: "london-centre", name: "London centre", bbox: [-0.1178, 51.4974, -0.1078, 51.5074])
        let shared = Demo.london.tiles.intersection(centre.tiles)
        XCTAssertFalse(shared.isEmpty, "the fixture regions must overlap")
        let both = try ws.write(ws.job([Demo.london, centre], tiles: .http)).path
        try ws.provision("apply", "--quiet", both).expect(0)
        let union = Demo.london.tiles.union(centre.tiles)
        XCTAssertEqual(try storedTiles(ws.sqlite), union, "each shared tile is stored once")
        XCTAssertEqual(Set(ws.requests(under: "/tiles/").map(\.path)).count, union.count)
        XCTAssertEqual(ws.requests(under: "/tiles/").count, union.count, "each tile is downloaded once")

        let onlyCentre = try ws.write(ws.job([centre], tiles: .http), to: "centre.json").path
        let before = ws.requests(under: "/tiles/").count
        try ws.provision("apply", "--quiet", onlyCentre).expect(0)
        XCTAssertEqual(ws.requests(under: "/tiles/").count, before, "removing a region downloads nothing")
        XCTAssertEqual(try storedTiles(ws.sqlite), centre.tiles)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE " + tileMatch(shared)), shared.count)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM region_tiles"), centre.tiles.count)
    }
}

/// The (z, x, y) of every stored tile.
func storedTiles(_ sql: SQLiteShell) throws -> Set<TileAddress> {
    Set(try sql.rows("SELECT z, x, y FROM tiles").compactMap { row in
        guard row.count == 3, let z = Int(row[0]), let x = Int(row[1]), let y = Int(row[2]) else { return nil }
        return TileAddress(z: z, x: x, y: y)
    })
}

/// A WHERE condition matching any of `tiles` (false for none).
func tileMatch(_ tiles: Set<TileAddress>) -> String {
    guard !tiles.isEmpty else { return "0" }
    return "(" + tiles.sorted().map { "(z = \($0.z) AND x = \($0.x) AND y = \($0.y))" }.joined(separator: " OR ") + ")"
}
