import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 4 #7 (a style changed upstream is a change of its own) and issue 3 #1 (a 401 to a request
/// carrying a key stops the apply early, with exit 69 and a message naming the likely cause).
final class UpstreamTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    /// Issue 5 #1: proxies come from the standard environment variables, and `no_proxy` exempts
    /// a host. Through a proxy that refuses every connection no tile arrives; with the loopback
    /// host exempted the same apply completes.
    func testProxiesComeFromTheEnvironmentAndNoProxyExemptsAHost() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let refusing = "http://127.0.0.1:9"  // the discard port: nothing listens on loopback
        let proxied = ["http_proxy": refusing, "https_proxy": refusing, "HTTPS_PROXY": refusing, "no_proxy": "", "NO_PROXY": ""]
        let throughProxy = try ws.provision("apply", "--quiet", job, environment: proxied)
        XCTAssertNotEqual(throughProxy.status, 0, "every tile went to the refusing proxy")
        XCTAssertEqual(ws.tileRequestPaths, [], "no tile request reached the server directly")

        var exempt = proxied
        exempt["no_proxy"] = "127.0.0.1"
        exempt["NO_PROXY"] = "127.0.0.1"
        try ws.provision("apply", "--quiet", job, environment: exempt).expect(0, "the loopback host is exempt")
        XCTAssertEqual(Set(ws.tileRequestPaths).count, Demo.paris.tiles.count)
    }

    func testChangedStyleIsDriftUntilApplied() throws {
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)
        try ws.provision("plan", "--detailed-exitcode", job).expect(0, "converged")

        // The upstream style changes (same sources, sprite and glyphs; a new name and metadata).
        let styleFile = Demo.directory.appendingPathComponent("styles/streets.json")
        guard var style = try readJSON(styleFile).objectValue else { return XCTFail("the demo style is not an object") }
        style["name"] = "Demo streets, revised"
        style["metadata"] = ["revision": 2]
        let revised = JSONValue.object(style).data(.prettySorted)
        ws.server.setRoute("/demo/styles/streets.json", .ok(revised, contentType: "application/json"))

        let plan = try ws.provision("plan", "--detailed-exitcode", "--json", job)
        plan.expect(2, "a style changed upstream is a change")
        let document = try parseJSON(plan.stdout)
        let drift = document["drift"]?.arrayValue ?? []
        XCTAssertEqual(drift.compactMap { $0["url"]?.stringValue }, [Demo.styleURL],
                       "drift names the style: \(plan.stdout.prefix(2000))")
        XCTAssertEqual(document["hasChanges"], .bool(true))
        XCTAssertEqual(document["summary"]?["tilesToDownload"]?.intValue, 0, "no tile changes with the style")
        let text = try ws.provision("plan", job)
        XCTAssertTrue(text.stdout.contains(Demo.styleURL), "the text plan names the style: \(text.stdout)")

        let tilesBefore = ws.tileRequestPaths.count
        try ws.provision("apply", "--quiet", job).expect(0, "apply the new style")
        XCTAssertEqual(ws.tileRequestPaths.count, tilesBefore, "a changed style with the same sources fetches no tile")
        let after = try ws.provision("plan", "--detailed-exitcode", "--json", job)
        after.expect(0, "no drift once the new style is applied")
        XCTAssertEqual(try parseJSON(after.stdout)["drift"], .array([]))
        if try SQLiteShell.canInflate() {
            let holdsRevised = try ws.sqlite.int(
                "SELECT instr(CAST(\(SQLiteShell.inflatedData) AS TEXT), 'Demo streets, revised') > 0 "
                    + "FROM resources WHERE url = '\(Demo.styleURL)'")
            XCTAssertEqual(holdsRevised, 1, "the store holds the new style")
        }
    }

    func testUnauthorizedTilesStopTheApplyEarlyWith69() throws {
        // Every tile of New York answers 401, as a host does for a wrong token. The requests carry
        // a key (the style's ?key=${DEMO_KEY} goes to every request to its host): a 401 to a
        // request without one fails that tile only (NamedOutcomeTests).
        let tiles = Demo.newYork.tiles
        for tile in tiles {
            ws.server.setRoute(ws.tilePath(tile), .status(401, body: "{\"message\":\"Not Authorized - Invalid Token\"}"))
        }
        let job = try ws.write(Demo.job(regions: [Demo.newYork.region()], origins: ws.origins(tiles: .http),
                                        stylePacks: [Demo.stylePack(style: Demo.styleURL + "?key=${DEMO_KEY}")])).path

        let result = try ws.provision("apply", job, environment: ["DEMO_KEY": "wrong-key"])
        result.expect(69, "401 on tiles")
        let requested = ws.tileRequestPaths.count
        XCTAssertLessThanOrEqual(requested, 64, "stops after few of \(tiles.count) tile requests")
        XCTAssertEqual(ws.tileRequestPaths.count, Set(ws.tileRequestPaths).count, "a 401 is not retried")
        let stderr = result.stderr.lowercased()
        XCTAssertTrue(stderr.contains("token"), "names the likely cause: \(result.stderr)")
        XCTAssertTrue(stderr.contains("wrong") || stderr.contains("not allowed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("401"), result.stderr)
        XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)

        // What was verified before the stop is kept and the store is sound.
        XCTAssertEqual(try ws.integrityCheck(), "ok")
        XCTAssertEqual(try ws.lockCompleteness(), ["new-york/streets": false])
    }
}
