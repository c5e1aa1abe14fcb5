import Foundation
import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// The fetcher against a hostile server: Retry-After, rate limits, per-host caps, refusals,
/// missing tiles, lying headers and random faults, all through the loopback server.
///
/// The fetcher waits (retry delays, the rate limit) on a manual clock, which the server stamps
/// requests with: a wait moves it at once, so waits are exact and take no time.
final class HTTPFetcherResilienceTests: XCTestCase {
    var server: LoopbackHTTPServer!
    var clock: ManualClock!

    override func setUpWithError() throws {
        clock = ManualClock()
        server = try LoopbackHTTPServer(clock: clock)
    }

    override func tearDownWithError() throws {
        server.stop()
    }

    private func makeFetcher(_ settings: DownloadSettings = DownloadSettings(concurrency: 4, retries: 3, timeoutSeconds: 10),
                             retry: RetryPolicy = fastRetries(),
                             configure: (inout HTTPFetcher.Configuration) -> Void = { _ in }) throws -> HTTPFetcher {
        var configuration = HTTPFetcher.Configuration(settings: settings, retry: retry, clock: clock)
        configure(&configuration)
        return try HTTPFetcher(configuration: configuration)
    }

    private func tile(_ path: String, on server: LoopbackHTTPServer? = nil) -> FetchRequest {
        FetchRequest(url: (server ?? self.server).baseURL + path, kind: .tile)
    }

    /// Seconds between the first and the last arrival of requests for `path`.
    private func arrivalGaps(_ path: String) -> [TimeInterval] {
        let times = server.requests.filter { $0.path == path }.map(\.receivedAt)
        return zip(times.dropFirst(), times).map { $0 - $1 }
    }

    // MARK: - Retry-After

