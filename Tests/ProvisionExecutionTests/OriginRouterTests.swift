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

    func testRoutesFromJobOrigins() throws {
        let archive = MemoryArchive([:])
        var opened: [URL] = []
        let routes = OriginRouter.routes(for: [
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
