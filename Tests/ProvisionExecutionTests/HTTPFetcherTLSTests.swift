import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// HTTPS against a real server (nginx on 127.0.0.1, HTTP/2 on, a certificate from a throwaway
/// CA): which CA store is used, what an untrusted certificate says, and HTTP/2 multiplexing.
final class HTTPFetcherTLSTests: XCTestCase {
    var nginx: NginxTLSServer!
    var tiles: URL!
    let tileCount = 300

    override func setUpWithError() throws {
        tiles = FileManager.default.temporaryDirectory.appendingPathComponent("tls-tiles-\(UUID().uuidString)")
        for index in 0..<tileCount {
            let folder = tiles.appendingPathComponent("12/\(index / 20)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Fixtures.tile(layers: ["water"], seed: index).write(to: folder.appendingPathComponent("\(index % 20).pbf"))
        }
        nginx = try NginxTLSServer(serving: [("/tiles/", tiles)])
    }

    override func tearDownWithError() throws {
        nginx?.stop()
        try? FileManager.default.removeItem(at: tiles)
    }

    private func makeFetcher(_ trust: TLSTrust, concurrency: Int = 4, transferLoops: Int? = nil) throws -> HTTPFetcher {
        var configuration = HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: concurrency, retries: 3, timeoutSeconds: 10),
            retry: fastRetries(), trust: trust)
        if let transferLoops { configuration.transferLoops = transferLoops }
        return try HTTPFetcher(configuration: configuration)
    }

    private func request(_ index: Int) -> FetchRequest {
        FetchRequest(url: "\(nginx.baseURL)/tiles/12/\(index / 20)/\(index % 20).pbf", kind: .tile)
    }

    func testAnUntrustedCertificateIsOneClearFailureNamingTheHostAndCURL_CA_BUNDLE() throws {
        let fetcher = try makeFetcher(.system)
        let results = fetch(fetcher, [request(0)])
        guard case .failure(let failure)? = results.first?.1, case .tls(let why) = failure else {
            return XCTFail("expected a TLS failure, got \(String(describing: results.first?.1))")
        }
        XCTAssertTrue(why.contains("127.0.0.1:\(nginx.port)"), why)
        XCTAssertTrue(why.contains("set CURL_CA_BUNDLE"), why)
        XCTAssertFalse(failure.isTransient)
        XCTAssertEqual(fetcher.retryCount, 0, "not retried")
        XCTAssertEqual(nginx.requests, [], "no request got past the handshake")
    }

    func testTheCAFromEachEnvironmentVariableIsTrusted() throws {
        let environments: [[String: String]] = [
            ["CURL_CA_BUNDLE": nginx.caFile.path],
            ["SSL_CERT_FILE": nginx.caFile.path],
            ["SSL_CERT_DIR": nginx.caDirectory.path],
            ["CURL_CA_BUNDLE": nginx.caFile.path, "SSL_CERT_DIR": "/nonexistent", "SSL_CERT_FILE": "/nonexistent/ca.pem"],
            ["SSL_CERT_DIR": nginx.caDirectory.path, "SSL_CERT_FILE": "/nonexistent/ca.pem"],
        ]
        for (index, environment) in environments.enumerated() {
            let results = fetch(try makeFetcher(TLSTrust(environment: environment)), [request(index)])
            XCTAssertEqual(try results.first?.1.get().data, Fixtures.tile(layers: ["water"], seed: index), "\(environment)")
        }
        XCTAssertEqual(TLSTrust(environment: ["CURL_CA_BUNDLE": "", "SSL_CERT_DIR": ""]), .system, "empty counts as unset")
        XCTAssertEqual(TLSTrust(environment: ["SSL_CERT_DIR": "/d", "SSL_CERT_FILE": "/f"]),
                       TLSTrust(caFile: nil, caDirectory: "/d"), "as curl: the directory, and then the file is ignored")
    }

    func testAnUnreadableCAFileIsATLSFailureNamingTheVariable() throws {
        let trust = TLSTrust(environment: ["SSL_CERT_FILE": "/nonexistent/corporate-ca.pem"])
        let results = fetch(try makeFetcher(trust), [request(0)])
        guard case .failure(.tls(let why))? = results.first?.1 else {
            return XCTFail("expected a TLS failure, got \(String(describing: results.first?.1))")
        }
        XCTAssertTrue(why.contains("/nonexistent/corporate-ca.pem (SSL_CERT_FILE)"), why)
    }

    /// Fetches every tile with `concurrency` in flight, checks that each arrived and was served
    /// over `proto`, and returns how many connections nginx saw.
    private func connectionsFetchingEveryTile(concurrency: Int, over proto: String) throws -> Int {
        let fetcher = try makeFetcher(TLSTrust(caFile: nginx.caFile.path, caDirectory: nil), concurrency: concurrency)
        let results = fetch(fetcher, (0..<tileCount).map(request))
        XCTAssertEqual(results.filter { (try? $0.1.get()) != nil }.count, tileCount)
        let logged = nginx.requests
        XCTAssertEqual(logged.count, tileCount)
        XCTAssertEqual(Set(logged.map(\.proto)), [proto])
        return Set(logged.map(\.connection)).count
    }

    func testHTTP2IsNegotiatedAndOneConnectionCarriesEveryStream() throws {
        let connections = try connectionsFetchingEveryTile(concurrency: 16, over: "HTTP/2.0")
        // RFC 9113 §9.1: one connection per host and port; the 16 requests in flight are its streams.
        XCTAssertEqual(connections, 1, "\(tileCount) requests, 16 in flight, multiplexed on \(connections) connections")
    }

    func testEveryBodyIsCheckedAndReportedOnceWhileStreamsKeepArriving() throws {
        // Valid tiles, HTML pages and damaged tiles interleaved on one multiplexed connection: each
        // answer is checked beside the transfers and comes back once, with its own request.
        let pages = FileManager.default.temporaryDirectory.appendingPathComponent("tls-pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pages) }
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        try Data("<html><body>maintenance</body></html>".utf8).write(to: pages.appendingPathComponent("page.pbf"))
        try VectorTileEncoder.realistic().prefix(5_000).write(to: pages.appendingPathComponent("cut.pbf"))
        nginx.stop()
        nginx = try NginxTLSServer(serving: [("/tiles/", tiles), ("/bad/", pages)])
        var requests: [FetchRequest] = []
        var tilesByURL: [String: Data] = [:]
        for index in 0..<tileCount {
            switch index % 10 {
            case 3: requests.append(FetchRequest(url: "\(nginx.baseURL)/bad/page.pbf?\(index)", kind: .tile))
            case 7: requests.append(FetchRequest(url: "\(nginx.baseURL)/bad/cut.pbf?\(index)", kind: .tile))
            default:
                requests.append(request(index))
                tilesByURL[request(index).url] = Fixtures.tile(layers: ["water"], seed: index)
            }
        }
        let fetcher = try makeFetcher(TLSTrust(caFile: nginx.caFile.path, caDirectory: nil), concurrency: 16)
        let results = fetch(fetcher, requests)
        XCTAssertEqual(results.count, tileCount)
        XCTAssertEqual(Set(results.map(\.0.url)), Set(requests.map(\.url)), "every request answered once")
        for (request, result) in results {
            if request.url.contains("/bad/page.pbf") {
                guard case .failure(.invalidBody(let why)) = result else { return XCTFail("\(request.url): \(result)") }
                XCTAssertTrue(why.contains("HTML"), why)
            } else if request.url.contains("/bad/cut.pbf") {
                guard case .failure(.invalidBody(let why)) = result else { return XCTFail("\(request.url): \(result)") }
                XCTAssertTrue(why.contains("vector tile"), why)
            } else {
                XCTAssertEqual(try result.get().data, tilesByURL[request.url], request.url)
            }
        }
        XCTAssertEqual(fetcher.retryCount, 0, "a body that fails its check is not fetched again")
        XCTAssertEqual(Set(nginx.requests.map(\.connection)).count, 1)
    }

    func testAnHTTP1HostOverTLSGetsParallelConnections() throws {
        nginx.stop()
        nginx = try NginxTLSServer(serving: [("/tiles/", tiles)], http2: false)
        let connections = try connectionsFetchingEveryTile(concurrency: 8, over: "HTTP/1.1")
        // Without multiplexing each request in flight needs a connection of its own: more than one
        // (waiting to share the first would serialise the host), never more than perHost.
        XCTAssertTrue((2...8).contains(connections), "\(tileCount) requests, 8 in flight, on \(connections) connections")
    }

    /// Fetches every tile through three transfer loops; returns how many connections nginx saw
    /// and how many transfers each loop carried.
    private func fetchThroughThreeLoops(concurrency: Int) throws -> (connections: Int, carried: [Int]) {
        let fetcher = try makeFetcher(TLSTrust(caFile: nginx.caFile.path, caDirectory: nil), concurrency: concurrency,
                                      transferLoops: 3)
        let results = fetch(fetcher, (0..<tileCount).map(request))
        XCTAssertEqual(results.filter { (try? $0.1.get()) != nil }.count, tileCount)
        XCTAssertEqual(nginx.requests.count, tileCount)
        return (Set(nginx.requests.map(\.connection)).count, fetcher.loops.map(\.carried))
    }

    func testAnHTTP2HostStaysOnOneTransferLoopAndOneConnection() throws {
        let (connections, carried) = try fetchThroughThreeLoops(concurrency: 16)
        XCTAssertEqual(connections, 1, "every stream on one connection, whatever the number of loops")
        XCTAssertEqual(carried.sorted(), [0, 0, tileCount], "the host's transfers stay on the loop of its connection")
    }

    func testAnHTTP1HostOverTLSIsSpreadOverTheTransferLoops() throws {
        nginx.stop()
        nginx = try NginxTLSServer(serving: [("/tiles/", tiles)], http2: false)
        let (connections, carried) = try fetchThroughThreeLoops(concurrency: 8)
        XCTAssertTrue((3...8).contains(connections),
                      "\(connections) connections: at least one per loop, at most perHost")
        XCTAssertEqual(carried.reduce(0, +), tileCount)
        XCTAssertEqual(carried.filter { $0 > 0 }.count, 3, "each loop decrypts its share: \(carried)")
    }
}
