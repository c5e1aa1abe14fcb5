import ProvisionCodecs
import ProvisionModel
import ProvisionStore
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// HTTP as real hosts speak it: repeated and conflicting cache headers, redirects across hosts,
/// 204 No Content, gzip on the wire.
final class HTTPFetcherProtocolTests: XCTestCase {
    var server: LoopbackHTTPServer!
    var other: LoopbackHTTPServer!

    override func setUpWithError() throws {
        server = try LoopbackHTTPServer()
        other = try LoopbackHTTPServer()
    }

    override func tearDownWithError() throws {
        server.stop()
        other.stop()
    }

    private func makeFetcher(missingTiles: MissingTilePolicy = .fail) throws -> HTTPFetcher {
        var settings = DownloadSettings(concurrency: 4, retries: 3, timeoutSeconds: 10)
        settings.missingTiles = missingTiles
        return try HTTPFetcher(configuration: HTTPFetcher.Configuration(settings: settings, retry: fastRetries(),
                                                                        now: { 1_000 }, buildTime: 5_000,
                                                                        trust: .system))
    }

    private func result(_ fetcher: HTTPFetcher, _ path: String, kind: ResourceKind,
                        file: StaticString = #filePath, line: UInt = #line) -> Result<FetchedBody, FetchFailure>? {
        let results = fetch(fetcher, [FetchRequest(url: server.baseURL + path, kind: kind)])
        XCTAssertEqual(results.count, 1, file: file, line: line)
        XCTAssertEqual(results.first?.0.url, server.baseURL + path, "results carry the request as made", file: file, line: line)
        return results.first?.1
    }

    func testRepeatedCacheControlLinesAreOneListAndTheMostRestrictiveWins() throws {
        let date = LoopbackHTTPServer.Header("Date", "Sun, 06 Nov 1994 08:49:37 GMT")
        server.setRoute("/two-lines.json", .ok(Fixtures.style, contentType: "application/json", headers: [
            date, .init("Cache-Control", "public, max-age=600"), .init("Cache-Control", "max-age=60"),
        ]))
        server.setRoute("/no-cache.json", .ok(Fixtures.style, contentType: "application/json", headers: [
            date, .init("Cache-Control", "max-age=3600, must-revalidate"), .init("Cache-Control", "no-cache"),
            .init("Expires", "Thu, 01 Dec 1994 16:00:00 GMT"),
        ]))
        server.setRoute("/expired.pbf", .ok(Fixtures.pythonTile, headers: [date, .init("Expires", "0")]))
        let fetcher = try makeFetcher()

        let twoLines = try XCTUnwrap(result(fetcher, "/two-lines.json", kind: .style)).get()
        XCTAssertEqual(twoLines.expires, 5_000 + 60, "the smallest max-age, from the build time, not the response's Date")
        XCTAssertEqual(twoLines.revalidation, [])

        let noCache = try XCTUnwrap(result(fetcher, "/no-cache.json", kind: .style)).get()
        XCTAssertEqual(noCache.expires, 5_000, "no-cache on a second line beats max-age and Expires")
        XCTAssertEqual(noCache.revalidation, [.noCache, .mustRevalidate],
                       "MapLibre keeps the last line, which has no must-revalidate")

        let expired = try XCTUnwrap(result(fetcher, "/expired.pbf", kind: .tile)).get()
        XCTAssertEqual(expired.expires, 5_000, "an invalid Expires is already expired")
    }

    func testMustRevalidateOnTheLastLineIsWhatMapLibreWouldStore() throws {
        server.setRoute("/strict.json", .ok(Fixtures.tileJSON, contentType: "application/json", headers: [
            .init("Cache-Control", "max-age=300"), .init("Cache-Control", "must-revalidate"),
        ]))
        let body = try XCTUnwrap(result(try makeFetcher(), "/strict.json", kind: .source)).get()
        XCTAssertEqual(body.revalidation, [.mustRevalidate, .mapLibreMustRevalidate])
        XCTAssertEqual(body.expires, 5_300, "max-age from the build time")
    }

    func testEveryRedirectStatusIsFollowedAcrossHostsAndTheRequestURLIsKept() throws {
        other.setRoute("/elsewhere/style.json", .ok(Fixtures.style, contentType: "application/json"))
        for code in [301, 302, 307, 308] {
            server.setRoute("/moved-\(code).json", .status(code, headers: [.init("Location", other.baseURL + "/elsewhere/style.json")]))
        }
        let fetcher = try makeFetcher()
        let requests = [301, 302, 307, 308].map { FetchRequest(url: server.baseURL + "/moved-\($0).json", kind: .style) }
        let results = fetch(fetcher, requests)
        XCTAssertEqual(Set(results.map(\.0.url)), Set(requests.map(\.url)), "the canonical URL, not the final one")
        for (request, outcome) in results {
            XCTAssertEqual(try outcome.get().data, Fixtures.style, request.url)
        }
        XCTAssertEqual(other.requestCount("/elsewhere/style.json"), 4)
    }

