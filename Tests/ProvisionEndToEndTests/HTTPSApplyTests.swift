import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Issue 9 #6: HTTP as real hosts speak it, end to end. An apply over HTTPS from nginx (HTTP/2,
/// a certificate from a throwaway CA), redirects that leave the style's URL in the store, and the
/// plan's note on documents served with no-cache.
final class HTTPSApplyTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    private func nginxJob(_ nginx: NginxTLSServer) throws -> String {
        let origins: [(String, JSONValue)] = [(Demo.canonicalTiles, .string(nginx.baseURL + "/tiles/")),
                                              (Demo.canonicalBase, .string(nginx.baseURL + "/demo/"))]
        return try ws.write(Demo.job(regions: [Demo.paris.region()], origins: origins)).path
    }

    private func serveOverHTTPS(expires: String? = nil) throws -> NginxTLSServer {
        let tree = ws.root.appendingPathComponent("tile-tree")
        return try NginxTLSServer(serving: [("/demo/", Demo.directory), ("/tiles/", tree)], expires: expires)
    }

    /// Issue 20 #5: nginx with `expires 1h` sends its own clock's `Date`, `Cache-Control:
    /// max-age=3600`, an `Expires` an hour after that `Date` and the file's `Last-Modified`, as tile
    /// hosts do. Every stored `expires` is SOURCE_DATE_EPOCH plus the hour (never nginx's clock),
    /// every `modified` the file's Last-Modified, and a second apply into another store gives
    /// the same bytes.
    func testARealHostsCacheHeadersGiveTimesFromTheBuildTime() throws {
        let nginx = try serveOverHTTPS(expires: "1h")
        defer { nginx.stop() }
        let job = try nginxJob(nginx)
        let environment = ["CURL_CA_BUNDLE": nginx.caFile.path, "SOURCE_DATE_EPOCH": "1700000000"]
        let (a, b) = (ws.root.appendingPathComponent("a"), ws.root.appendingPathComponent("b"))
        try ws.provision("apply", "--quiet", "--store", a.path, job, environment: environment).expect(0)
        try ws.provision("apply", "--quiet", "--store", b.path, job, environment: environment).expect(0)

        let sql = SQLiteShell(database: a.appendingPathComponent("offline.db"))
        XCTAssertEqual(try sql.rows("SELECT DISTINCT expires FROM tiles UNION SELECT DISTINCT expires FROM resources"),
                       [["1700003600"]], "SOURCE_DATE_EPOCH + max-age, not nginx's Date")
        let style = Demo.directory.appendingPathComponent("styles/streets.json")
        let mtime = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: style.path)[.modificationDate] as? Date)
        XCTAssertEqual(try sql.int("SELECT modified FROM resources WHERE url = '\(Demo.styleURL)'"),
                       Int(mtime.timeIntervalSince1970), "Last-Modified as nginx sent it")
        for name in ["offline.db", "provision.lock.json"] {
            XCTAssertEqual(ws.sha256(b.appendingPathComponent(name)), ws.sha256(a.appendingPathComponent(name)), name)
        }
    }

    func testApplyOverHTTPSWithTheCAFromCURL_CA_BUNDLEUsesHTTP2() throws {
        let nginx = try serveOverHTTPS()
        defer { nginx.stop() }
        let job = try nginxJob(nginx)
        try ws.provision("apply", "--quiet", job, environment: ["CURL_CA_BUNDLE": nginx.caFile.path]).expect(0)

        let logged = nginx.requests
        XCTAssertEqual(Set(logged.map(\.proto)), ["HTTP/2.0"], "every request over HTTP/2")
        XCTAssertEqual(Set(logged.filter { $0.uri.hasPrefix("/tiles/") }.map(\.uri)).count, Demo.paris.tiles.count)
        XCTAssertEqual(Set(logged.map(\.status)), [200])
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM resources WHERE url = '\(Demo.styleURL)'"), 1)
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM resources WHERE url LIKE '%127.0.0.1%'"), 0,
                       "the canonical URLs are stored, not the mirror's")
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM tiles"), Demo.paris.tiles.count)
    }

    func testWithoutTheCAThePlanFailsWith69NamingTheHostAndNothingIsStored() throws {
        let nginx = try serveOverHTTPS()
        defer { nginx.stop() }
        let job = try nginxJob(nginx)
        let result = try ws.provision("apply", job)
        result.expect(69, "an untrusted certificate: upstream unavailable")
        XCTAssertTrue(result.stderr.contains("certificate of 127.0.0.1:\(nginx.port) is not trusted"), result.stderr)
        XCTAssertTrue(result.stderr.contains("set CURL_CA_BUNDLE"), result.stderr)
        XCTAssertEqual(nginx.requests, [], "no request got past the handshake")
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.database.path), "nothing is stored")
    }

    func testARedirectedStyleIsStoredUnderTheURLTheJobNames() throws {
        ws.server.serveDirectory(Demo.directory.appendingPathComponent("styles"), at: "/moved/")
        let moved = try LoopbackHTTPServer()
        defer { moved.stop() }
        moved.setRoute("/hop", .status(307, headers: [.init("Location", ws.server.baseURL + "/moved/streets.json")]))
        ws.server.setRoute("/demo/styles/streets.json", .status(301, headers: [.init("Location", moved.baseURL + "/hop")]))
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        try ws.provision("apply", "--quiet", job).expect(0)

        XCTAssertEqual(ws.server.requestCount("/moved/streets.json"), 1, "the chain was followed to its end")
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM resources WHERE url = '\(Demo.styleURL)'"), 1)
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM resources WHERE url LIKE '%moved%' OR url LIKE '%hop%'"), 0,
                       "the final URL is not stored")
        try ws.provision("plan", "--detailed-exitcode", job).expect(0, "converged through the redirect")
    }

    func testThePlanNotesDocumentsServedWithNoCache() throws {
        let style = try Data(contentsOf: Demo.directory.appendingPathComponent("styles/streets.json"))
        ws.server.setRoute("/demo/styles/streets.json", .ok(style, contentType: "application/json", headers: [
            .init("Cache-Control", "max-age=600"), .init("Cache-Control", "no-cache, must-revalidate"),
        ]))
        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let plan = try ws.provision("plan", "--json", job)
        let notes = try parseJSON(plan.stdout)["notes"]?.arrayValue ?? []
        let note = notes.first { $0["subject"]?.stringValue == Demo.styleURL }
        XCTAssertEqual(note?["message"]?.stringValue?.hasPrefix("1 document was served with no-cache/no-store/must-revalidate "
                                                                + "(MapLibre would store must_revalidate = 1 for 1)"), true,
                       "notes: \(notes)")
        XCTAssertEqual(note?["message"]?.stringValue?.contains("stores it with must_revalidate = 0 so devices use them offline"), true)

        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(try ws.sqlite.int("SELECT must_revalidate FROM resources WHERE url = '\(Demo.styleURL)'"), 0)
        XCTAssertEqual(try ws.sqlite.int("SELECT COUNT(*) FROM resources WHERE must_revalidate <> 0"), 0)
    }
}
