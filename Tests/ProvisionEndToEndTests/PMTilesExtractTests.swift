import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// A job cuts a bundle out of a PMTiles archive served over HTTP with byte ranges, as
/// `pmtiles extract` cuts one: the same tiles, the same bytes, for a bbox and a polygon.
///
/// "The same tiles" (go-pmtiles `extract.go`): the region's tile cover at the job's max zoom and
/// every ancestor of those tiles down to its min zoom, each one the archive holds. The oracle
/// (`Tests/Fixtures/pmtiles/pmtiles_oracle.py expect`) computes that cover with mercantile (bbox) or
/// supermercado (polygon) and reads each tile with the `pmtiles` package's reader.
final class PMTilesExtractTests: WorkspaceTestCase {
    private static let prefix = "https://tiles.example.com/world/"
    private static let template = prefix + "{z}/{x}/{y}.mvt"
    private static let africa: JSONValue = ["type": "Polygon", "coordinates": [[
        [-15.0, -30.0], [40.0, -30.0], [50.0, 10.0], [20.0, 5.0], [10.0, 35.0], [-15.0, 15.0], [-15.0, -30.0],
    ]]]

    override func setUpWithError() throws {
        guard Oracles.python != nil else { throw Oracles.Failure(description: Oracles.missing) }
        try super.setUpWithError()
    }

    private func job(archive: String, download: JSONValue = ["concurrency": 8, "retries": 2, "timeoutSeconds": 10])
        -> JSONValue {
        [
            "version": 1, "name": "extract", "store": "store",
            "regions": [
                ["id": "europe", "name": "Europe", "bbox": [-10.0, 35.0, 30.0, 60.0], "zoom": [2, 7],
                 "tilesets": [.string(Self.template)]],
                ["id": "africa", "name": "Africa", "geometry": Self.africa, "zoom": [3, 7],
                 "tilesets": [.string(Self.template)]],
            ],
            "origins": [Self.prefix: .string("pmtiles:" + archive)],
            "download": download,
        ]
    }

    /// What `pmtiles extract` cuts for both regions: "z/x/y" → SHA-256 of the tile (nil: absent).
    private func expected(_ archive: URL) throws -> [String: String?] {
        let polygon = ws.root.appendingPathComponent("africa.geojson")
        try Self.africa.data().write(to: polygon)
        let europe = try PMTilesFixture.expected(archive: archive, region: ["--bbox=-10,35,30,60"], minZoom: 2, maxZoom: 7)
        let africa = try PMTilesFixture.expected(archive: archive, region: ["--polygon", polygon.path], minZoom: 3, maxZoom: 7)
        return europe.merging(africa) { first, _ in first }
    }

    /// The store's tiles: "z/x/y" → SHA-256 of the stored payload (inflated), nil for an empty row.
    private func storedTiles() throws -> [String: String?] {
        var tiles: [String: String?] = [:]
        for row in try ws.sqlite.rows("SELECT z, x, y, compressed, hex(data), data IS NULL FROM tiles") {
            let key = "\(row[0])/\(row[1])/\(row[2])"
            guard row[5] == "0" else {
                tiles[key] = .some(nil)
                continue
            }
            let bytes = Data(hex: row[4])
            tiles[key] = SHA256.hex(row[3] == "1" ? try Zlib.inflate(bytes) : bytes)
        }
        return tiles
    }

    func testAJobCutsWhatPMTilesExtractCutsOverHTTPAndHTTPS() throws {
        let world = try PMTilesFixture.world()
        let expected = try expected(world)
        XCTAssertGreaterThan(expected.count, 700)
        XCTAssertFalse(expected.values.contains(nil), "the world archive holds every tile of zooms 0–7")
        for tls in [false, true] {
            let nginx = try NginxTLSServer(serving: [("/archives/", world.deletingLastPathComponent())], tls: tls)
            defer { nginx.stop() }
            try? FileManager.default.removeItem(at: ws.store)
            let path = try ws.write(job(archive: "\(nginx.baseURL)/archives/\(world.lastPathComponent)")).path
            let environment = tls ? ["CURL_CA_BUNDLE": nginx.caFile.path] : [:]
            try ws.provision("apply", "--quiet", path, environment: environment).expect(0, "apply (tls: \(tls))")
            let stored = try storedTiles()
            XCTAssertEqual(Set(stored.keys), Set(expected.keys), "the tiles pmtiles extract cuts (tls: \(tls))")
            for (key, digest) in expected where stored[key] != digest {
                XCTFail("\(key): stored \(String(describing: stored[key])), the pmtiles reader gives \(String(describing: digest))")
            }
            XCTAssertEqual(Set(nginx.requests.map(\.status)), [206], "only range requests")
            try ws.provision("plan", "--detailed-exitcode", path, environment: environment).expect(0, "nothing left to do")
        }
    }

