import ProvisionModel
import ProvisionTestSupport
import TileMath
import XCTest
@testable import ProvisionExecution

/// An in-memory tile archive.
final class MemoryArchive: TileArchive {
    var tiles: [TileID: Data]
    var failing: Set<TileID> = []
    struct ReadError: Error {}

    init(_ tiles: [TileID: Data]) { self.tiles = tiles }

    func tileData(_ tile: TileID) throws -> Data? {
        if failing.contains(tile) { throw ReadError() }
        return tiles[tile]
    }
}

final class OriginRouterTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func write(_ data: Data, to path: String, in root: URL? = nil) throws {
        let file = (root ?? directory).appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    func testDirectoryOriginPercentDecodesAndDropsTheQuery() throws {
        let glyphs = Fixtures.glyphs()
        try write(glyphs, to: "fonts/Noto Sans Regular/0-255.pbf")
        let origin = DirectoryOrigin(prefix: "https://fonts.example.com/", directory: directory)
        let request = FetchRequest(url: "https://fonts.example.com/fonts/Noto%20Sans%20Regular/0-255.pbf?key=secret",
                                   kind: .glyphs)
        XCTAssertEqual(try origin.read(request).get(), glyphs)
        XCTAssertEqual(try origin.fileURL(for: request.url).get().path,
                       directory.appendingPathComponent("fonts/Noto Sans Regular/0-255.pbf").path)
    }

    func testDirectoryOriginRefusesPathsLeavingTheDirectory() throws {
        let inner = directory.appendingPathComponent("mirror")
        try write(Data("{}".utf8), to: "secret.json")
        try write(Data("{}".utf8), to: "mirror/ok.json")
        let origin = DirectoryOrigin(prefix: "https://x.example.com/", directory: inner)
        XCTAssertEqual(try origin.read(FetchRequest(url: "https://x.example.com/ok.json", kind: .spriteJSON)).get(),
                       Data("{}".utf8))
        for url in ["https://x.example.com/../secret.json", "https://x.example.com/a/../../secret.json",
                    "https://x.example.com/%2E%2E/secret.json", "https://x.example.com/..%2Fsecret.json"] {
            guard case .failure(.unsupported(let why)) = origin.read(FetchRequest(url: url, kind: .spriteJSON)) else {
                XCTFail("\(url) must be refused")
                continue
            }
            XCTAssertTrue(why.contains("leaves"), why)
        }
    }

    func testDirectoryOriginMissingFileIsNotFound() {
        let origin = DirectoryOrigin(prefix: "https://x.example.com/", directory: directory)
        XCTAssertEqual(origin.read(FetchRequest(url: "https://x.example.com/nope.png", kind: .image)).failureValue, .notFound)
        // A directory is not a file.
        XCTAssertEqual(origin.read(FetchRequest(url: "https://x.example.com/", kind: .image)).failureValue,
                       .unsupported("https://x.example.com/ names no file under https://x.example.com/"))
    }

    func testArchiveOriginServesTilesByGeographicID() {
        let tile = TileID(z: 3, x: 2, y: 1)
        let broken = TileID(z: 3, x: 0, y: 0)
        let archive = MemoryArchive([tile: Fixtures.pythonTileGzip])
        archive.failing = [broken]
        let origin = ArchiveOrigin(prefix: "https://t.example.com/", archive: archive)
        func request(_ id: TileID) -> FetchRequest {
            FetchRequest(url: "https://t.example.com/\(id.z)/\(id.x)/\(id.y).pbf", kind: .tile, tile: id)
        }
        XCTAssertEqual(try origin.read(request(tile)).get(), Fixtures.pythonTileGzip)
        XCTAssertEqual(origin.read(request(TileID(z: 3, x: 2, y: 2))).failureValue, .notFound)
        guard case .failure(.transport) = origin.read(request(broken)) else { return XCTFail("read error expected") }
        guard case .failure(.unsupported) = origin.read(FetchRequest(url: "https://t.example.com/style.json", kind: .style)) else {
            return XCTFail("a style cannot come from an archive")
        }
    }

