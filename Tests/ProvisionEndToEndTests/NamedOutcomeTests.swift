import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 20 #2 and #7: every outcome is named. A plan that cannot reach its upstream is 69, not
/// "no changes"; a 403 to a request that carried no key fails that URL only; every failing
/// command ends its NDJSON stream with an `error` event; a missing origin archive is 66; a store
/// path SQLite cannot open is refused by name; a message that points at a report names one that
/// exists.
final class NamedOutcomeTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    private static let key = "k3y-0f-the-demo-upstream"

    /// The demo job over `cities`, its style requested with `?key=${DEMO_KEY}` (so every request
    /// to the demo host carries the key) when `keyed`.
    private func job(_ cities: [Demo.City], keyed: Bool = false, name: String = "job.json") throws -> String {
        let style = Demo.styleURL + (keyed ? "?key=${DEMO_KEY}" : "")
        let job = Demo.job(regions: cities.map { $0.region() }, origins: ws.origins(tiles: .http),
                           stylePacks: [Demo.stylePack(style: style)])
        return try ws.write(job, to: name).path
    }

    /// The events of an NDJSON stream, each checked against the schema.
    private func events(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        let schema = try SchemaSubset(named: "events.schema.json")
        return stderr.split(separator: "\n").compactMap { text in
            guard let event = try? JSONValue.parse(Data(text.utf8)), event["event"] != nil else {
                XCTFail("stderr line is not an event: \(text)", file: file, line: line)
                return nil
            }
            XCTAssertEqual(schema.problems(event), [], String(text), file: file, line: line)
            return event
        }
    }

    private func canonicalURL(_ tile: TileAddress) -> String { Demo.canonicalTiles + "\(tile.z)/\(tile.x)/\(tile.y).pbf" }

    // MARK: - Unreachable is not unchanged

    func testAPlanThatCannotReachItsUpstreamExits69NamingTheURLAndNoSecret() throws {
        let environment = ["DEMO_KEY": Self.key]
        let job = try job([Demo.paris], keyed: true)
        try ws.provision("apply", "--quiet", job, environment: environment).expect(0)
        let converged = try ws.provision("plan", "--detailed-exitcode", "--json", job, environment: environment)
        converged.expect(0, "converged")
        XCTAssertEqual(try parseJSON(converged.stdout)["driftChecked"], .bool(true))
        let storeBefore = ws.sha256(ws.database)

        ws.server.stop()  // the upstream is unreachable; the store holds every document
        let plan = try ws.provision("plan", "--detailed-exitcode", "--json", "--progress", "json", job, environment: environment)
        plan.expect(69, "a plan that cannot fetch its style is not 'no changes'")
        let error = try parseJSON(plan.stdout)
        XCTAssertEqual(error["kind"], "error", plan.stdout)
        XCTAssertEqual(error["exitCode"], .int(69))
        let message = error["message"]?.stringValue ?? ""
        XCTAssertTrue(message.contains(Demo.styleURL), "names the style's URL: \(message)")
        XCTAssertTrue(message.contains("the store holds a copy"), message)
        XCTAssertEqual(try events(plan.stderr).last?["event"], "error")

        let text = try ws.provision("plan", "--detailed-exitcode", job, environment: environment)
        text.expect(69)
        XCTAssertFalse(text.stdout.contains("No changes"), text.stdout)
        XCTAssertTrue(text.stderr.contains(Demo.styleURL), text.stderr)

        // apply needs its upstream as plan does: it exits 69 and leaves the store as it was.
        let apply = try ws.provision("apply", job, environment: environment)
        apply.expect(69, "apply against an unreachable upstream")
        XCTAssertTrue(apply.stderr.contains(Demo.styleURL), apply.stderr)
        XCTAssertEqual(ws.sha256(ws.database), storeBefore, "the store is left as it was")
        for output in [plan.stdout, plan.stderr, text.stdout, text.stderr, apply.stdout, apply.stderr] {
            XCTAssertFalse(output.contains(Self.key), "the key never shows: \(output)")
        }
    }

    /// `plan --offline` plans from the store's copies and says, in the text and the JSON, that
    /// upstream drift was not checked; it cannot be given with --detailed-exitcode (or --out).
    func testAnOfflinePlanSaysDriftWasNotChecked() throws {
        let job = try job([Demo.paris])
        let fresh = try ws.provision("plan", "--offline", job)
        fresh.expect(69, "the store holds no copy yet")
        XCTAssertTrue(fresh.stderr.contains("the store holds no copy of") && fresh.stderr.contains(Demo.styleURL), fresh.stderr)
        try ws.provision("apply", "--quiet", job).expect(0)
        let documentRequests = { self.ws.server.requests.filter { $0.path.hasPrefix("/demo/") }.count }
        let before = documentRequests()

        let text = try ws.provision("plan", "--offline", job)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("Upstream drift not checked (--offline)"), text.stdout)
        let json = try ws.provision("plan", "--offline", "--json", job)
        json.expect(0)
        let document = try parseJSON(json.stdout)
        XCTAssertEqual(document["driftChecked"], .bool(false))
        XCTAssertEqual(document["hasChanges"], .bool(false))
        XCTAssertEqual(try SchemaSubset(named: "plan.schema.json").problems(document), [])
        let gated = try ws.provision("plan", "--offline", "--detailed-exitcode", job)
        gated.expect(64, "an exit status of 0 would claim no drift")
        XCTAssertTrue(gated.stderr.contains("--offline") && gated.stderr.contains("--detailed-exitcode"), gated.stderr)
        XCTAssertEqual(documentRequests(), before, "--offline fetches no document")
    }

    // MARK: - A 403 without a key is a failed download

    func testA403ToARequestWithoutAKeyFailsThatTileAndTheApplyGoesOn() throws {
        let tiles = Demo.paris.tiles.sorted { ($0.z, $0.x, $0.y) < ($1.z, $1.x, $1.y) }
        let forbidden = tiles[tiles.count / 2]
        ws.server.setRoute(ws.tilePath(forbidden), .status(403, body: "Forbidden"))
        let job = try job([Demo.paris])
        let reportURL = ws.root.appendingPathComponent("report.json")

        let result = try ws.provision("apply", "--report", reportURL.path, job)
        result.expect(75, "one forbidden tile makes a partial apply")
        XCTAssertEqual(Set(ws.tileRequestPaths), Set(tiles.map(ws.tilePath)), "every tile was requested")
        XCTAssertTrue(result.stderr.contains(canonicalURL(forbidden)), result.stderr)
        XCTAssertTrue(result.stderr.contains("HTTP 403"), result.stderr)
        XCTAssertFalse(result.stderr.lowercased().contains("token was refused"), result.stderr)
        let report = try readJSON(reportURL)
        XCTAssertEqual(report["status"], "partial")
        XCTAssertEqual(report["downloads"]?["stoppedEarly"], .null)
        XCTAssertEqual(report["downloads"]?["notAttempted"], .int(0))
        XCTAssertEqual(report["failures"]?.arrayValue?.compactMap { $0["url"]?.stringValue }, [canonicalURL(forbidden)])
        XCTAssertEqual(try ws.storedTilePaths().count, tiles.count - 1)
    }

    func testA401ToARequestThatCarriedAKeyStopsTheApplyWith69() throws {
        let tiles = Demo.newYork.tiles
        for tile in tiles { ws.server.setRoute(ws.tilePath(tile), .status(401, body: "{\"message\":\"Invalid key\"}")) }
        let job = try job([Demo.newYork], keyed: true)
        let result = try ws.provision("apply", job, environment: ["DEMO_KEY": Self.key])
        result.expect(69, "a refused key")
        XCTAssertLessThanOrEqual(ws.tileRequestPaths.count, 64, "stops after few of \(tiles.count) tile requests")
        XCTAssertTrue(result.stderr.contains("the access token was refused (HTTP 401)"), result.stderr)
        XCTAssertFalse(result.combined.contains(Self.key), result.combined)
    }

    // MARK: - Every failing command ends its stream with an error event

    func testEveryFailingCommandEndsItsEventStreamWithAnErrorEvent() throws {
        let good = try job([Demo.paris])
        try ws.provision("apply", "--quiet", good).expect(0)
        let invalid = try ws.write(text: #"{"version": 1, "name": "x", "regions": [{"id": "r", "zoom": [3, 99]}]}"#, to: "invalid.json").path
        let larger = try job([Demo.paris, Demo.london], name: "larger.json")
        let cases: [(name: String, arguments: [String], status: Int32, code: String)] = [
            ("validate, invalid", ["validate", "--progress", "json", invalid], 65, "invalidJob"),
            ("validate, one of two invalid", ["validate", "--progress", "json", good, invalid], 65, "invalidJob"),
            ("audit, not whole", ["audit", "--progress", "json", "--manifest", larger, "--store", ws.store.path], 1, "failure"),
            ("merge, missing input", ["merge", "--progress", "json", ws.root.path + "/nope", "--store", ws.root.path + "/out"], 66,
             "missingInput"),
            ("export, no store", ["export", "--progress", "json", "--store", ws.root.path + "/nope", "--format", "mbtiles",
                                  "--out", ws.root.path + "/x.mbtiles"], 66, "missingInput"),
            ("plan, missing job", ["plan", "--progress", "json", ws.root.path + "/nope.json"], 66, "missingInput"),
        ]
        for c in cases {
            let result = try ProvisionProcess.provision(c.arguments, in: ws.root)
            XCTAssertEqual(result.status, c.status, "\(c.name): \(result.stderr)")
            let last = try events(result.stderr).last
            XCTAssertEqual(last?["event"], "error", "\(c.name): \(result.stderr)")
            XCTAssertEqual(last?["exitCode"], .int(Int(c.status)), c.name)
            XCTAssertEqual(last?["code"]?.stringValue, c.code, c.name)
        }
        let validate = try ws.provision("validate", "--progress", "json", invalid)
        let error = try events(validate.stderr).last
        XCTAssertEqual(error?["diagnostics"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue }.contains("/regions/0/zoom/1"), true,
                       validate.stderr)
        let audit = try ws.provision("audit", "--progress", "json", "--manifest", larger, "--store", ws.store.path)
        XCTAssertTrue(try events(audit.stderr).last?["message"]?.stringValue?.contains("london") == true, audit.stderr)
    }

    // MARK: - Exit codes as the README's table says

    func testAMissingOriginArchiveIs66() throws {
        for scheme in ["mbtiles", "pmtiles"] {
            let missing = ws.root.appendingPathComponent("nowhere.\(scheme)").path
            let job = Demo.job(regions: [Demo.paris.region()],
                               origins: [(Demo.canonicalTiles, .string("\(scheme):\(missing)")),
                                         (Demo.canonicalBase, .string(ws.documentsMirror))])
            let file = try ws.write(job, to: "\(scheme).json").path
            for command in ["validate", "plan", "apply"] {
                let result = try ws.provision(command, file)
                result.expect(66, "\(command) with a missing \(scheme) archive")
                XCTAssertTrue(result.stderr.contains(missing), "\(command): \(result.stderr)")
            }
            let json = try ws.provision("plan", "--json", file)
            XCTAssertEqual(try parseJSON(json.stdout)["exitCode"], .int(66))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "nothing was written")
    }

    func testAStorePathAtSQLitesLimitWorksAndOneOverItIsRefusedByName() throws {
        let job = try job([Demo.paris])
        /// A directory under the workspace whose path is `bytes` long.
        func store(_ bytes: Int) -> String {
            var path = ws.root.standardizedFileURL.resolvingSymlinksInPath().path
            while path.utf8.count < bytes - 1 { path += "/" + String(repeating: "d", count: min(60, bytes - path.utf8.count - 1)) }
            if path.utf8.count < bytes { path += "e" }
            XCTAssertEqual(path.utf8.count, bytes)
            return path
        }
        let longest = store(483)
        try ws.provision("apply", "--quiet", "--store", longest, job).expect(0, "a 483-byte store path")
        try ws.provision("audit", "--quiet", "--store", longest).expect(0)
        try ws.provision("plan", "--detailed-exitcode", "--store", longest, job).expect(0)

        let over = store(484)
        for arguments in [["plan", "--store", over, job], ["apply", "--store", over, job], ["audit", "--store", over],
                          ["export", "--store", over, "--format", "mbtiles", "--out", ws.root.path + "/x.mbtiles"]] {
            let result = try ws.provision(arguments[0], Array(arguments.dropFirst()))
            result.expect(73, arguments[0])
            XCTAssertTrue(result.stderr.contains(over), result.stderr)
            XCTAssertTrue(result.stderr.contains("the store path is 484 bytes long") && result.stderr.contains("at most 483 bytes"),
                          result.stderr)
        }
    }

    func testAuditAcceptsThePathOfTheStoresOfflineDatabase() throws {
        let job = try job([Demo.paris])
        try ws.provision("apply", "--quiet", job).expect(0)
        let byDirectory = try ws.provision("audit", "--json", "--store", ws.store.path)
        byDirectory.expect(0)
        let byFile = try ws.provision("audit", "--json", "--store", ws.database.path)
        byFile.expect(0, "--store DIR/offline.db is the store DIR")
        XCTAssertEqual(try parseJSON(byFile.stdout)["store"], try parseJSON(byDirectory.stdout)["store"])
    }

    func testAMessageThatPointsAtAReportNamesOneThatExists() throws {
        let tiles = Demo.paris.tiles.sorted { ($0.z, $0.x, $0.y) < ($1.z, $1.x, $1.y) }
        for tile in tiles.suffix(14) { ws.server.setRoute(ws.tilePath(tile), .status(403)) }
        let job = try job([Demo.paris])

        let without = try ws.provision("apply", job)
        without.expect(75)
        for output in [without.stdout, without.stderr] {
            XCTAssertTrue(output.contains("… and 4 more"), output)
            XCTAssertFalse(output.contains("in the JSON report") || output.contains("listed in the JSON report,"), output)
            XCTAssertTrue(output.contains("'apply --report FILE' writes it"), output)
        }
        let reportURL = ws.root.appendingPathComponent("failures.json")
        let with = try ws.provision("apply", "--report", reportURL.path, job)
        with.expect(75)
        XCTAssertTrue(with.stdout.contains("… and 4 more: the JSON report \(reportURL.path) lists them"), with.stdout)
        XCTAssertTrue(with.stderr.contains("the JSON report \(reportURL.path) lists 4 of them"), with.stderr)
        XCTAssertEqual(try readJSON(reportURL)["failures"]?.arrayValue?.count, 14)
    }
}

extension Workspace {
    /// Runs the built binary with `command` and an argument array.
    func provision(_ command: String, _ arguments: [String], environment: [String: String] = [:],
                   file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try ProvisionProcess.provision([command] + arguments, in: root, environment: environment, file: file, line: line)
    }
}
