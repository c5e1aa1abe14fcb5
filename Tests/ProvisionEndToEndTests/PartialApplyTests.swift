import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// An origin that answers some tiles with an HTML page and status 200 (a captive portal, a CDN
/// error page): apply stores none of them, exits 75, audit flags the region, and the next apply
/// fetches only what is missing.
final class PartialApplyTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testHTMLWith200IsAFailureAndTheNextApplyFetchesOnlyTheMissingTiles() throws {
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .http)).path
        let broken = Array(Demo.london.tiles.filter { $0.z == 14 }.sorted().prefix(2))
        XCTAssertEqual(broken.count, 2)
        for tile in broken { ws.server.setRoute(ws.tilePath(tile), .html()) }

        let reportURL = ws.root.appendingPathComponent("report.json")
        let first = try ws.provision("apply", "--quiet", "--report", reportURL.path, job)
        first.expect(75, "partial apply")
        let report = try readJSON(reportURL)
        XCTAssertEqual(report["status"], "partial")
        XCTAssertEqual(report["downloads"]?["failed"]?.intValue, broken.count)
        let failed = Set(report["failures"]?.arrayValue?.compactMap { $0["url"]?.stringValue } ?? [])
        XCTAssertEqual(failed, Set(broken.map { Demo.canonicalTiles + "\($0.z)/\($0.x)/\($0.y).pbf" }),
                       "the report lists the canonical URLs of the failed tiles")
        let complete = Dictionary(uniqueKeysWithValues: (report["regions"]?.arrayValue ?? []).compactMap { region in
            region["id"]?.stringValue.map { ($0, region["complete"]) }
        })
        XCTAssertEqual(complete["london"], .bool(false))
        XCTAssertEqual(complete["paris"], .bool(true))
        XCTAssertTrue(first.stdout.contains("\n2 downloads failed ("), first.stdout)
        let planned = report["downloads"]?["planned"]?.intValue ?? -1
        XCTAssertEqual(planned, report["downloads"]?["requested"]?.intValue, "nothing was stopped")
        XCTAssertTrue(first.stdout.contains("\(plural(planned, "download")) planned ("), first.stdout)
        XCTAssertTrue(first.stdout.contains("): \(grouped(planned - 2)) downloaded, 2 failed; "), first.stdout)
        XCTAssertTrue(first.stderr.contains("error: 2 downloads failed; run apply again to retry them"), first.stderr)
        for url in failed { XCTAssertTrue(first.stderr.contains("  \(url): "), "stderr names \(url) even with --quiet: \(first.stderr)") }
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE " + tileMatch(Set(broken))), 0,
                       "no HTML page is stored")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), Demo.london.tiles.count + Demo.paris.tiles.count - 2)

        // audit: exit 1, London incomplete, Paris whole.
        let audit = try ws.provision("audit", "--json", "--store", ws.store.path)
        audit.expect(1)
        let auditJSON = try parseJSON(audit.stdout)
        XCTAssertEqual(auditJSON["ok"], .bool(false))
        let auditComplete = Dictionary(uniqueKeysWithValues: (auditJSON["regions"]?.arrayValue ?? []).compactMap { region in
            region["key"]?.stringValue.map { ($0, region["complete"]) }
        })
        XCTAssertEqual(auditComplete, ["london/streets": .bool(false), "paris/streets": .bool(true)])
        XCTAssertTrue(auditJSON["problems"]?.arrayValue?.contains { $0.stringValue?.contains("london/streets") == true } == true,
                      audit.stdout)
        try ws.provision("audit", "--store", ws.store.path).expect(1)

        // Fix the origin: the next apply downloads the two missing tiles and nothing else.
        for tile in broken { ws.server.setRoute(ws.tilePath(tile), .ok(try ws.tileBytes(tile))) }
        let before = ws.requests(under: "/tiles/").count
        let second = try ws.provision("apply", "--json", "--quiet", job)
        second.expect(0, "apply after the origin is fixed")
        let fetched = ws.requests(under: "/tiles/").dropFirst(before).map(\.path)
        XCTAssertEqual(fetched.sorted(), broken.map(ws.tilePath).sorted(), "only the missing tiles are fetched again")
        let secondReport = try parseJSON(second.stdout)
        XCTAssertEqual(secondReport["status"], "complete")
        XCTAssertEqual(secondReport["downloads"]?["requested"]?.intValue, broken.count)
        try ws.provision("audit", "--store", ws.store.path).expect(0)
        XCTAssertEqual(try storedTiles(ws.sqlite), Demo.london.tiles.union(Demo.paris.tiles))
    }
}
