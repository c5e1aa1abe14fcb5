import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Bundles that update on devices: every row's `modified` is the upstream `Last-Modified`, else the
/// build time, so MapLibre's side-load merge of a v2 bundle over v1 replaces what changed.
final class SideLoadUpdateTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    private static let v1Time = "1700000000"
    private static let v2Time = "1700086400"
    private static let cities = [Demo.london, Demo.paris]
    /// Upstream bytes, served from here: the demo documents and the tile tree.
    private var upstream: URL { ws.root.appendingPathComponent("upstream") }
    /// `Last-Modified` per served path under `/lm/` (seconds); unlisted paths get `unchangedTime`.
    private let lastModified = LastModifiedTable()
    private static let unchangedTime: Int64 = 1_690_000_000
    private static let changedTime: Int64 = 1_695_000_000
    private let changedTile = Demo.london.tiles.filter { $0.z == 14 }.sorted()[0]

    override func setUpWithError() throws {
        try super.setUpWithError()
        try ws.copyUpstream()
        let root = upstream, table = lastModified
        ws.server.setHandler(prefix: "/lm/") { request in
            let relative = String(request.path.dropFirst("/lm/".count))
            guard let decoded = relative.removingPercentEncoding,
                  let body = try? Data(contentsOf: root.appendingPathComponent(decoded)) else { return nil }
            let time = table.time(relative) ?? Self.unchangedTime
            return .respond(status: 200, headers: [.init("Last-Modified", Self.httpDate(time))], body: body)
        }
    }

    private static func httpDate(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// A job over the upstream copy: from directories (no Last-Modified) or over HTTP with it.
    private func job(http: Bool) throws -> String {
        let origins: [(String, JSONValue)] = http
            ? [(Demo.canonicalTiles, .string(ws.server.baseURL + "/lm/tiles/")), (Demo.canonicalBase, .string(ws.server.baseURL + "/lm/"))]
            : [(Demo.canonicalTiles, .string(upstream.appendingPathComponent("tiles").path)), (Demo.canonicalBase, .string(upstream.path))]
        return try ws.write(Demo.job(regions: Self.cities.map { $0.region() }, origins: origins)).path
    }

    private func apply(_ job: String, store: URL, time: String) throws {
        try ws.provision("apply", "--quiet", "--store", store.path, job, environment: ["SOURCE_DATE_EPOCH": time]).expect(0)
    }

    /// Changes one tile and the style upstream, with a newer Last-Modified for both.
    private func changeUpstream() throws {
        let tilePath = "tiles/\(changedTile.z)/\(changedTile.x)/\(changedTile.y).pbf"
        let other = Demo.paris.tiles.filter { $0.z == 14 }.sorted()[0]
        try Data(contentsOf: upstream.appendingPathComponent("tiles/\(other.z)/\(other.x)/\(other.y).pbf"))
            .write(to: upstream.appendingPathComponent(tilePath))
        let styleURL = upstream.appendingPathComponent("styles/streets.json")
        let style = try String(contentsOf: styleURL, encoding: .utf8)
        try style.replacingOccurrences(of: "\"Demo Streets\"", with: "\"Demo Streets v2\"").write(to: styleURL, atomically: true, encoding: .utf8)
        lastModified.set(tilePath, Self.changedTime)
        lastModified.set("styles/streets.json", Self.changedTime)
    }

    private func store(_ name: String) -> URL { ws.root.appendingPathComponent(name) }
    private func database(_ name: String) -> URL { store(name).appendingPathComponent("offline.db") }

    /// Builds v1, changes the upstream, builds v2 fresh, and merges v2 into a device copy of v1.
    private func mergeV2OverV1(http: Bool) throws -> (SideLoadMerge.Result, tiles: Int, resources: Int) {
        let job = try job(http: http)
        try apply(job, store: store("v1"), time: Self.v1Time)
        try changeUpstream()
        try apply(job, store: store("v2"), time: Self.v2Time)
        let device = ws.root.appendingPathComponent("device.db")
        try FileManager.default.copyItem(at: database("v1"), to: device)
        let result = try SideLoadMerge.merge(database("v2"), into: device)

        // The device now holds v2's bytes for the changed tile and style.
        let tileWhere = "z = \(changedTile.z) AND x = \(changedTile.x) AND y = \(changedTile.y)"
        let deviceShell = SQLiteShell(database: device), v2 = SQLiteShell(database: database("v2"))
        XCTAssertEqual(try deviceShell.scalar("SELECT hex(data) FROM tiles WHERE \(tileWhere)"),
                       try v2.scalar("SELECT hex(data) FROM tiles WHERE \(tileWhere)"))
        XCTAssertNotEqual(try deviceShell.scalar("SELECT hex(data) FROM tiles WHERE \(tileWhere)"),
                          try SQLiteShell(database: database("v1")).scalar("SELECT hex(data) FROM tiles WHERE \(tileWhere)"))
        XCTAssertEqual(try deviceShell.scalar("SELECT hex(data) FROM resources WHERE kind = 1"),
                       try v2.scalar("SELECT hex(data) FROM resources WHERE kind = 1"))
        XCTAssertEqual(result.regionsAdded, 0, "same definitions and descriptions: the regions are merged, not added")
        XCTAssertEqual(result.tilesAdded + result.resourcesAdded, 0)
        return (result, try v2.int("SELECT count(*) FROM tiles"), try v2.int("SELECT count(*) FROM resources"))
    }

    func testWithoutLastModifiedEveryRowCarriesTheBuildTimeAndAV2MergeReplacesThemAll() throws {
        let (result, tiles, resources) = try mergeV2OverV1(http: false)
        XCTAssertEqual(result.tilesReplaced, tiles)
        XCTAssertEqual(result.resourcesReplaced, resources)
        let v2 = SQLiteShell(database: database("v2"))
        XCTAssertEqual(try v2.rows("SELECT DISTINCT modified FROM tiles UNION SELECT DISTINCT modified FROM resources")
            .map { $0[0] }, [Self.v2Time])
    }

    func testWithLastModifiedAV2MergeReplacesExactlyTheRowsThatChanged() throws {
        let (result, _, _) = try mergeV2OverV1(http: true)
        XCTAssertEqual(result.tilesReplaced, 1, "only the changed tile")
        XCTAssertEqual(result.resourcesReplaced, 1, "only the changed style")
        XCTAssertEqual(try SQLiteShell(database: database("v2")).int("SELECT count(*) FROM resources WHERE modified = \(Self.unchangedTime)"),
                       try SQLiteShell(database: database("v2")).int("SELECT count(*) FROM resources") - 1)
    }

    func testAnIncrementalBuildStampsKeptRowsAndEqualsAFreshOneAtTheSameTime() throws {
        let job = try job(http: false)
        try apply(job, store: store("incremental"), time: Self.v1Time)
        try changeUpstream()
        // The style drifted, so the next build rewrites the store; kept tiles get the new time too.
        try apply(job, store: store("incremental"), time: Self.v2Time)
        try apply(job, store: store("fresh"), time: Self.v2Time)
        let incremental = SQLiteShell(database: database("incremental"))
        XCTAssertEqual(try incremental.rows("SELECT DISTINCT modified FROM tiles").map { $0[0] }, [Self.v2Time])
        XCTAssertEqual(try incremental.rows("SELECT DISTINCT accessed FROM tiles").map { $0[0] }, [Self.v2Time])
        // The changed tile was not refetched (its TileJSON did not change), so compare everything else.
        let tileWhere = "NOT (z = \(changedTile.z) AND x = \(changedTile.x) AND y = \(changedTile.y))"
        for table in ["resources", "tiles"] {
            let columns = table == "tiles" ? "url_template, z, x, y, modified, accessed, hex(data)" : "url, modified, accessed, hex(data)"
            let condition = table == "tiles" ? " WHERE \(tileWhere)" : ""
            XCTAssertEqual(try incremental.rows("SELECT \(columns) FROM \(table)\(condition) ORDER BY 1, 2, 3, 4"),
                           try SQLiteShell(database: database("fresh")).rows("SELECT \(columns) FROM \(table)\(condition) ORDER BY 1, 2, 3, 4"),
                           table)
        }
    }

    func testWithoutSourceDateEpochTheBuildTimeIsTheClockAndAResumedBuildKeepsIt() throws {
        let job = try job(http: false)
        let first = try ws.provision("plan", "--json", job, environment: ["PROVISION_NOW": "1750000000"])
        first.expect(0)
        let notes = try parseJSON(first.stdout)["notes"]?.arrayValue ?? []
        XCTAssertTrue(notes.contains { $0["subject"] == "build time" && $0["message"]?.stringValue?.contains("2025-06-15T15:06:40Z") == true },
                      "\(notes)")
        try ws.provision("apply", "--quiet", job, environment: ["PROVISION_NOW": "1750000000"]).expect(0)
        XCTAssertEqual(try ws.sqlite.rows("SELECT DISTINCT modified FROM tiles").map { $0[0] }, ["1750000000"])
        XCTAssertEqual(try readJSON(ws.lock)["epoch"], .int(1_750_000_000))

        // A stamped row left by an unfinished build (here: a partial build file) is resumed at its time.
        try FileManager.default.copyItem(at: ws.database, to: ws.store.appendingPathComponent("offline.db.canonical"))
        _ = try SQLiteShell(database: ws.store.appendingPathComponent("offline.db.canonical"))
            .rows("UPDATE resources SET accessed = 1760000000", writing: true)
        let resumed = try ws.provision("plan", "--json", job, environment: ["PROVISION_NOW": "1800000000"])
        XCTAssertTrue(resumed.stdout.contains("2025-10-09T08:53:20Z"), resumed.stdout)
        try FileManager.default.removeItem(at: ws.store.appendingPathComponent("offline.db.canonical"))

        // A finished store: the next build takes the clock, and never goes back in time.
        let later = try ws.provision("plan", "--json", job, environment: ["PROVISION_NOW": "1800000000"])
        XCTAssertTrue(later.stdout.contains("2027-01-15T08:00:00Z"), later.stdout)
        let earlier = try ws.provision("plan", "--json", job, environment: ["PROVISION_NOW": "1600000000"])
        XCTAssertTrue(earlier.stdout.contains("2025-06-15T15:06:41Z"), earlier.stdout)
        try ws.provision("plan", "--json", job, environment: ["SOURCE_DATE_EPOCH": "1700000000"]).expect(0)
        XCTAssertFalse(try ws.provision("plan", "--json", job, environment: ["SOURCE_DATE_EPOCH": "1700000000"])
            .stdout.contains("build time"))
    }
}

/// Per-path Last-Modified times, shared with the server's handler thread.
final class LastModifiedTable: Sendable {
    private let times = Mutex<[String: Int64]>([:])

    func set(_ path: String, _ time: Int64) {
        times.withLock { $0[path] = time }
    }

    func time(_ path: String) -> Int64? {
        times.withLock { $0[path] }
    }
}
