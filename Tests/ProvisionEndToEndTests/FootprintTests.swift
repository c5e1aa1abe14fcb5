import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// The footprint on the built binary: what the audit says a region (or a region's style pack)
/// holds alone is exactly what dropping it from the job and applying frees, measured as the sum
/// of the stored `data` lengths by the sqlite3 shell; the report, the audit and a plan that
/// needs no download agree on every byte.
final class FootprintTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]

    /// Two parts of Paris that share their z10–11 tiles and hold their z12–14 tiles alone (the
    /// west one with a second style pack that fetches all 256 glyph ranges), and London.
    private func job(westPacks: [String]?) -> JSONValue {
        let west = Demo.City(id: "paris-west", name: "Paris West", bbox: [2.3522, 48.8366, 2.3700, 48.8666])
        let east = Demo.City(id: "paris-east", name: "Paris East", bbox: [2.3740, 48.8366, 2.3822, 48.8666])
        let allGlyphs: JSONValue = ["id": "streets-all", "style": .string(Demo.styleURL), "pixelRatio": 1, "glyphs": "all"]
        let regions = (westPacks.map { [west.region(stylePacks: $0)] } ?? []) + [east.region(), Demo.london.region()]
        return Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles), stylePacks: [Demo.stylePack(), allGlyphs])
    }

    /// The stored bytes of every row, as the shell sums them.
    private func storedBytes() throws -> Int {
        try ws.sqlite.int("SELECT (SELECT coalesce(sum(length(data)), 0) FROM tiles) + (SELECT coalesce(sum(length(data)), 0) FROM resources)")
    }

    /// What only `rows` link, summed by the shell: a second formulation of marginal bytes.
    private func bytesOnlyLinkedBy(_ rows: [Int]) throws -> Int {
        let ids = rows.map(String.init).joined(separator: ",")
        return try ws.sqlite.int("""
            SELECT (SELECT coalesce(sum(length(data)), 0) FROM tiles WHERE id IN
                      (SELECT tile_id FROM region_tiles GROUP BY tile_id HAVING sum(region_id IN (\(ids))) = count(*)))
                 + (SELECT coalesce(sum(length(data)), 0) FROM resources WHERE id IN
                      (SELECT resource_id FROM region_resources GROUP BY resource_id HAVING sum(region_id IN (\(ids))) = count(*)))
            """)
    }

    private func audit() throws -> JSONValue {
        let run = try ws.provision("audit", "--json", "--store", ws.store.path)
        run.expect(0)
        return try XCTUnwrap(try parseJSON(run.stdout)["footprint"])
    }

    private func region(_ footprint: JSONValue, _ id: String) -> JSONValue? {
        footprint["regions"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    /// A footprint with every row's `rowId` taken out.
    private func withoutRowIDs(_ footprint: JSONValue) -> JSONValue {
        guard case .object(var object) = footprint else { return footprint }
        object["regions"] = .array((footprint["regions"]?.arrayValue ?? []).map { region in
            guard case .object(var regionObject) = region else { return region }
            regionObject["stylePacks"] = .array((region["stylePacks"]?.arrayValue ?? []).map { row in
                guard case .object(var rowObject) = row else { return row }
                rowObject["rowId"] = nil
                return .object(rowObject)
            })
            return .object(regionObject)
        })
        return .object(object)
    }

    func testDroppingAStylePackOrARegionFreesExactlyItsMarginalBytes() throws {
        let first = try ws.write(job(westPacks: ["streets", "streets-all"]), to: "first.json").path
        let report = ws.root.appendingPathComponent("report.json")
        try ws.provision("apply", "--quiet", "--report", report.path, first, environment: epoch).expect(0)
        let footprint = try audit()
        XCTAssertEqual(footprint["exact"], true)
        XCTAssertEqual(try readJSON(report)["footprint"], footprint, "the report describes the store the audit reads")
        let replan = try ws.provision("plan", "--json", first)
        replan.expect(0)
        XCTAssertEqual(try parseJSON(replan.stdout)["footprint"], footprint, "a plan without changes is the store as it is")
        let again = try ws.provision("apply", "--json", first, environment: epoch)
        again.expect(0)
        XCTAssertEqual(try parseJSON(again.stdout)["footprint"], footprint, "an apply with nothing to do reports the same")

        let west = try XCTUnwrap(region(footprint, "paris-west"))
        let rows = west["stylePacks"]?.arrayValue ?? []
        XCTAssertEqual(rows.compactMap { $0["key"]?.stringValue }, ["paris-west/streets", "paris-west/streets-all"])
        XCTAssertEqual(west["sharedWith"]?.arrayValue?.compactMap { $0["region"]?.stringValue }, ["paris-east", "london"],
                       "tiles and the pack's resources with the east half, the resources with London")
        for r in (footprint["regions"]?.arrayValue ?? []) {
            let ids = (r["stylePacks"]?.arrayValue ?? []).compactMap { $0["rowId"]?.intValue }
            XCTAssertEqual(r["marginal"]?["bytes"]?.intValue, try bytesOnlyLinkedBy(ids), r["id"]?.stringValue ?? "")
        }
        XCTAssertEqual(footprint["all"]?["total"]?["bytes"]?.intValue, try storedBytes(), "an applied store has no unlinked row")

        // Drop the second style pack of paris-west: the store shrinks by that row's marginal bytes
        // (the glyph ranges only "all" fetches), and the plan said beforehand what it would hold.
        let allGlyphsRow = try XCTUnwrap(rows.last)
        let rowMarginal = try XCTUnwrap(allGlyphsRow["marginal"]?["bytes"]?.intValue)
        XCTAssertEqual(allGlyphsRow["marginal"]?["resources"]?.intValue, 256 - 130)
        XCTAssertEqual(allGlyphsRow["marginal"]?["tiles"]?.intValue, 0, "both rows of paris-west hold the same tiles")
        let before = try storedBytes()
        let second = try ws.write(job(westPacks: ["streets"]), to: "second.json").path
        let plan = try ws.provision("plan", "--json", second)
        plan.expect(0)
        let planned = try XCTUnwrap(try parseJSON(plan.stdout)["footprint"])
        XCTAssertEqual(planned["exact"], true, "nothing to download: every byte is stored")
        try ws.provision("apply", "--quiet", second, environment: epoch).expect(0)
        XCTAssertEqual(before - (try storedBytes()), rowMarginal)
        let afterRow = try audit()
        XCTAssertEqual(withoutRowIDs(planned), withoutRowIDs(afterRow), "the plan described the store the apply left")
        XCTAssertNotEqual(planned, afterRow, "(the apply numbers the rows anew, the plan names the rows it found)")

        // Drop the region: the store shrinks by its marginal bytes.
        let regionMarginal = try XCTUnwrap(region(afterRow, "paris-west")?["marginal"]?["bytes"]?.intValue)
        XCTAssertGreaterThan(regionMarginal, 0)
        let shrunk = try storedBytes()
        let third = try ws.write(job(westPacks: nil), to: "third.json").path
        try ws.provision("apply", "--quiet", third, environment: epoch).expect(0)
        XCTAssertEqual(shrunk - (try storedBytes()), regionMarginal)
        XCTAssertEqual(try audit()["all"]?["total"]?["bytes"]?.intValue, try storedBytes())
    }

    /// A first plan estimates what it would download, and says so in the JSON and the text.
    func testAFirstPlanMarksItsEstimates() throws {
        let path = try ws.write(job(westPacks: ["streets"])).path
        let run = try ws.provision("plan", "--json", path)
        run.expect(0)
        let footprint = try XCTUnwrap(try parseJSON(run.stdout)["footprint"])
        XCTAssertEqual(footprint["exact"], false)
        let total = footprint["all"]?["total"]
        XCTAssertEqual(total?["estimatedBytes"], total?["bytes"], "nothing is stored yet")
        let text = try ws.provision("plan", path)
        XCTAssertTrue(text.stdout.contains("~: partly estimated, still to download"), text.stdout)
        let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("  region paris-west ") } ?? ""
        let cells = line.split(separator: " ").filter { $0.first?.isNumber == true || $0.first == "~" }.prefix(3)
        XCTAssertEqual(cells.map { $0.first }, ["~", "~", "~"], "marginal, shared and total are estimates: \(line)")
    }
}