    func testRouterPicksTheLongestPrefixAndVerifiesLocalBodies() throws {
        let outer = directory.appendingPathComponent("outer")
        let inner = directory.appendingPathComponent("inner")
        try write(Fixtures.tile(layers: ["outer"]), to: "tiles/a.pbf", in: outer)
        try write(Fixtures.tile(layers: ["inner"]), to: "a.pbf", in: inner)
        try write(Fixtures.html, to: "style.json", in: outer)
        let archive = MemoryArchive([TileID(z: 0, x: 0, y: 0): Fixtures.pythonTileGzip])
        let router = OriginRouter(routes: [
            .directory("https://x.example.com/", outer),
            .archive("https://x.example.com/tiles/z/", archive),
            .directory("https://x.example.com/tiles/", inner),
        ], http: nil)
        XCTAssertEqual(router.routes.map(\.prefix),
                       ["https://x.example.com/tiles/z/", "https://x.example.com/tiles/", "https://x.example.com/"])

        let requests = [
            FetchRequest(url: "https://x.example.com/tiles/a.pbf", kind: .tile),
            FetchRequest(url: "https://x.example.com/tiles/z/0/0/0.pbf", kind: .tile, tile: TileID(z: 0, x: 0, y: 0)),
            FetchRequest(url: "https://x.example.com/style.json", kind: .style),
            FetchRequest(url: "https://elsewhere.example.com/style.json", kind: .style),
        ]
        let results = Dictionary(uniqueKeysWithValues: fetch(router, requests).map { ($0.0.url, $0.1) })
        XCTAssertEqual(try results[requests[0].url]?.get().data, Fixtures.tile(layers: ["inner"]))
        XCTAssertEqual(try results[requests[1].url]?.get().data, Fixtures.pythonTile, "archive bodies are gunzipped")
        guard case .failure(.invalidBody(let why))? = results[requests[2].url] else { return XCTFail("HTML must fail") }
        XCTAssertTrue(why.contains("HTML"))
        guard case .failure(.unsupported)? = results[requests[3].url] else { return XCTFail("no network: unsupported") }
    }

    /// Bodies from local origins are verified on worker threads and delivered in request
    /// order, failures included, as one thread would deliver them.
    func testLocalBodiesAreDeliveredInRequestOrder() throws {
        var tiles: [TileID: Data] = [:]
        let ids = (0..<300).map { TileID(z: 9, x: $0 / 20, y: $0 % 20) }
        for (index, id) in ids.enumerated() where index % 11 != 5 {
            tiles[id] = index % 13 == 4 ? Fixtures.html : Fixtures.tile(layers: ["l\(index)"], seed: index)
        }
        try write(Fixtures.style, to: "style.json")
        let router = OriginRouter(routes: [.archive("https://t.example.com/", MemoryArchive(tiles)),
                                           .directory("https://s.example.com/", directory)], http: nil)
        router.localWorkers = 3
        var requests = ids.map { id in
            FetchRequest(url: "https://t.example.com/\(id.z)/\(id.x)/\(id.y).pbf", kind: .tile, tile: id)
        }
        requests.insert(FetchRequest(url: "https://s.example.com/style.json", kind: .style), at: 100)
        let results = fetch(router, requests)
        XCTAssertEqual(results.map(\.0.url), requests.map(\.url))
        for (request, result) in results {
            guard let id = request.tile, let index = ids.firstIndex(of: id) else {
                XCTAssertEqual(try result.get().data, Fixtures.style)
                continue
            }
            switch result {
            case .success(let body): XCTAssertEqual(body.data, Fixtures.tile(layers: ["l\(index)"], seed: index), "tile \(index)")
            case .failure(.notFound): XCTAssertEqual(index % 11, 5, "tile \(index)")
            case .failure(.invalidBody(let why)): XCTAssertTrue(index % 13 == 4 && why.contains("HTML"), "tile \(index): \(why)")
            case .failure(let other): XCTFail("tile \(index): \(other)")
            }
        }
    }

