import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import ProvisionTestSupport
import TileMath
import XCTest
@testable import ProvisionExecution

/// PMTiles archives as origins, read locally and over HTTP with range requests, against archives
/// the `pmtiles` package wrote and the tiles its reader gives (`Tests/Fixtures/pmtiles`).
final class PMTilesOriginTests: XCTestCase {
    private struct Fixture: Sendable {
        /// z0–7, gzip tiles, four leaf directories.
        var world: URL
        /// "z/x/y" → SHA-256 of every tile's payload, as the pmtiles package's reader gives it.
        var oracle: [String: String]
    }

    /// Made once for the class (and cached across runs by `PMTilesFixture`).
    private static let fixture: Result<Fixture, Oracles.Failure> = {
        guard Oracles.python != nil else { return .failure(Oracles.Failure(description: Oracles.missing)) }
        do {
            let world = try PMTilesFixture.world()
            let dump = try Oracles.run(PMTilesFixture.script, ["dump", world.path])
            return .success(Fixture(world: world, oracle: try JSONSerialization.jsonObject(with: dump) as? [String: String] ?? [:]))
        } catch {
            return .failure(Oracles.Failure(description: "cannot make the PMTiles fixture: \(error)"))
        }
    }()
    private static var world: URL { (try? fixture.get().world) ?? URL(fileURLWithPath: "/nonexistent") }
    private static var oracle: [String: String] { (try? fixture.get().oracle) ?? [:] }
    private static let prefix = "https://tiles.example.com/world/"

    override func setUpWithError() throws {
        guard Oracles.python != nil else { throw Oracles.Failure(description: Oracles.missing) }
        _ = try Self.fixture.get()
        XCTAssertFalse(Self.oracle.isEmpty)
    }

    /// Tile requests for `tiles` under the test prefix.
    private func requests(_ tiles: [TileID]) -> [FetchRequest] {
        tiles.map { FetchRequest(url: "\(Self.prefix)\($0.z)/\($0.x)/\($0.y).mvt", kind: .tile, tile: $0) }
    }

    /// Every tile of zooms 0–7 in a band across all four leaves, plus tiles past the archive's zooms.
    private var sample: [TileID] {
        var tiles: [TileID] = []
        for z in 0...7 {
            let n = 1 << z
            for x in stride(from: 0, to: n, by: max(1, n / 16)) {
                for y in stride(from: 0, to: n, by: max(1, n / 8)) { tiles.append(TileID(z: z, x: x, y: y)) }
            }
        }
        return tiles + [TileID(z: 8, x: 3, y: 4), TileID(z: 12, x: 100, y: 100)]
    }