    func testARedirectChainAtTheBoundIsFollowedAndOneLongerFails() throws {
        // /hop/0 → /hop/1 → … → /hop/6, which answers.
        for hop in 0..<6 {
            let next = hop % 2 == 0 ? other : server
            let here = hop % 2 == 0 ? server : other
            here?.setRoute("/hop/\(hop)", .status(302, headers: [.init("Location", (next?.baseURL ?? "") + "/hop/\(hop + 1)")]))
        }
        server.setRoute("/hop/6", .ok(Fixtures.pythonTile))
        let fetcher = try makeFetcher()
        let atBound = fetch(fetcher, [FetchRequest(url: other.baseURL + "/hop/1", kind: .tile)])
        XCTAssertEqual(try atBound.first?.1.get().data, Fixtures.pythonTile, "5 redirects are allowed")

        let start = server.baseURL + "/hop/0"
        let tooLong = fetch(fetcher, [FetchRequest(url: start, kind: .tile)])
        guard case .failure(.redirects(let why))? = tooLong.first?.1 else {
            return XCTFail("expected a redirect failure, got \(String(describing: tooLong.first?.1))")
        }
        XCTAssertTrue(why.contains("more than 5 redirects from \(start)"), why)
        XCTAssertEqual(server.requestCount("/hop/0"), 1, "not retried")
        XCTAssertEqual(server.requestCount("/hop/6"), 1, "only the chain at the bound reached the end")
    }

    func testARedirectLoopFailsOnceNamingWhereItStarted() throws {
        server.setRoute("/loop/a", .status(301, headers: [.init("Location", "/loop/b")]))
        server.setRoute("/loop/b", .status(308, headers: [.init("Location", "/loop/a")]))
        let fetcher = try makeFetcher()
        guard case .failure(let failure)? = result(fetcher, "/loop/a", kind: .glyphs),
              case .redirects(let why) = failure else { return XCTFail("expected a redirect failure") }
        XCTAssertFalse(failure.isTransient)
        XCTAssertTrue(why.contains(server.baseURL + "/loop/a"), why)
        XCTAssertEqual(server.requests.count, 6, "the first request and 5 redirects, once")
        XCTAssertEqual(DownloadStats.reason(of: failure), "too-many-redirects")
    }

    func test204ForATileIsAnEmptyTileWhateverMissingTilesSays() throws {
        server.setRoute("/empty.pbf", .respond(status: 204, headers: [.init("Cache-Control", "max-age=10")], body: Data()))
        server.setRoute("/absent.pbf", .status(404))
        let fetcher = try makeFetcher(missingTiles: .fail)
        let empty = try XCTUnwrap(result(fetcher, "/empty.pbf", kind: .tile)).get()
        XCTAssertEqual(empty.data, Data())
        XCTAssertFalse(empty.isMissing, "an empty tile, not a missing one")
        XCTAssertEqual(empty.expires, 5_010)
        guard case .failure(.notFound)? = result(fetcher, "/absent.pbf", kind: .tile) else {
            return XCTFail("a 404 still follows missingTiles: fail")
        }
    }

    func test204ForAnyOtherKindIsAFailureNotRetried() throws {
        let kinds: [ResourceKind] = [.style, .source, .spriteJSON, .spriteImage, .glyphs]
        for kind in kinds { server.setRoute("/none-\(kind.name).bin", .respond(status: 204, headers: [], body: Data())) }
        let fetcher = try makeFetcher(missingTiles: .skip)
        for kind in kinds {
            guard case .failure(.invalidBody(let why))? = result(fetcher, "/none-\(kind.name).bin", kind: kind) else {
                XCTFail("\(kind.name): a 204 must fail")
                continue
            }
            XCTAssertTrue(why.contains("204"), why)
            XCTAssertEqual(server.requestCount("/none-\(kind.name).bin"), 1)
        }
    }

    func testAGzipEncodedTileKeepsItsDeflatedBytesRewrappedAsZlib() throws {
        let tile = Fixtures.tile(layers: ["water", "roads"], seed: 7)
        let gzip = try gzipped(tile)
        server.setRoute("/encoded.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "gzip")], body: gzip))
        let body = try XCTUnwrap(result(try makeFetcher(), "/encoded.pbf", kind: .tile)).get()
        XCTAssertEqual(body.data, tile)
        let zlib = try XCTUnwrap(body.zlibData, "the gzip member is rewrapped, not inflated and deflated again")
        XCTAssertEqual(try Zlib.inflate(zlib), tile)
        // The same deflate stream: gzip's 10-byte header and 8-byte trailer against zlib's 2 and 4.
        XCTAssertEqual(zlib.dropFirst(2).dropLast(4), gzip.dropFirst(10).dropLast(8))
    }

    /// `data` gzipped by the system's gzip tool (a fixture this test does not encode itself).
    private func gzipped(_ data: Data) throws -> Data {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("gz-\(UUID().uuidString)")
        try data.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-n", "-c", input.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return output
    }
}
