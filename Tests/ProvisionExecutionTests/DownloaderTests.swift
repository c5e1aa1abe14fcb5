import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// A fetcher that answers every request at once from a closure, counting what it produced.
final class StubFetcher: Fetcher {
    let answer: (FetchRequest) -> Result<FetchedBody, FetchFailure>
    private let lock = NSLock()
    private var producedCount = 0

    init(_ answer: @escaping (FetchRequest) -> Result<FetchedBody, FetchFailure>) { self.answer = answer }

    var produced: Int {
        lock.lock()
        defer { lock.unlock() }
        return producedCount
    }

    func fetchAll<I: IteratorProtocol>(_ requests: inout I,
                                       onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void)
    where I.Element == FetchRequest {
        while let request = requests.next() {
            lock.lock()
            producedCount += 1
            lock.unlock()
            onResult(request, answer(request))
        }
    }
}

struct SinkFailure: Error, Equatable {}

func requests(_ count: Int) -> [FetchRequest] {
    (0..<count).map { FetchRequest(url: "https://t.example.com/\($0).pbf", kind: .tile) }
}

final class DownloaderTests: XCTestCase {
    func testSlowSinkHoldsTheNetworkLoopBack() throws {
        let fetcher = StubFetcher { _ in .success(FetchedBody(data: Data(count: 100))) }
        let lock = NSLock()
        var consumed = 0
        var worstLag = 0
        var batchSizes: Set<Int> = []
        let downloader = Downloader(fetcher: fetcher, configuration: .init(batchItems: 10, queueCapacity: 2)) { batch in
            lock.lock()
            worstLag = max(worstLag, fetcher.produced - consumed)
            consumed += batch.count
            batchSizes.insert(batch.count)
            lock.unlock()
            Thread.sleep(forTimeInterval: 0.002)
        }
        let stats = try downloader.run(requests(600))
        XCTAssertEqual(consumed, 600)
        XCTAssertEqual(stats.succeeded, 600)
        XCTAssertEqual(stats.bytes, 60_000)
        XCTAssertEqual(batchSizes, [10])
        XCTAssertEqual(stats.peakQueuedBatches, 2, "the queue fills up to its bound and never beyond")
        // Produced but not yet written: the batch being built, the one waiting to be pushed,
        // the queued ones and the one in the sink.
        XCTAssertLessThanOrEqual(worstLag, 10 * (2 + 3))
    }

    func testBatchesAreCutByBytesToo() throws {
        let fetcher = StubFetcher { _ in .success(FetchedBody(data: Data(count: 1000))) }
        var sizes: [Int] = []
        let downloader = Downloader(fetcher: fetcher, configuration: .init(batchItems: 100, batchBytes: 3000)) {
            sizes.append($0.count)
        }
        _ = try downloader.run(requests(10))
        XCTAssertEqual(sizes, [3, 3, 3, 1])
    }

    func testSinkErrorStopsTheDownloadAndIsRethrown() {
        let fetcher = StubFetcher { _ in .success(FetchedBody(data: Data(count: 10))) }
        var calls = 0
        let downloader = Downloader(fetcher: fetcher, configuration: .init(batchItems: 10, queueCapacity: 2)) { _ in
            calls += 1
            if calls == 3 { throw SinkFailure() }
        }
        XCTAssertThrowsError(try downloader.run(requests(100_000))) { error in
            XCTAssertEqual(error as? SinkFailure, SinkFailure())
        }
        XCTAssertEqual(calls, 3, "no batch is written after the failure")
        XCTAssertLessThan(fetcher.produced, 1000, "no new requests after the failure")
    }

    func testFailuresAreCountedByReasonAndTheFirstOnesKept() throws {
        let fetcher = StubFetcher { request in
            let index = Int(request.url.split(separator: "/").last?.split(separator: ".").first ?? "") ?? 0
            switch index % 4 {
            case 0: return .failure(.notFound)
            case 1: return .failure(.status(503))
            default: return .success(FetchedBody(data: Data(count: 5)))
            }
        }
        var written: [FetchedItem] = []
        var progress: [DownloadProgress] = []
        var failedURLs: [String] = []
        let downloader = Downloader(fetcher: fetcher, configuration: .init(maxRecordedFailures: 3)) { written += $0 }
        downloader.onProgress = { progress.append($0) }
        downloader.onFailure = { request, _ in failedURLs.append(request.url) }
        let stats = try downloader.run(requests(20))
        XCTAssertEqual(stats.requested, 20)
        XCTAssertEqual(stats.succeeded, 10)
        XCTAssertEqual(stats.failed, 10)
        XCTAssertEqual(stats.failureCounts, ["not-found": 5, "http-503": 5])
        XCTAssertEqual(stats.failures.map(\.url), (0..<3).map { "https://t.example.com/\([0, 1, 4][$0]).pbf" })
        XCTAssertEqual(stats.bytes, 50)
        XCTAssertEqual(written.count, 10)
        XCTAssertEqual(failedURLs.count, 10)
        XCTAssertEqual(progress.count, 20)
        XCTAssertEqual(progress.last, DownloadProgress(requested: 20, completed: 20, succeeded: 10, failed: 10, bytes: 50))
    }