    func testRouterMixesLocalAndHTTPOriginsAndRewritesMirrors() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/mirror/v1/style.json", .ok(Fixtures.style))
        server.setRoute("/direct/tiles.json", .ok(Fixtures.tileJSON))
        try write(Fixtures.png(), to: "sprite.png")
        let http = try HTTPFetcher(configuration: .init(retry: fastRetries()))
        let router = OriginRouter(routes: [
            .http("https://api.example.com/", server.baseURL + "/mirror/"),
            .directory("https://api.example.com/sprites/", directory),
        ], http: http)
        XCTAssertEqual(router.transportURL(for: "https://api.example.com/v1/style.json?access_token=x"),
                       server.baseURL + "/mirror/v1/style.json?access_token=x")
        let requests = [
            FetchRequest(url: "https://api.example.com/v1/style.json", kind: .style),
            FetchRequest(url: "https://api.example.com/sprites/sprite.png", kind: .spriteImage),
            FetchRequest(url: server.baseURL + "/direct/tiles.json", kind: .source),
            FetchRequest(url: "https://api.example.com/sprites/missing.png", kind: .spriteImage),
        ]
        let results = Dictionary(uniqueKeysWithValues: fetch(router, requests).map { ($0.0.url, $0.1) })
        XCTAssertEqual(try results[requests[0].url]?.get().data, Fixtures.style)
        XCTAssertEqual(try results[requests[1].url]?.get().data, Fixtures.png())
        XCTAssertEqual(try results[requests[2].url]?.get().data, Fixtures.tileJSON)
        XCTAssertEqual(results[requests[3].url]?.failureValue, .notFound)
        XCTAssertEqual(Set(server.requests.map(\.path)), ["/mirror/v1/style.json", "/direct/tiles.json"])
    }

    func testARouteMatchesTheRequestURLWhenNoneMatchesTheCanonicalOneAndTheCanonicalMatchWins() throws {
        let rewrite: @Sendable (String) -> String? = { url in
            url.hasPrefix("mapbox://styles/") ? "https://api.mapbox.com/styles/v1/" + url.dropFirst("mapbox://styles/".count) + "?access_token=T"
                : url.hasPrefix("https://keyed.example.com/") ? url + "?key=K" : nil
        }
        let http = try HTTPFetcher(configuration: .init(retry: fastRetries(), rewrite: rewrite))
        let apiMirror = OriginRouter(routes: [.http("https://api.mapbox.com/", "http://127.0.0.1:9/mirror/"),
                                              .http("https://keyed.example.com/", "http://127.0.0.1:9/keyed/")], http: http)
        XCTAssertEqual(apiMirror.transportURL(for: "mapbox://styles/u/s"), "http://127.0.0.1:9/mirror/styles/v1/u/s?access_token=T")
        XCTAssertEqual(apiMirror.transportURL(for: "https://keyed.example.com/a.json"), "http://127.0.0.1:9/keyed/a.json?key=K",
                       "a mirror of a canonical prefix gets the request URL's key too")
        XCTAssertEqual(apiMirror.transportURL(for: "https://other.example.com/a.json"), "https://other.example.com/a.json")
        let both = OriginRouter(routes: [.http("https://api.mapbox.com/", "http://127.0.0.1:9/api/"),
                                         .http("mapbox://", "http://127.0.0.1:9/canonical/")], http: http)
        XCTAssertEqual(both.transportURL(for: "mapbox://styles/u/s"), "http://127.0.0.1:9/canonical/styles/u/s")

        try write(Data(#"{"version": 8, "sources": {}}"#.utf8), to: "styles/v1/u/s")
        let local = OriginRouter(routes: [.directory("https://api.mapbox.com/", directory)], http: http)
        var requests = [FetchRequest(url: "mapbox://styles/u/s", kind: .style)].makeIterator()
        var results: [Result<FetchedBody, FetchFailure>] = []
        local.fetchAll(&requests) { _, result in results.append(result) }
        XCTAssertEqual(try results.first?.get().data, Data(#"{"version": 8, "sources": {}}"#.utf8))
    }

    func testDocumentsAreScrubbedOfSecretsAndOtherBodiesHoldingOneAreRefused() throws {
        let secrets = URLSecrets.from(urls: [], environment: [:], extraValues: ["pk.SECRET"]).secrets
        let style = #"{"version": 8, "sources": {"s": {"type": "vector", "url": "https://t.example/a.json?access_token=pk.SECRET"}}}"#
        try write(Data(style.utf8), to: "style.json")
        try write(Data("glyphs pk.SECRET".utf8), to: "sprite.png")
        let router = OriginRouter(routes: [.directory("https://x.example.com/", directory)], http: nil,
                                  verifier: Verifier(), secrets: secrets)
        let clean = router.scrubbed(FetchedBody(data: Data(style.utf8)), kind: .style)
        XCTAssertEqual(try clean.get().data,
                       Data(#"{"version": 8, "sources": {"s": {"type": "vector", "url": "https://t.example/a.json"}}}"#.utf8))
        guard case .failure(.invalidBody(let why)) = router.scrubbed(FetchedBody(data: Data("..pk.SECRET..".utf8)), kind: .spriteImage)
        else { return XCTFail("a binary body holding a secret must be refused") }
        XCTAssertFalse(why.contains("pk.SECRET"))
        XCTAssertEqual(try router.scrubbed(FetchedBody(data: Data("pk.SECRET".utf8)), kind: .tile).get().data, Data("pk.SECRET".utf8),
                       "tiles are not searched")
    }

    func testRoutesFromJobOrigins() throws {
        let archive = MemoryArchive([:])
        var opened: [URL] = []
        let routes = try OriginRouter.routes(for: [
            Origin(prefix: "https://a/", mirror: .directory(directory)),
            Origin(prefix: "https://b/", mirror: .mbtiles(URL(fileURLWithPath: "/tmp/b.mbtiles"))),
            Origin(prefix: "https://c/", mirror: .http("http://127.0.0.1:1/")),
        ]) { url in
            opened.append(url)
            return archive
        }
        XCTAssertEqual(routes.map(\.prefix), ["https://a/", "https://b/", "https://c/"])
        XCTAssertEqual(opened.map(\.path), ["/tmp/b.mbtiles"])
    }
}
