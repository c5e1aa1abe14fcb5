import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// An iterator over an array that counts how many elements were pulled.
final class CountingRequests: IteratorProtocol {
    private var remaining: ArraySlice<FetchRequest>
    private(set) var pulled = 0

    init(_ requests: [FetchRequest]) { remaining = requests[...] }

    func next() -> FetchRequest? {
        guard let first = remaining.popFirst() else { return nil }
        pulled += 1
        return first
    }
}

/// Runs `fetchAll` and returns the results in completion order.
func fetch(_ fetcher: Fetcher, _ requests: [FetchRequest]) -> [(FetchRequest, Result<FetchedBody, FetchFailure>)] {
    var iterator = requests.makeIterator()
    var results: [(FetchRequest, Result<FetchedBody, FetchFailure>)] = []
    fetcher.fetchAll(&iterator) { results.append(($0, $1)) }
    return results
}

func fastRetries(_ retries: Int = 3, delay: TimeInterval = 0.01) -> RetryPolicy {
    RetryPolicy(retries: retries, baseDelay: delay, maxDelay: 1, random: { 0.999 })
}

final class HTTPFetcherTests: XCTestCase {
    var server: LoopbackHTTPServer!
    var directory: URL!

    override func setUpWithError() throws {
        server = try LoopbackHTTPServer()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("exec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func makeFetcher(concurrency: Int = 4, perHost: Int? = nil, retry: RetryPolicy = fastRetries(),
                             configure: (inout HTTPFetcher.Configuration) -> Void = { _ in }) throws -> HTTPFetcher {
        var configuration = HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: concurrency, retries: 3, timeoutSeconds: 10,
                                       perHost: perHost ?? concurrency), retry: retry)
        configure(&configuration)
        return try HTTPFetcher(configuration: configuration)
    }

    private func tileRequest(_ path: String) -> FetchRequest {
        FetchRequest(url: server.baseURL + path, kind: .tile)
    }

    func testThousandFilesWithConcurrency16ArriveByteForByte() throws {
        var expected: [String: Data] = [:]
        var requests: [FetchRequest] = []
        for index in 0..<1000 {
            let (z, x, y) = (10, index / 40, index % 40)
            let folder = directory.appendingPathComponent("\(z)/\(x)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let data = Fixtures.tile(layers: ["layer\(index)", "water"], seed: index)
            try data.write(to: folder.appendingPathComponent("\(y).pbf"))
            let url = "\(server.baseURL)/tiles/\(z)/\(x)/\(y).pbf"
            expected[url] = data
            requests.append(FetchRequest(url: url, kind: .tile))
        }
        server.serveDirectory(directory, at: "/tiles/")
        let fetcher = try makeFetcher(concurrency: 16)

        let iterator = CountingRequests(requests)
        var pulledAtFirstResult: Int?
        var received: [String: Data] = [:]
        var failures: [FetchFailure] = []
        var lazy = iterator
        fetcher.fetchAll(&lazy) { request, result in
            if pulledAtFirstResult == nil { pulledAtFirstResult = iterator.pulled }
            switch result {
            case .success(let body): received[request.url] = body.data
            case .failure(let failure): failures.append(failure)
            }
        }
        XCTAssertEqual(failures, [])
        XCTAssertEqual(received.count, 1000)
        XCTAssertTrue(received == expected, "some bodies differ from the files")
        XCTAssertEqual(server.requests.count, 1000)
        XCTAssertLessThanOrEqual(pulledAtFirstResult ?? .max, 32, "requests must be pulled lazily")
        XCTAssertLessThanOrEqual(server.peakConcurrentRequests, 16)
    }

    func testInFlightTransfersNeverExceedConcurrency() throws {
        for index in 0..<24 {
            server.setRoute("/slow/\(index)", .delay(0.05, then: .ok(Fixtures.tile(layers: ["a"]))))
        }
        let fetcher = try makeFetcher(concurrency: 4)
        let results = fetch(fetcher, (0..<24).map { tileRequest("/slow/\($0)") })
        XCTAssertEqual(results.filter { (try? $0.1.get()) != nil }.count, 24)
        XCTAssertLessThanOrEqual(server.peakConcurrentRequests, 4)
        XCTAssertGreaterThanOrEqual(server.peakConcurrentRequests, 2, "transfers should overlap")
    }

    func testNotFoundIsNotRetried() throws {
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tileRequest("/missing.pbf")])
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(results.first.map { $0.1.failureValue }, .notFound)
        XCTAssertEqual(server.requestCount("/missing.pbf"), 1)
        XCTAssertEqual(fetcher.retryCount, 0)
    }

    func testServiceUnavailableThenOKIsRetriedAndSucceeds() throws {
        let tile = Fixtures.tile(layers: ["roads"])
        server.setRoute("/flaky.pbf", .sequence([.status(503, body: "busy"), .ok(tile)]))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tileRequest("/flaky.pbf")])
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(try results.first?.1.get().data, tile)
        XCTAssertEqual(server.requestCount("/flaky.pbf"), 2)
        XCTAssertEqual(fetcher.retryCount, 1)
    }

    func testPersistentServerErrorGivesUpAfterTheConfiguredAttempts() throws {
        server.setRoute("/down.pbf", .status(500))
        let fetcher = try makeFetcher(retry: fastRetries(2))
        let results = fetch(fetcher, [tileRequest("/down.pbf")])
        XCTAssertEqual(results.first.map { $0.1.failureValue }, .status(500))
        XCTAssertEqual(server.requestCount("/down.pbf"), 3)
    }

    func testRetryDelayDoesNotHoldUpOtherTransfers() throws {
        server.setRoute("/flaky.pbf", .sequence([.status(503), .ok(Fixtures.tile(layers: ["a"]))]))
        for index in 0..<5 { server.setRoute("/fast/\(index)", .delay(0.02, then: .ok(Fixtures.tile(layers: ["b"])))) }
        let fetcher = try makeFetcher(concurrency: 1, retry: fastRetries(3, delay: 0.5))
        let requests = [tileRequest("/flaky.pbf")] + (0..<5).map { tileRequest("/fast/\($0)") }
        let results = fetch(fetcher, requests)
        XCTAssertEqual(results.map(\.0.url).last, tileRequest("/flaky.pbf").url,
                       "the fast requests should finish while the flaky one waits out its delay")
        XCTAssertTrue(results.allSatisfy { (try? $0.1.get()) != nil })
    }

    func testHTMLServedWith200ForATileIsRefusedAndNotRetried() throws {
        server.setRoute("/portal.pbf", .html())
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tileRequest("/portal.pbf")])
        guard case .failure(.invalidBody(let why))? = results.first?.1 else {
            return XCTFail("expected invalidBody, got \(String(describing: results.first?.1))")
        }
        XCTAssertTrue(why.contains("HTML"), why)
        XCTAssertEqual(server.requestCount("/portal.pbf"), 1)
    }

    func testTruncatedBodyWithLyingContentLengthFails() throws {
        server.setRoute("/short.pbf", .truncated(body: Fixtures.pythonTile, claimedLength: Fixtures.pythonTile.count + 50))
        server.setRoute("/cut.pbf", .closeMidBody(body: Fixtures.pythonTile))
        let fetcher = try makeFetcher(retry: fastRetries(1))
        let results = fetch(fetcher, [tileRequest("/short.pbf"), tileRequest("/cut.pbf")])
        XCTAssertEqual(results.count, 2)
        for (request, result) in results {
            guard case .failure(.transport) = result else {
                XCTFail("\(request.url): expected a transport failure, got \(result)")
                continue
            }
        }
        XCTAssertEqual(server.requestCount("/short.pbf"), 2, "a cut transfer is transient: retried once")
    }

    func testGzipTileIsGunzippedWhetherOrNotTheServerSaysSo() throws {
        server.setRoute("/raw-gzip.pbf", .ok(Fixtures.pythonTileGzip))
        server.setRoute("/encoded.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "gzip")],
                                                 body: Fixtures.pythonTileGzip))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tileRequest("/raw-gzip.pbf"), tileRequest("/encoded.pbf")])
        XCTAssertEqual(results.count, 2)
        for (_, result) in results { XCTAssertEqual(try result.get().data, Fixtures.pythonTile) }
        XCTAssertNotNil(server.requests.first?.headers["accept-encoding"])
    }

    func testCacheHeadersAreCaptured() throws {
        server.setRoute("/cached.json", .respond(status: 200, headers: [
            .init("ETag", "\"abc123\""), .init("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
            .init("Cache-Control", "public, max-age=3600"),
        ], body: Fixtures.style))
        server.setRoute("/expires.json", .respond(status: 200, headers: [
            .init("Expires", "Thu, 22 Oct 2015 07:28:00 GMT"),
        ], body: Fixtures.style))
        let fetcher = try makeFetcher { $0.now = { 1_000_000 } }
        let results = fetch(fetcher, [FetchRequest(url: server.baseURL + "/cached.json", kind: .style),
                                      FetchRequest(url: server.baseURL + "/expires.json", kind: .style)])
        let bodies = Dictionary(uniqueKeysWithValues: results.compactMap { request, result in
            (try? result.get()).map { (request.url.components(separatedBy: "/").last ?? "", $0) }
        })
        XCTAssertEqual(bodies["cached.json"]?.etag, "\"abc123\"")
        XCTAssertEqual(bodies["cached.json"]?.modified, 1_445_412_480)
        XCTAssertEqual(bodies["cached.json"]?.expires, 1_003_600)
        XCTAssertEqual(bodies["expires.json"]?.expires, 1_445_498_880)
        XCTAssertNil(bodies["expires.json"]?.etag)
    }

    func testOversizedResponseIsRefused() throws {
        server.setRoute("/big.png", .ok(Fixtures.png() + Data(count: 10_000)))
        let fetcher = try makeFetcher { $0.maxResponseBytes = 1000 }
        let results = fetch(fetcher, [FetchRequest(url: server.baseURL + "/big.png", kind: .image)])
        guard case .failure(.invalidBody(let why))? = results.first?.1 else { return XCTFail("expected invalidBody") }
        XCTAssertTrue(why.contains("1,000"), why)
    }

    func testStalledResponseTimesOut() throws {
        server.setRoute("/stall.pbf", .stall(body: Fixtures.pythonTile))
        let fetcher = try makeFetcher(retry: .none) { $0.stallTimeout = 1 }
        let results = fetch(fetcher, [tileRequest("/stall.pbf")])
        guard case .failure(.transport)? = results.first?.1 else { return XCTFail("expected a transport failure") }
    }

    func testRewriteFetchesFromTheMirrorAndReportsTheCanonicalRequest() throws {
        server.setRoute("/mirror/tiles/1/0/0.pbf", .ok(Fixtures.pythonTile))
        let base = server.baseURL
        let fetcher = try makeFetcher {
            $0.rewrite = { url in
                let prefix = "https://tiles.example.com/"
                return url.hasPrefix(prefix) ? base + "/mirror/" + url.dropFirst(prefix.count) : nil
            }
        }
        let canonical = FetchRequest(url: "https://tiles.example.com/tiles/1/0/0.pbf", kind: .tile)
        let results = fetch(fetcher, [canonical])
        XCTAssertEqual(results.first?.0, canonical)
        XCTAssertEqual(try results.first?.1.get().data, Fixtures.pythonTile)
        XCTAssertEqual(server.requests.first?.headers["user-agent"],
                       "provision/0.1 (+https://github.com/provision-maps/provision)")
    }

    func testRedirectsAreFollowed() throws {
        server.setRoute("/old.json", .status(301, headers: [.init("Location", "/new.json")]))
        server.setRoute("/new.json", .ok(Fixtures.tileJSON))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [FetchRequest(url: server.baseURL + "/old.json", kind: .source)])
        XCTAssertEqual(try results.first?.1.get().data, Fixtures.tileJSON)
    }

    func testConnectionRefusedIsATransportFailure() throws {
        let port = server.port
        server.stop()
        let fetcher = try makeFetcher(retry: .none)
        let results = fetch(fetcher, [FetchRequest(url: "http://127.0.0.1:\(port)/x.pbf", kind: .tile)])
        guard case .failure(.transport)? = results.first?.1 else { return XCTFail("expected a transport failure") }
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
