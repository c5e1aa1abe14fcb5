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

        // The store records the canonical URLs, references kept.
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 1 AND url = '\(style)'"), 1)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template = '\(tileset)'"),
                       Demo.paris.tiles.count)

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

    /// No secret in any output, in `files`, in any file of the store, or in any stored value once inflated.
    private func assertNoSecrets(files: [URL], file: StaticString = #filePath, line: UInt = #line) throws {
        var leaks: [String] = []
        for secret in Self.secrets {
            for (command, result) in outputs {
                if result.stdout.contains(secret) { leaks.append("stdout of `provision \(command)`") }
                if result.stderr.contains(secret) { leaks.append("stderr of `provision \(command)`") }
            }
            var everything = files
            if let enumerator = FileManager.default.enumerator(at: ws.store, includingPropertiesForKeys: nil) {
                everything += enumerator.compactMap { $0 as? URL }
            }
            for url in everything {
                guard let data = try? Data(contentsOf: url) else { continue }
                if data.range(of: Data(secret.utf8)) != nil { leaks.append(url.lastPathComponent) }
            }
            if FileManager.default.fileExists(atPath: ws.database.path), try SQLiteShell.canInflate() {
                let needle = "CAST('\(secret)' AS BLOB)"
                let data = SQLiteShell.inflatedData
                let checks = [
                    "resources": "instr(CAST(url AS BLOB), \(needle)) OR instr(CAST(\(data) AS BLOB), \(needle)) OR instr(CAST(ifnull(etag, '') AS BLOB), \(needle))",
                    "tiles": "instr(CAST(url_template AS BLOB), \(needle)) OR instr(CAST(\(data) AS BLOB), \(needle))",
                    "regions": "instr(CAST(definition AS BLOB), \(needle)) OR instr(CAST(ifnull(description, '') AS BLOB), \(needle))",
                ]
                for (table, condition) in checks.sorted(by: { $0.key < $1.key }) {
                    let count = try ws.sqlite.int("SELECT count(*) FROM \(table) WHERE \(condition)")
                    if count != 0 { leaks.append("\(count) rows of \(table)") }
                }
            }
        }
        XCTAssertEqual(leaks, [], "secrets leaked", file: file, line: line)
    }
}