    func testRetryAfterSecondsOn429IsWaitedOut() throws {
        server.setRoute("/busy.pbf", .sequence([.status(429, headers: [.init("Retry-After", "1")]), .ok(Fixtures.pythonTile)]))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tile("/busy.pbf")])
        XCTAssertEqual(try results.first?.1.get().data, Fixtures.pythonTile)
        let gaps = arrivalGaps("/busy.pbf")
        XCTAssertEqual(gaps.count, 1)
        XCTAssertEqual(gaps.first ?? 0, 1, accuracy: 1e-6, "the backoff alone would retry after 10 ms")
    }

    func testRetryAfterHTTPDateOn503IsWaitedOut() throws {
        // The fetcher's clock says it is 07:28:00; the server asks to come back at 07:28:01.
        server.setRoute("/maintenance.pbf", .sequence([
            .status(503, headers: [.init("Retry-After", "Wed, 21 Oct 2015 07:28:01 GMT")]), .ok(Fixtures.pythonTile),
        ]))
        let fetcher = try makeFetcher { $0.now = { 1_445_412_480 } }
        let results = fetch(fetcher, [tile("/maintenance.pbf")])
        XCTAssertEqual(try results.first?.1.get().data, Fixtures.pythonTile)
        XCTAssertEqual(arrivalGaps("/maintenance.pbf").first ?? 0, 1, accuracy: 1e-6)
    }

    func testRetryAfterIsCappedAndIgnoredOnOtherStatuses() throws {
        server.setRoute("/forever.pbf", .sequence([.status(503, headers: [.init("Retry-After", "3600")]), .ok(Fixtures.pythonTile)]))
        server.setRoute("/error.pbf", .sequence([.status(500, headers: [.init("Retry-After", "3600")]), .ok(Fixtures.pythonTile)]))
        let retry = RetryPolicy(retries: 2, baseDelay: 0.01, maxDelay: 1, maxRetryAfter: 0.3, random: { 0.999 })
        let fetcher = try makeFetcher(retry: retry)
        let started = clock.now
        let results = fetch(fetcher, [tile("/forever.pbf"), tile("/error.pbf")])
        XCTAssertTrue(results.allSatisfy { (try? $0.1.get()) != nil })
        XCTAssertEqual(Double(clock.now - started) / 1e9, 0.3, accuracy: 1e-6, "the run waited the capped Retry-After")
        XCTAssertEqual(arrivalGaps("/forever.pbf").first ?? 0, 0.3, accuracy: 1e-6, "capped, but still honoured")
        XCTAssertEqual(arrivalGaps("/error.pbf").first ?? 9, 0.00999, accuracy: 1e-6,
                       "Retry-After only counts on 429 and 503: the backoff")
    }

    // MARK: - Rate and per-host limits

    func testRequestsPerSecondSpacesEveryStartRetriesIncluded() throws {
        for index in 0..<8 { server.setRoute("/t/\(index).pbf", .ok(Fixtures.tile(layers: ["a"], seed: index))) }
        server.setRoute("/flaky.pbf", .sequence([.status(503), .status(503), .ok(Fixtures.pythonTile)]))
        let settings = DownloadSettings(concurrency: 8, retries: 3, timeoutSeconds: 10, requestsPerSecond: 10)
        let fetcher = try makeFetcher(settings, retry: RetryPolicy(retries: 3, baseDelay: 0, random: { 0 }))
        let results = fetch(fetcher, [tile("/flaky.pbf")] + (0..<8).map { tile("/t/\($0).pbf") })
        XCTAssertTrue(results.allSatisfy { (try? $0.1.get()) != nil })
        let times = server.requests.map(\.receivedAt).sorted()
        XCTAssertEqual(times.count, 11)
        // 11 starts at 10/s with a bucket of one: 1 s from the first to the last, 100 ms apart.
        XCTAssertEqual((times.last ?? 0) - (times.first ?? 0), 1, accuracy: 1e-6)
        for (later, earlier) in zip(times.dropFirst(), times) {
            XCTAssertEqual(later - earlier, 0.1, accuracy: 1e-6, "starts are 100 ms apart")
        }
        for gap in arrivalGaps("/flaky.pbf") { XCTAssertGreaterThanOrEqual(gap, 0.1 - 1e-6, "retries take tokens too") }
    }

    func testASlowHostDoesNotStallAnother() throws {
        let fast = try LoopbackHTTPServer()
        defer { fast.stop() }
        for index in 0..<6 { server.setRoute("/slow/\(index).pbf", .delay(1.5, then: .ok(Fixtures.pythonTile))) }
        for index in 0..<12 { fast.setRoute("/fast/\(index).pbf", .ok(Fixtures.tile(layers: ["f"], seed: index))) }
        var requests: [FetchRequest] = []
        for index in 0..<12 {
            if index < 6 { requests.append(tile("/slow/\(index).pbf")) }
            requests.append(tile("/fast/\(index).pbf", on: fast))
        }
        let settings = DownloadSettings(concurrency: 4, retries: 0, timeoutSeconds: 10, perHost: 2)
        let fetcher = try makeFetcher(settings)
        var finished: [String] = []
        var iterator = requests.makeIterator()
        var failures = 0
        fetcher.fetchAll(&iterator) { request, result in
            if case .failure = result { failures += 1 }
            finished.append(request.url)
        }
        XCTAssertEqual(failures, 0)
        XCTAssertEqual(finished.count, 18)
        let lastFast = finished.lastIndex { $0.contains("/fast/") } ?? 99
        let firstSlow = finished.firstIndex { $0.contains("/slow/") } ?? -1
        XCTAssertEqual(lastFast, 11, "the fast host must finish while the slow one is still answering")
        XCTAssertEqual(firstSlow, 12)
        XCTAssertEqual(server.peakConcurrentRequests, 2, "perHost caps the slow host")
    }

    // MARK: - Refusals and secrets

    func testRefusalStopsTheRunEarlyWithoutPrintingTheToken() throws {
        for index in 0..<200 { server.setRoute("/private/\(index).pbf", .status(401, body: "token SECRET1 invalid")) }
        let base = server.baseURL
        let settings = DownloadSettings(concurrency: 2, retries: 3, timeoutSeconds: 10)
        let fetcher = try makeFetcher(settings) {
            $0.rewrite = { url in url.replacingOccurrences(of: "${TILE_KEY}", with: "SECRET2") }
        }
        let requests = (0..<200).map { index in
            FetchRequest(url: base + "/private/\(index).pbf?" + (index % 2 == 0 ? "access_token=SECRET1" : "key=${TILE_KEY}"),
                         kind: .tile)
        }
        let downloader = Downloader(fetcher: fetcher) { _ in }
        let stats = try downloader.run(requests)

        XCTAssertLessThanOrEqual(server.requests.count, 4, "no new request after the first refusal")
        XCTAssertEqual(Set(server.requests.map(\.path)).count, server.requests.count, "a refusal is not retried")
        XCTAssertEqual(stats.requested, stats.succeeded + stats.failed, "every pulled request is reported once")
        XCTAssertLessThanOrEqual(stats.requested, 4)
        let stop = try XCTUnwrap(stats.stoppedBy)
        XCTAssertEqual(stop.failure, .refused(401))
        let message = try XCTUnwrap(stats.stopMessage)
        XCTAssertTrue(message.contains("the access token was refused (HTTP 401): it is wrong, expired or not "
                                       + "allowed for this URL"), message)
        XCTAssertTrue(message.contains(base + "/private/"), message)
        let everything = "\(stats) \(message) " + stats.failures.map { "\($0.url) \($0.failure)" }.joined(separator: " ")
        XCTAssertFalse(everything.contains("SECRET"), everything)
        XCTAssertTrue(stats.failures.contains { $0.url.hasSuffix("access_token=REDACTED") || $0.url.hasSuffix("key=${TILE_KEY}") })
        XCTAssertTrue(server.requests.contains { $0.target.hasSuffix("key=SECRET2") || $0.target.hasSuffix("access_token=SECRET1") },
                      "the secret is sent, only never shown")
    }

    /// Issue 20: a redirect loop's message names the last URL, which the server may have built
    /// from the request's query: a key under any parameter name is hidden, by its value.
    func testARedirectLoopThatEchoesTheKeyUnderAnyNameShowsNoSecret() throws {
        server.setHandler(prefix: "/loop/") { request in .status(302, headers: [.init("Location", request.target + "&n=1")]) }
        let secrets = URLSecrets.from(urls: [server.baseURL + "/loop/a.pbf?k=${ODD_NAME}"], environment: ["ODD_NAME": "SECRET3"]).secrets
        let fetcher = try makeFetcher(DownloadSettings(concurrency: 1, retries: 0, timeoutSeconds: 10)) {
            $0.rewrite = { url in secrets.requestURL(url) }
            $0.secrets = secrets
        }
        var iterator = [FetchRequest(url: server.baseURL + "/loop/a.pbf", kind: .tile)].makeIterator()
        var results: [Result<FetchedBody, FetchFailure>] = []
        fetcher.fetchAll(&iterator) { results.append($1) }

        guard case .failure(.redirects(let message))? = results.first else { return XCTFail("\(results)") }
        XCTAssertTrue(message.contains("the last to \(server.baseURL)/loop/a.pbf?k=REDACTED&n=1"), message)
        XCTAssertFalse(message.contains("SECRET3"), message)
        XCTAssertTrue(server.requests.contains { $0.target.contains("k=SECRET3") }, "the key is sent, only never shown")
    }

    func testFetcherAloneStopsPullingAfterAForbiddenKeyAndAbandonsWhatWaits() throws {
        server.setRoute("/denied.pbf", .status(403))
        for index in 0..<50 { server.setRoute("/ok/\(index).pbf", .delay(0.05, then: .ok(Fixtures.pythonTile))) }
        server.setRoute("/retry.pbf", .status(503))
        let fetcher = try makeFetcher(DownloadSettings(concurrency: 3, retries: 3, timeoutSeconds: 10),
                                      retry: fastRetries(3, delay: 5))
        let requests = [tile("/retry.pbf"), tile("/denied.pbf?key=K")] + (0..<50).map { tile("/ok/\($0).pbf") }
        let counted = CountingRequests(requests)
        var iterator = counted
        var results: [(FetchRequest, Result<FetchedBody, FetchFailure>)] = []
        let started = clock.now
        fetcher.fetchAll(&iterator) { results.append(($0, $1)) }
        XCTAssertEqual(clock.now, started, "the retry waiting 5 s is abandoned, not waited for")
        XCTAssertEqual(results.count, counted.pulled, "one result per pulled request")
        XCTAssertLessThanOrEqual(counted.pulled, 5)
        let byPath = Dictionary(results.map { (URL(string: $0.0.url)?.path ?? "", $0.1) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byPath["/denied.pbf"]?.failureValue, .refused(403))
        guard case .failure(.abandoned(let why))? = byPath["/retry.pbf"] else {
            return XCTFail("the waiting retry should be abandoned, got \(String(describing: byPath["/retry.pbf"]))")
        }
        XCTAssertTrue(why.contains("HTTP 403"), why)
    }

    /// Issue 20: a 401 or 403 to a request that carried no key or token is a failed download of
    /// that URL; the run goes on and every request is made.
    func testAForbiddenWithoutAKeyFailsThatRequestOnly() throws {
        server.setRoute("/forbidden.pbf", .status(403))
        server.setRoute("/unauthorized.pbf", .status(401))
        for index in 0..<30 { server.setRoute("/ok/\(index).pbf", .ok(Fixtures.pythonTile)) }
        let fetcher = try makeFetcher(DownloadSettings(concurrency: 2, retries: 3, timeoutSeconds: 10))
        let requests = [tile("/forbidden.pbf"), tile("/unauthorized.pbf")] + (0..<30).map { tile("/ok/\($0).pbf") }
        let stats = try Downloader(fetcher: fetcher) { _ in }.run(requests)
        XCTAssertNil(stats.stoppedBy, "no credential was refused")
        XCTAssertEqual(stats.requested, 32)
        XCTAssertEqual(stats.succeeded, 30)
        XCTAssertEqual(Set(stats.failures.map { "\($0.failure)" }),
                       ["HTTP 403 (the request carried no key or token)", "HTTP 401 (the request carried no key or token)"])
        XCTAssertEqual(stats.failureCounts, ["http-401": 1, "http-403": 1])
        XCTAssertEqual(server.requestCount("/forbidden.pbf"), 1, "a 403 is not retried")
    }

    // MARK: - Missing tiles

    func testMissingTilesSkipRecordsAnEmptyTileOnlyForTiles() throws {
        let skip = DownloadSettings(concurrency: 2, retries: 1, timeoutSeconds: 10, missingTiles: .skip)
        let fetcher = try makeFetcher(skip)
        let results = fetch(fetcher, [tile("/gone.pbf"), FetchRequest(url: server.baseURL + "/gone.json", kind: .style)])
        let byKind = Dictionary(uniqueKeysWithValues: results.map { ($0.0.kind, $0.1) })
        XCTAssertEqual(try byKind[.tile]?.get(), .missingTile)
        XCTAssertEqual(try byKind[.tile]?.get().data, Data())
        XCTAssertEqual(try byKind[.tile]?.get().isMissing, true)
        XCTAssertEqual(byKind[.style]?.failureValue, .notFound, "a missing style is never skipped")
        XCTAssertEqual(server.requestCount("/gone.pbf"), 1)

        let failing = try makeFetcher(DownloadSettings(concurrency: 2, retries: 1, timeoutSeconds: 10))
        XCTAssertEqual(fetch(failing, [tile("/gone.pbf")]).first?.1.failureValue, .notFound, "fail is the default")

        let downloader = Downloader(fetcher: fetcher) { _ in }
        let stats = try downloader.run([tile("/gone.pbf"), tile("/also-gone.pbf")])
        XCTAssertEqual(stats.succeeded, 2)
        XCTAssertEqual(stats.missingTiles, 2)
    }

    func testMissingTilesSkipAppliesToLocalOrigins() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let http = try makeFetcher(DownloadSettings(concurrency: 2, retries: 0, timeoutSeconds: 10, missingTiles: .skip))
        let router = OriginRouter(routes: [.directory("https://t.example/", directory)], http: http)
        XCTAssertEqual(router.missingTiles, .skip)
        let results = fetch(router, [FetchRequest(url: "https://t.example/1/0/0.pbf", kind: .tile)])
        XCTAssertEqual(try results.first?.1.get(), .missingTile)
    }

    // MARK: - Verification of what the headers say

    func testHTMLContentTypeIsRefusedEvenWithoutAnAngleBracket() throws {
        server.setRoute("/empty-html.pbf", .respond(status: 200, headers: [.init("Content-Type", "text/html")], body: Data()))
        server.setRoute("/text-html.pbf", .respond(status: 200, headers: [.init("Content-Type", "Text/HTML; charset=utf-8")],
                                                   body: Data("Rate limit exceeded".utf8)))
        server.setRoute("/glyphs.pbf", .respond(status: 200, headers: [.init("Content-Type", "text/html")], body: Data()))
        server.setRoute("/fine.pbf", .respond(status: 200, headers: [.init("Content-Type", "application/x-protobuf")],
                                              body: Data()))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, [tile("/empty-html.pbf"), tile("/text-html.pbf"), tile("/fine.pbf"),
                                      FetchRequest(url: server.baseURL + "/glyphs.pbf", kind: .glyphs)])
        XCTAssertEqual(results.count, 4)
        for (request, result) in results {
            if request.url.hasSuffix("/fine.pbf") {
                XCTAssertEqual(try result.get().data, Data(), "an empty tile served as protobuf is fine")
                continue
            }
            guard case .failure(.invalidBody(let why)) = result else {
                XCTFail("\(request.url): expected invalidBody, got \(result)")
                continue
            }
            XCTAssertTrue(why.contains("text/html"), why)
        }
        XCTAssertEqual(server.requests.count, 4, "refused bodies are not retried")
    }

    func testDeclaredContentEncodingIsDecodedOrRefused() throws {
        server.setRoute("/gzip.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "gzip")], body: Fixtures.pythonTileGzip))
        server.setRoute("/lying.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "gzip")], body: Fixtures.pythonTile))
        server.setRoute("/unknown.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "x-squish")],
                                                 body: Fixtures.pythonTile))
        server.setRoute("/identity.pbf", .respond(status: 200, headers: [.init("Content-Encoding", "identity")],
                                                  body: Fixtures.pythonTile))
        let fetcher = try makeFetcher()
        let results = fetch(fetcher, ["/gzip.pbf", "/lying.pbf", "/unknown.pbf", "/identity.pbf"].map { tile($0) })
        let byPath = Dictionary(uniqueKeysWithValues: results.map { (URL(string: $0.0.url)?.path ?? "", $0.1) })
        XCTAssertEqual(try byPath["/gzip.pbf"]?.get().data, Fixtures.pythonTile)
        XCTAssertEqual(try byPath["/identity.pbf"]?.get().data, Fixtures.pythonTile)
        for path in ["/lying.pbf", "/unknown.pbf"] {
            guard case .failure(.invalidBody(let why))? = byPath[path] else {
                XCTFail("\(path): expected invalidBody, got \(String(describing: byPath[path]))")
                continue
            }
            XCTAssertTrue(why.contains("Content-Encoding"), why)
            XCTAssertEqual(server.requestCount(path), 1, "\(path): the same bytes would come back: not retried")
        }
    }

    func testLyingContentLengthWithDeclaredEncodingIsATruncation() throws {
        let gz = Fixtures.pythonTileGzip
        server.setRoute("/cut-gzip.pbf", .sequence([
            .truncated(body: gz.prefix(gz.count / 2), claimedLength: gz.count), .ok(gz),
        ]))
        let fetcher = try makeFetcher(retry: fastRetries(1))
        let results = fetch(fetcher, [tile("/cut-gzip.pbf")])
        XCTAssertEqual(try results.first?.1.get().data, Fixtures.pythonTile)
        XCTAssertEqual(server.requestCount("/cut-gzip.pbf"), 2, "the cut attempt failed and was retried")
    }

    // MARK: - Random faults

    func testRandomFaultsAreSurvivedByteForByte() throws {
        var expected: [String: Data] = [:]
        for index in 0..<150 {
            let data = Fixtures.tile(layers: ["l\(index)"], seed: index)
            server.setRoute("/f/\(index).pbf", .ok(data, contentType: "application/x-protobuf"))
            expected[server.baseURL + "/f/\(index).pbf"] = data
        }
        server.dripSeconds = 0.05
        server.setFaultRate(0.3, seed: 42, faults: InjectedFault.standard.filter(\.isRecoverable))
        let settings = DownloadSettings(concurrency: 8, retries: 12, timeoutSeconds: 10, perHost: 8)
        let fetcher = try makeFetcher(settings, retry: RetryPolicy(retries: 12, baseDelay: 0.002, maxDelay: 0.02))
        let results = fetch(fetcher, expected.keys.sorted().map { FetchRequest(url: $0, kind: .tile) })
        XCTAssertEqual(results.count, 150)
        for (request, result) in results {
            XCTAssertEqual(try? result.get().data, expected[request.url], request.url)
        }
        let injected = server.injectedFaults
        XCTAssertEqual(Set(injected.keys), Set(InjectedFault.standard.filter(\.isRecoverable)), "\(injected)")
        let slowDrips = injected[.slowDrip] ?? 0
        XCTAssertEqual(fetcher.retryCount, server.injectedFaultCount - slowDrips,
                       "every fault but a slow drip costs exactly one retry")
        XCTAssertEqual(server.requests.count, 150 + fetcher.retryCount)
        XCTAssertEqual(server.requests.filter { $0.fault != nil }.count, server.injectedFaultCount)
    }

    func testHTMLFaultsAreRefusedAndCountedAndTheSeedRepeats() throws {
        server.setRoute("/h.pbf", .ok(Fixtures.pythonTile))
        server.setFaultRate(0.5, seed: 7, faults: [.html200])
        let fetcher = try makeFetcher(DownloadSettings(concurrency: 1, retries: 0, timeoutSeconds: 10))
        let results = fetch(fetcher, Array(repeating: tile("/h.pbf"), count: 40))
        let refused = results.filter { if case .failure(.invalidBody) = $0.1 { return true } else { return false } }
        XCTAssertEqual(refused.count, server.injectedFaults[.html200])
        XCTAssertGreaterThan(refused.count, 5)
        XCTAssertLessThan(refused.count, 35)
        let first = server.requests.map { $0.fault != nil }

        let again = try LoopbackHTTPServer()
        defer { again.stop() }
        again.setRoute("/h.pbf", .ok(Fixtures.pythonTile))
        again.setFaultRate(0.5, seed: 7, faults: [.html200])
        _ = fetch(fetcher, Array(repeating: tile("/h.pbf", on: again), count: 40))
        XCTAssertEqual(again.requests.map { $0.fault != nil }, first, "one seed, one sequence of faults")
    }
}
