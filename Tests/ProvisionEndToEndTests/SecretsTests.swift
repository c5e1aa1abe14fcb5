import Foundation
import ProvisionModel
import XCTest

/// DESIGN invariant 5: access tokens from the environment or `${VAR}` references are used on the
/// wire and never appear in the store, the lock, reports, stdout or stderr.
final class SecretsTests: WorkspaceTestCase {
    private static let mapboxToken = "pk.SECRETTOKEN123"
    private static let testKey = "sk.TESTKEY456SECRET"
    private static let secrets = [mapboxToken, testKey]
    private static let environment = ["MAPBOX_ACCESS_TOKEN": mapboxToken, "TEST_KEY": testKey]

    private var outputs: [(String, ProcessResult)] = []

    override class var servesTiles: Bool { true }

    private func run(_ arguments: String..., environment extra: [String: String] = [:]) throws -> ProcessResult {
        let result = try ProvisionProcess.provision(arguments, in: ws.root,
                                                    environment: Self.environment.merging(extra) { _, new in new })
        outputs.append((arguments.joined(separator: " "), result))
        return result
    }

    func testKeyReferencesAreExpandedOnTheWireOnly() throws {
        // The style and an extra tileset are fetched straight from the loopback server with ?key=${TEST_KEY};
        // the style's own URLs (tiles.example.com) go through the origins as usual.
        let style = ws.server.baseURL + "/demo/styles/streets.json?key=${TEST_KEY}"
        let tileset = ws.server.baseURL + "/tiles/{z}/{x}/{y}.pbf?key=${TEST_KEY}"
        let region = Demo.paris.region(extra: [("tilesets", [.string(tileset)])])
        let job = Demo.job(regions: [region], origins: ws.origins(tiles: .http), stylePacks: [Demo.stylePack(style: style)])
        let file = try ws.write(job).path
        let reportURL = ws.root.appendingPathComponent("report.json")

        try run("validate", file).expect(0)
        try run("plan", "--verbose", file).expect(0)
        try run("plan", "--json", "--progress", "json", file).expect(0)
        try run("apply", "--verbose", "--progress", "json", "--report", reportURL.path, file).expect(0)
        try run("plan", "--markdown", file).expect(64) // not an option: the usage error must not leak either
        try run("plan", "--format", "markdown", file).expect(0)
        try run("audit", "--json", "--store", ws.store.path).expect(0)
        try run("audit", "--verbose", "--store", ws.store.path).expect(0)

        // The references were expanded for the requests, and only there.
        let targets = ws.server.requests.map(\.target)
        XCTAssertTrue(targets.contains("/demo/styles/streets.json?key=\(Self.testKey)"), "\(targets.prefix(5))")
        XCTAssertTrue(targets.contains { $0.hasPrefix("/tiles/") && $0.hasSuffix("?key=\(Self.testKey)") })
        XCTAssertFalse(targets.contains { $0.contains("TEST_KEY") }, "no unexpanded reference is sent")

        // The store records the canonical URLs: the parameters that carry a key are dropped, so a device that
        // adds its key to network requests only finds every row.
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 1 AND url = '\(ws.server.baseURL)/demo/styles/streets.json'"), 1)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template = '\(ws.server.baseURL)/tiles/{z}/{x}/{y}.pbf'"),
                       Demo.paris.tiles.count)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE url LIKE '%KEY%'"), 0)

        try assertNoSecrets(files: [reportURL])
    }

    func testMapboxTokenNeverPrinted() throws {
        // mapbox:// needs the token on the wire. The request goes through an HTTPS proxy on 127.0.0.1 (the loopback
        // server, which refuses the tunnel), so nothing leaves the machine and the plan fails with 69.
        let job = Demo.job(regions: [Demo.paris.region()], origins: [],
                           stylePacks: [Demo.stylePack(style: "mapbox://styles/demo/streets")])
        let file = try ws.write(job).path
        let proxy = ["https_proxy": ws.server.baseURL, "HTTPS_PROXY": ws.server.baseURL, "no_proxy": "", "NO_PROXY": ""]
        try run("plan", "--verbose", file, environment: proxy).expect(69)
        try run("plan", "--json", "--verbose", file, environment: proxy).expect(69)
        try run("apply", "--verbose", "--progress", "json", file, environment: proxy).expect(69)
        XCTAssertTrue(ws.server.requests.contains { $0.target == "api.mapbox.com:443" },
                      "the request went to the loopback proxy: \(ws.server.requests.map(\.target))")
        XCTAssertTrue(outputs[0].1.stderr.contains("mapbox://styles/demo/streets"), outputs[0].1.stderr)
        try assertNoSecrets(files: [])
    }

    private func assertNoSecrets(files: [URL], file: StaticString = #filePath, line: UInt = #line) throws {
        try ws.assertNoSecrets(Self.secrets, outputs: outputs, files: files, file: file, line: line)
    }
}
