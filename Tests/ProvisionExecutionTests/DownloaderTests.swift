import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// A fetcher that answers every request at once from a closure, counting what it produced.
final class StubFetcher: Fetcher, Sendable {
    let answer: @Sendable (FetchRequest) -> Result<FetchedBody, FetchFailure>
    /// How many answers it produced; a thread may wait on it.
    let producedCount = Mutex(0)

    init(_ answer: @escaping @Sendable (FetchRequest) -> Result<FetchedBody, FetchFailure>) { self.answer = answer }

    var produced: Int { producedCount.withLock { $0 } }

    func fetchAll<I: IteratorProtocol>(_ requests: inout I,
                                       onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void)
    where I.Element == FetchRequest {
        while let request = requests.next() {
            producedCount.withLock { $0 += 1 }
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
        let seen = Mutex((consumed: 0, worstLag: 0, batchSizes: Set<Int>()))
        // The clock never moves, so the writer is never idle: batches are cut by size only.
        let configuration = Downloader.Configuration(batchItems: 10, queueCapacity: 2, clock: ManualClock())
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { batch in
            // The sink does not return until the network loop is as far ahead as it can get:
            // this batch, the 2 queued and a full one it is blocked pushing (or the end).
            let consumed = seen.withLock { $0.consumed }
            let produced = fetcher.producedCount.withLock(when: { $0 >= min(600, consumed + 10 * (1 + 2 + 1)) }) { $0 }
            seen.withLock { seen in
                seen.worstLag = max(seen.worstLag, produced - seen.consumed)
                seen.consumed += batch.count
                seen.batchSizes.insert(batch.count)
            }
        }
        let stats = try downloader.run(requests(600))
        let (consumed, worstLag, batchSizes) = seen.withLock { $0 }
        XCTAssertEqual(consumed, 600)
        XCTAssertEqual(stats.succeeded, 600)
        XCTAssertEqual(stats.bytes, 60_000)
        XCTAssertEqual(batchSizes, [10])
        XCTAssertEqual(stats.peakQueuedBatches, 2, "the queue fills up to its bound and never beyond")
        // Produced but not yet written: the batch in the sink, the queued ones and the full one
        // waiting to be pushed; the network loop then waits for the writer.
        XCTAssertEqual(worstLag, 10 * (1 + 2 + 1))
    }

    func testAZeroFlushWindowHandsEachResultOverWithoutWaiting() throws {
        // The writer's clock never moves, so only the zero window can bring a partial batch over.
        let received = Mutex(0)
        let fetcher = GatedFetcher(received: received)
        let configuration = Downloader.Configuration(flushWindow: 0, clock: ManualClock())
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { batch in
            received.withLock { $0 += batch.count }
        }
        let stats = try downloader.run(requests(5))
        XCTAssertEqual(fetcher.sawFirstThreeWritten.withLock { $0 }, true, "the first 3 were written while the rest waited")
        XCTAssertEqual(stats.succeeded, 5)
        XCTAssertEqual(received.withLock { $0 }, 5)
    }

    func testBatchesAreCutByBytesToo() throws {
        let fetcher = StubFetcher { _ in .success(FetchedBody(data: Data(count: 1000))) }
        let sizes = Mutex<[Int]>([])
        let configuration = Downloader.Configuration(batchItems: 100, batchBytes: 3000, clock: ManualClock())
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { batch in
            sizes.withLock { $0.append(batch.count) }
        }
        _ = try downloader.run(requests(10))
        XCTAssertEqual(sizes.withLock { $0 }, [3, 3, 3, 1])
    }

    func testSinkErrorStopsTheDownloadAndIsRethrown() {
        let fetcher = StubFetcher { _ in .success(FetchedBody(data: Data(count: 10))) }
        let calls = Mutex(0)
        let downloader = Downloader(fetcher: fetcher, configuration: .init(batchItems: 10, queueCapacity: 2)) { _ in
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call == 3 { throw SinkFailure() }
        }
        XCTAssertThrowsError(try downloader.run(requests(100_000))) { error in
            XCTAssertEqual(error as? SinkFailure, SinkFailure())
        }
        XCTAssertEqual(calls.withLock { $0 }, 3, "no batch is written after the failure")
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
        let written = Mutex<[FetchedItem]>([])
        var progress: [DownloadProgress] = []
        var failedURLs: [String] = []
        let downloader = Downloader(fetcher: fetcher, configuration: .init(maxRecordedFailures: 3)) { batch in
            written.withLock { $0 += batch }
        }
        downloader.onProgress = { progress.append($0) }
        downloader.onFailure = { request, _ in failedURLs.append(request.url) }
        let stats = try downloader.run(requests(20))
        XCTAssertEqual(stats.requested, 20)
        XCTAssertEqual(stats.succeeded, 10)
        XCTAssertEqual(stats.failed, 10)
        XCTAssertEqual(stats.failureCounts, ["not-found": 5, "http-503": 5])
        XCTAssertEqual(stats.failures.map(\.url), (0..<3).map { "https://t.example.com/\([0, 1, 4][$0]).pbf" })
        XCTAssertEqual(stats.bytes, 50)
        XCTAssertEqual(written.withLock { $0.count }, 10)
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
        let stored = Mutex<[String: FetchedBody]>([:])
        let downloader = Downloader(fetcher: router) { batch in
            stored.withLock { stored in
                for item in batch { stored[item.request.url] = item.body }
            }
        }
        let stats = try downloader.run(["/a.pbf", "/b.pbf", "/c.pbf"].map {
            FetchRequest(url: server.baseURL + $0, kind: .tile)
        })
        XCTAssertEqual(stats.succeeded, 2)
        XCTAssertEqual(stats.failureCounts, ["invalid-body": 1])
        XCTAssertEqual(stats.retries, 1)
        let written = stored.withLock { $0 }
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
            if request.url.hasSuffix("/2.pbf") { return .failure(.refused(403)) }
            if request.url.hasSuffix("/1.pbf") { return .success(.missingTile) }
            return .success(FetchedBody(data: Data(count: 3)))
        }
        let written = Mutex(0)
        let downloader = Downloader(fetcher: fetcher) { batch in written.withLock { $0 += batch.count } }
        let stats = try downloader.run(requests(100))
        XCTAssertEqual(stats.requested, 3)
        XCTAssertEqual(fetcher.produced, 3)
        XCTAssertEqual(stats.succeeded, 2)
        XCTAssertEqual(stats.missingTiles, 1)
        XCTAssertEqual(written.withLock { $0 }, 2, "what was fetched before the stop is still written")
        XCTAssertEqual(stats.stoppedBy?.url, "https://t.example.com/2.pbf")
        XCTAssertTrue(stats.stoppedEarly)

        let patient = Downloader(fetcher: fetcher, configuration: .init(stopOnFatal: false)) { _ in }
        let all = try patient.run(requests(100))
        XCTAssertEqual(all.requested, 100)
        XCTAssertNil(all.stoppedBy)
        XCTAssertEqual(all.failureCounts, ["http-403": 1])
    }
}

/// Answers 3 requests, waits (up to 10 s) until the sink has received them, then answers the rest.
private final class GatedFetcher: Fetcher {
    let received: Mutex<Int>
    let sawFirstThreeWritten = Mutex<Bool?>(nil)

    init(received: Mutex<Int>) { self.received = received }

    func fetchAll<I: IteratorProtocol>(_ requests: inout I, onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void)
    where I.Element == FetchRequest {
        var answered = 0
        while let request = requests.next() {
            onResult(request, .success(FetchedBody(data: Data(count: 10))))
            answered += 1
            guard answered == 3 else { continue }
            let clock = SystemClock()
            let written = received.withLock(when: { $0 >= 3 }, deadline: clock.now + 10_000_000_000, clock: clock) { $0 >= 3 }
            sawFirstThreeWritten.withLock { $0 = written }
        }
    }
}

/// A scripted random source.
final class Draws: Sendable {
    private let values: Mutex<[Double]>

    init(_ values: [Double]) { self.values = Mutex(values) }

    func next() -> Double {
        values.withLock { $0.isEmpty ? 0 : $0.removeFirst() }
    }
}