    func testDownloadOverHTTPCountsRetriesAndNeverWritesBadBodies() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/a.pbf", .sequence([.status(503), .ok(Fixtures.pythonTile)]))
        server.setRoute("/b.pbf", .html())
        server.setRoute("/c.pbf", .ok(Fixtures.pythonTileGzip, headers: [.init("ETag", "\"c\"")]))
        let http = try HTTPFetcher(configuration: .init(retry: fastRetries()))
        let router = OriginRouter(routes: [], http: http)
        var written: [String: FetchedBody] = [:]
        let downloader = Downloader(fetcher: router) { batch in
            for item in batch { written[item.request.url] = item.body }
        }
        let stats = try downloader.run(["/a.pbf", "/b.pbf", "/c.pbf"].map {
            FetchRequest(url: server.baseURL + $0, kind: .tile)
        })
        XCTAssertEqual(stats.succeeded, 2)
        XCTAssertEqual(stats.failureCounts, ["invalid-body": 1])
        XCTAssertEqual(stats.retries, 1)
        XCTAssertEqual(Set(written.keys), [server.baseURL + "/a.pbf", server.baseURL + "/c.pbf"])
        let c = try XCTUnwrap(written[server.baseURL + "/c.pbf"])
        XCTAssertEqual(c.data, Fixtures.pythonTile)
        XCTAssertEqual(c.etag, "\"c\"")
    }

    func testRetryPolicyUsesFullJitterUnderAGrowingCap() {
        let draws = Draws([0.5, 0.999, 0.25, 0.0])
        let policy = RetryPolicy(retries: 3, baseDelay: 1, maxDelay: 5, random: { draws.next() })
        XCTAssertEqual(policy.maxAttempts, 4)
        XCTAssertEqual(policy.delay(afterAttempt: 1), 0.5, accuracy: 1e-9)   // cap 1
        XCTAssertEqual(policy.delay(afterAttempt: 2), 1.998, accuracy: 1e-9) // cap 2
        XCTAssertEqual(policy.delay(afterAttempt: 4), 1.25, accuracy: 1e-9)  // cap min(8, 5)
        XCTAssertEqual(policy.delay(afterAttempt: 1, retryAfter: 3), 3, accuracy: 1e-9)
        XCTAssertTrue(policy.shouldRetry(.status(503), attempt: 3))
        XCTAssertFalse(policy.shouldRetry(.status(503), attempt: 4))
        XCTAssertFalse(policy.shouldRetry(.notFound, attempt: 1))
        XCTAssertFalse(policy.shouldRetry(.invalidBody("x"), attempt: 1))
    }

    func testAFatalFailureStopsPullingWhateverTheFetcher() throws {
        let fetcher = StubFetcher { request in
            if request.url.hasSuffix("/2.pbf") { return .failure(.status(403)) }
            if request.url.hasSuffix("/1.pbf") { return .success(.missingTile) }
            return .success(FetchedBody(data: Data(count: 3)))
        }
        var written = 0
        let downloader = Downloader(fetcher: fetcher) { written += $0.count }
        let stats = try downloader.run(requests(100))
        XCTAssertEqual(stats.requested, 3)
        XCTAssertEqual(fetcher.produced, 3)
        XCTAssertEqual(stats.succeeded, 2)
        XCTAssertEqual(stats.missingTiles, 1)
        XCTAssertEqual(written, 2, "what was fetched before the stop is still written")
        XCTAssertEqual(stats.stoppedBy?.url, "https://t.example.com/2.pbf")
        XCTAssertTrue(stats.stoppedEarly)

        let patient = Downloader(fetcher: fetcher, configuration: .init(stopOnFatal: false)) { _ in }
        let all = try patient.run(requests(100))
        XCTAssertEqual(all.requested, 100)
        XCTAssertNil(all.stoppedBy)
        XCTAssertEqual(all.failureCounts, ["http-403": 1])
    }
}

/// A scripted random source.
final class Draws: @unchecked Sendable {
    private var values: [Double]
    private let lock = NSLock()

    init(_ values: [Double]) { self.values = values }

    func next() -> Double {
        lock.lock()
        defer { lock.unlock() }
        return values.isEmpty ? 0 : values.removeFirst()
    }
}