    func testAnArchiveThatChangesMidApplyExits75KeepsTheStoreAndTheNextApplyFinishes() throws {
        let old = try Data(contentsOf: try PMTilesFixture.world())
        let newArchive = try PMTilesFixture.world(variant: "b")
        let new = try Data(contentsOf: newArchive)
        let served = Mutex(0)
        ws.server.setHandler(prefix: "/world.pmtiles") { request in
            let count = served.withLock { n -> Int in n += 1; return n }
            return count <= 150 ? .ranges(of: old, etag: "\"a\"", for: request) : .ranges(of: new, etag: "\"b\"", for: request)
        }
        let url = ws.server.baseURL + "/world.pmtiles"
        let path = try ws.write(job(archive: url, download: ["concurrency": 4, "retries": 1, "timeoutSeconds": 10])).path
        let first = try ws.provision("apply", "--quiet", path, environment: ["PROVISION_FLUSH_WINDOW_MS": "0"])
        first.expect(75, "a changed archive stops the apply as partial")
        XCTAssertTrue(first.stderr.contains("the PMTiles archive \(url) changed while it was read (ETag \"a\" → \"b\""),
                      first.stderr)
        XCTAssertTrue(first.stderr.contains("run apply again"), first.stderr)
        XCTAssertEqual(try ws.integrityCheck(), "ok")
        let kept = try storedTiles().count
        XCTAssertGreaterThan(kept, 50, "what was verified before the change is kept")
        let total = try expected(newArchive).count
        XCTAssertLessThan(kept, total)

        // The archive stays at its new version: the next apply reads it anew and fetches only what is missing.
        ws.server.setHandler(prefix: "/world.pmtiles") { .ranges(of: new, etag: "\"b\"", for: $0) }
        let before = ws.requests(under: "/world.pmtiles").count
        try ws.provision("apply", "--quiet", path).expect(0, "the next apply finishes")
        let fetched = ws.requests(under: "/world.pmtiles").count - before
        XCTAssertLessThanOrEqual(fetched, 1 + 4 + (total - kept), "committed tiles are not fetched again")
        XCTAssertEqual(try storedTiles().count, total)
        XCTAssertEqual(try ws.integrityCheck(), "ok")
        try ws.provision("audit").expect(0, "the store is whole")
    }

    func testArchivesThatCannotBeOpenedExitWithTheirCauseAndURL() throws {
        let world = try Data(contentsOf: try PMTilesFixture.world())
        var magic = world
        magic.replaceSubrange(0..<7, with: Data("NOTPMTL".utf8))
        let corrupt = magic
        ws.server.setRoute("/gone.pmtiles", .status(404, body: "no"))
        ws.server.setRoute("/whole.pmtiles", .ok(world))
        ws.server.setHandler(prefix: "/corrupt.pmtiles") { .ranges(of: corrupt, etag: "\"c\"", for: $0) }
        let base = ws.server.baseURL
        let local = ws.root.appendingPathComponent("corrupt.pmtiles")
        try corrupt.write(to: local)
        let cases: [(String, Int32, String)] = [
            ("\(base)/gone.pmtiles", 69, "there is no PMTiles archive at \(base)/gone.pmtiles (HTTP 404)"),
            ("\(base)/whole.pmtiles", 69, "the server does not serve byte ranges"),
            ("\(base)/corrupt.pmtiles", 65, "\(base)/corrupt.pmtiles is not a usable PMTiles archive"),
            (local.path, 65, "\(local.path) is not a usable PMTiles archive"),
        ]
        for (archive, status, message) in cases {
            let path = try ws.write(job(archive: archive, download: ["retries": 0])).path
            let planned = try ws.provision("plan", path)
            planned.expect(status, archive)
            XCTAssertTrue(planned.stderr.contains("cannot open an origin archive: "), planned.stderr)
            XCTAssertTrue(planned.stderr.contains(message), "\(planned.stderr)\n  expected: \(message)")
        }
        let missing = try ws.provision("validate", try ws.write(job(archive: "nowhere.pmtiles")).path)
        missing.expect(66, "a missing local archive is missing input, as the README's table says (issue 20)")
        XCTAssertTrue(missing.combined.contains("PMTiles file not found: \(ws.root.path)/nowhere.pmtiles"), missing.combined)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "nothing is written")
    }
}

private extension Data {
    /// Bytes from a hex string (as sqlite3's hex() prints them).
    init(hex: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}