    private func fetcher(concurrency: Int = 8, retries: Int = 2, caFile: URL? = nil) throws -> HTTPFetcher {
        var environment: [String: String] = [:]
        if let caFile { environment["CURL_CA_BUNDLE"] = caFile.path }
        return try HTTPFetcher(configuration: HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: concurrency, retries: retries, timeoutSeconds: 10),
            retry: fastRetries(retries), trust: TLSTrust(environment: environment)))
    }

    private func router(_ mirror: Mirror, http: HTTPFetcher?) throws -> OriginRouter {
        let routes = try OriginRouter.routes(for: [Origin(prefix: Self.prefix, mirror: mirror)]) { _ in
            throw CocoaError(.fileReadUnsupportedScheme)
        }
        let router = OriginRouter(routes: routes, http: http)
        try router.openRemoteArchives()
        return router
    }

    /// Checks every result against the reader: present tiles byte for byte (rewrapped as zlib,
    /// not recompressed), absent ones `.notFound`; each request answered once.
    private func assertMatchesReader(_ results: [(FetchRequest, Result<FetchedBody, FetchFailure>)], _ tiles: [TileID],
                                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(results.count, tiles.count, "one result per request", file: file, line: line)
        XCTAssertEqual(Set(results.compactMap(\.0.tile)), Set(tiles), file: file, line: line)
        for (request, result) in results {
            guard let tile = request.tile else { continue }
            let key = "\(tile.z)/\(tile.x)/\(tile.y)"
            switch (result, Self.oracle[key]) {
            case (.success(let body), let digest?):
                XCTAssertEqual(SHA256.hex(body.data), digest, key, file: file, line: line)
                XCTAssertNotNil(body.zlibData, "\(key): the gzip tile is rewrapped, not recompressed", file: file, line: line)
            case (.failure(.notFound), nil): break
            default: XCTFail("\(key): \(result) where the reader has \(Self.oracle[key] ?? "no tile")", file: file, line: line)
            }
        }
    }

    func testALocalArchiveServesTheReadersTiles() throws {
        let tiles = sample
        assertMatchesReader(fetch(try router(.pmtiles(Self.world), http: nil), requests(tiles)), tiles)
    }

    func testARemoteArchiveOverHTTPAndHTTPSServesTheReadersTiles() throws {
        for tls in [false, true] {
            let nginx = try NginxTLSServer(serving: [("/archives/", Self.world.deletingLastPathComponent())], tls: tls)
            defer { nginx.stop() }
            let url = "\(nginx.baseURL)/archives/\(Self.world.lastPathComponent)"
            let router = try router(.remotePMTiles(url), http: try fetcher(caFile: tls ? nginx.caFile : nil))
            let tiles = sample
            assertMatchesReader(fetch(router, requests(tiles)), tiles)
            XCTAssertEqual(Set(nginx.requests.map(\.status)), [206], "only range requests, all answered 206 (tls: \(tls))")
            XCTAssertEqual(Set(nginx.requests.map(\.proto)), [tls ? "HTTP/2.0" : "HTTP/1.1"])
        }
    }

    func testEachDirectoryIsReadOnceWhileItsTilesWait() throws {
        let data = try Data(contentsOf: Self.world)
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setHandler(prefix: "/w.pmtiles") { .ranges(of: data, etag: "\"v1\"", for: $0) }
        let router = try router(.remotePMTiles(server.baseURL + "/w.pmtiles"), http: try fetcher(concurrency: 16))
        let header = try PMTiles.Header(decoding: data)
        let tiles = sample
        let results = fetch(router, requests(tiles))
        assertMatchesReader(results, tiles)
        let ranges = server.requests.compactMap { $0.headers["range"] }
        XCTAssertEqual(ranges.count, server.requests.count, "every request asks for a range")
        XCTAssertEqual(ranges.first, "bytes=0-16383", "the header and root first")
        let leafSection = header.leafDirectoriesOffset..<(header.leafDirectoriesOffset + header.leafDirectoriesLength)
        let leafReads = ranges.compactMap(LoopbackHTTPServer.Behaviour.byteRange).filter { leafSection.contains(UInt64($0.first)) }
        XCTAssertEqual(leafReads.count, 4, "the sample needs all four leaf directories")
        XCTAssertEqual(Set(leafReads.map(\.first)).count, leafReads.count, "each leaf directory is read once")
        XCTAssertEqual(ranges.filter { $0 == "bytes=0-16383" }.count, 1, "the header is read once")
        let present = results.filter { (try? $0.1.get()) != nil }.count
        XCTAssertEqual(ranges.count, 1 + 4 + present, "one range per tile present, none for absent tiles")
    }

    func testRangeRequestsTakeTheRateLimitsTokensAsEveryRequestDoes() throws {
        let data = try Data(contentsOf: Self.world)
        // The fetcher waits on a manual clock the server stamps requests with: waits are exact
        // and take no time.
        let clock = ManualClock()
        let server = try LoopbackHTTPServer(clock: clock)
        defer { server.stop() }
        server.setHandler(prefix: "/w.pmtiles") { .ranges(of: data, etag: "\"v1\"", for: $0) }
        let http = try HTTPFetcher(configuration: HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: 4, retries: 0, timeoutSeconds: 10, requestsPerSecond: 20),
            retry: RetryPolicy.none, clock: clock))
        let router = try router(.remotePMTiles(server.baseURL + "/w.pmtiles"), http: http)
        // Tiles of three leaf directories: some wait for a directory while the limiter holds the next start.
        let tiles = sample.filter { $0.z <= 4 } + [TileID(z: 7, x: 0, y: 0), TileID(z: 7, x: 127, y: 127), TileID(z: 6, x: 40, y: 20)]
        assertMatchesReader(fetch(router, requests(tiles)), tiles)
        let times = server.requests.map(\.receivedAt).sorted()
        XCTAssertGreaterThan(times.count, tiles.count - 10)
        for (later, earlier) in zip(times.dropFirst(), times) {
            XCTAssertGreaterThanOrEqual(later - earlier, 0.05 - 1e-6, "range requests are 50 ms apart at 20/s")
        }
    }

    func testTheLeafCacheIsBoundedAndLeavesAreReadAgainWhenDropped() throws {
        let data = try Data(contentsOf: Self.world)
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setHandler(prefix: "/w.pmtiles") { .ranges(of: data, etag: "\"v1\"", for: $0) }
        // A budget below one leaf's entries: only the leaf read last stays.
        let archive = RemotePMTilesArchive(url: server.baseURL + "/w.pmtiles", cacheBudget: 1000)
        let http = try fetcher(concurrency: 1)
        try archive.open(using: http)
        let router = OriginRouter(routes: [.remoteArchive(Self.prefix, archive)], http: http)
        let tiles = sample
        assertMatchesReader(fetch(router, requests(tiles) + requests(tiles)), tiles + tiles)
        XCTAssertEqual(archive.cachedLeaves, 1)
        let header = try PMTiles.Header(decoding: data)
        let leafReads = server.requests.compactMap { $0.headers["range"].flatMap(LoopbackHTTPServer.Behaviour.byteRange) }
            .filter { UInt64($0.first) >= header.leafDirectoriesOffset && UInt64($0.first) < header.tileDataOffset }
        XCTAssertGreaterThan(leafReads.count, 4, "dropped leaves are read again")
    }

    func testAnArchiveThatChangesStopsTheRunAndAnswersEveryRequestOnce() throws {
        let old = try Data(contentsOf: Self.world)
        let new = try Data(contentsOf: try PMTilesFixture.world(variant: "b"))
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let served = Mutex(0)
        server.setHandler(prefix: "/w.pmtiles") { request in
            let count = served.withLock { n -> Int in n += 1; return n }
            return count <= 8 ? .ranges(of: old, etag: "\"a\"", for: request) : .ranges(of: new, etag: "\"b\"", for: request)
        }
        let router = try router(.remotePMTiles(server.baseURL + "/w.pmtiles"), http: try fetcher(concurrency: 4))
        let tiles = sample
        let pulled = CountingRequests(requests(tiles))
        var iterator = pulled
        var results: [(FetchRequest, Result<FetchedBody, FetchFailure>)] = []
        router.fetchAll(&iterator) { results.append(($0, $1)) }
        XCTAssertEqual(results.count, pulled.pulled, "every request pulled is answered once")
        XCTAssertEqual(Set(results.map(\.0.url)).count, results.count)
        XCTAssertLessThan(pulled.pulled, tiles.count, "no request is pulled after the change is seen")
        let changed = results.compactMap { result -> String? in
            if case .failure(.changed(let why)) = result.1 { return why } else { return nil }
        }
        XCTAssertFalse(changed.isEmpty)
        XCTAssertTrue(changed[0].contains("\(server.baseURL)/w.pmtiles changed while it was read (ETag \"a\" → \"b\""), changed[0])
        XCTAssertLessThan(server.requests.count, tiles.count / 2, "no request is started after the change is seen")
        for (request, result) in results {
            guard case .success(let body) = result, let tile = request.tile else { continue }
            XCTAssertEqual(SHA256.hex(body.data), Self.oracle["\(tile.z)/\(tile.x)/\(tile.y)"], "only the first version's bytes")
        }
    }

    func testTruncatedRangesAreRetriedAndAShortContentRangeIsRefused() throws {
        let data = try Data(contentsOf: Self.world)
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        // Every third range after the header is cut short the first time it is asked for.
        let seen = Mutex<[String: Int]>([:])
        server.setHandler(prefix: "/w.pmtiles") { request in
            let range = request.headers["range"] ?? ""
            let (count, attempt) = seen.withLock { seen -> (Int, Int) in
                seen[range, default: 0] += 1
                return (seen.count, seen[range] ?? 0)
            }
            guard count > 1, count % 3 == 0, attempt == 1, case .respond(206, _, let body) = Self.answer(data, request) else {
                return Self.answer(data, request)
            }
            return .truncated(body: body.prefix(body.count / 2), claimedLength: body.count)
        }
        let http = try fetcher(concurrency: 4, retries: 3)
        let router = try router(.remotePMTiles(server.baseURL + "/w.pmtiles"), http: http)
        let tiles = sample
        assertMatchesReader(fetch(router, requests(tiles)), tiles)
        XCTAssertGreaterThan(router.retryCount, 10, "cut ranges were fetched again")

        // A server that answers a range with fewer bytes than asked (not at the end) is wrong every time.
        server.setHandler(prefix: "/short.pmtiles") { request in
            guard request.headers["range"] != "bytes=0-16383",
                  case .respond(206, var headers, let body) = Self.answer(data, request),
                  let range = request.headers["range"].flatMap(LoopbackHTTPServer.Behaviour.byteRange) else {
                return Self.answer(data, request)
            }
            headers = headers.filter { $0.name != "Content-Range" }
                + [.init("Content-Range", "bytes \(range.first)-\(range.first)/\(data.count)")]
            return .respond(status: 206, headers: headers, body: body.prefix(1))
        }
        let short = try self.router(.remotePMTiles(server.baseURL + "/short.pmtiles"), http: try fetcher(retries: 0))
        let failures = fetch(short, requests([TileID(z: 0, x: 0, y: 0)]))
        guard case .failure(.transport(let why))? = failures.first?.1 else { return XCTFail("\(failures)") }
        XCTAssertTrue(why.contains("/short.pmtiles answered bytes "), why)
    }

    private static func answer(_ data: Data, _ request: LoopbackHTTPServer.LoggedRequest) -> LoopbackHTTPServer.Behaviour {
        .ranges(of: data, etag: "\"v1\"", for: request)
    }

    func testOpeningFailsClearlyForAMissingArchiveAServerWithoutRangesAndCorruptBytes() throws {
        let data = try Data(contentsOf: Self.world)
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/gone.pmtiles", .status(404, body: "no"))
        server.setRoute("/whole.pmtiles", .ok(data))
        var magic = data
        magic.replaceSubrange(0..<7, with: Data("PMTilez".utf8))
        let notPMTiles = magic
        server.setHandler(prefix: "/magic.pmtiles") { .ranges(of: notPMTiles, etag: "\"m\"", for: $0) }
        let header = try PMTiles.Header(decoding: data)
        var root = data
        let rootStart = Int(header.rootDirectoryOffset)
        root.replaceSubrange(rootStart..<(rootStart + 10), with: Data(repeating: 0xFF, count: 10))
        let badRoot = root
        server.setHandler(prefix: "/root.pmtiles") { .ranges(of: badRoot, etag: "\"r\"", for: $0) }
        let base = server.baseURL
        let cases: [(String, ArchiveOpenError.Kind, String)] = [
            ("/gone.pmtiles", .unavailable, "there is no PMTiles archive at \(base)/gone.pmtiles (HTTP 404)"),
            ("/whole.pmtiles", .unavailable, "\(base)/whole.pmtiles answered a range request with HTTP 200 and the whole object: "
                + "the server does not serve byte ranges"),
            ("/magic.pmtiles", .invalid, "\(base)/magic.pmtiles is not a usable PMTiles archive: not a PMTiles archive (no PMTiles magic)"),
            ("/root.pmtiles", .invalid, "\(base)/root.pmtiles: the root directory (bytes \(rootStart)-"),
        ]
        for (path, kind, message) in cases {
            XCTAssertThrowsError(try router(.remotePMTiles(base + path), http: try fetcher(retries: 0)), path) { error in
                guard let error = error as? ArchiveOpenError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, kind, path)
                XCTAssertTrue(error.message.contains(message), "\(error.message)\n  expected: \(message)")
            }
        }
        let wholeBytes = server.requests.filter { $0.path == "/whole.pmtiles" }.count
        XCTAssertEqual(wholeBytes, 1, "a server that ignores ranges is not asked again")

        // The same bytes in a local file: the same problems, named by path.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pmtiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("magic.pmtiles")
        try notPMTiles.write(to: file)
        XCTAssertThrowsError(try router(.pmtiles(file), http: nil)) { error in
            XCTAssertEqual((error as? ArchiveOpenError)?.kind, .invalid)
            XCTAssertEqual((error as? ArchiveOpenError)?.message,
                           "\(file.path) is not a usable PMTiles archive: not a PMTiles archive (no PMTiles magic)")
        }
        XCTAssertThrowsError(try router(.pmtiles(directory.appendingPathComponent("none.pmtiles")), http: nil)) { error in
            XCTAssertEqual((error as? ArchiveOpenError)?.kind, .missing)
        }
    }

    func testACorruptLeafDirectoryFailsItsTilesNamingTheLeafAndIsNotReadAgain() throws {
        var bytes = try Data(contentsOf: Self.world)
        let header = try PMTiles.Header(decoding: bytes)
        let leafStart = Int(header.leafDirectoriesOffset)
        bytes.replaceSubrange(leafStart..<(leafStart + 16), with: Data(repeating: 0, count: 16))
        let data = bytes
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setHandler(prefix: "/w.pmtiles") { .ranges(of: data, etag: "\"v1\"", for: $0) }
        let router = try router(.remotePMTiles(server.baseURL + "/w.pmtiles"), http: try fetcher(concurrency: 4))
        let results = fetch(router, requests(sample))
        let broken = results.compactMap { result -> String? in
            if case .failure(.invalidBody(let why)) = result.1 { return why } else { return nil }
        }
        XCTAssertFalse(broken.isEmpty)
        XCTAssertTrue(broken.allSatisfy { $0.hasPrefix("\(server.baseURL)/w.pmtiles: the leaf directory at bytes \(leafStart)-") },
                      "\(broken.first ?? "")")
        let reads = server.requests.filter { $0.headers["range"]?.hasPrefix("bytes=\(leafStart)-") == true }
        XCTAssertEqual(reads.count, 1, "a leaf that cannot be read is not fetched again for each tile")
        XCTAssertGreaterThan(results.filter { (try? $0.1.get()) != nil }.count, 30, "tiles of the other leaves arrive")
    }
}
