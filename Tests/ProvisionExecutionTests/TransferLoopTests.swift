import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionExecution

/// Several transfer loops behind one scheduler: the caps hold over all of them, every loop works,
/// and every answer comes back once, to the thread that called `fetchAll`.
final class TransferLoopTests: XCTestCase {
    func testTheCapsHoldOverEveryLoopAndEachLoopCarriesItsShare() throws {
        let servers = try (0..<2).map { _ in try LoopbackHTTPServer() }
        defer { servers.forEach { $0.stop() } }
        var expected: [String: Data] = [:]
        for (host, server) in servers.enumerated() {
            for index in 0..<30 {
                let body = Fixtures.tile(layers: ["host\(host)"], seed: index)
                server.setRoute("/t/\(index)", .delay(0.02, then: .ok(body)))
                expected["\(server.baseURL)/t/\(index)"] = body
            }
        }
        var configuration = HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: 8, retries: 0, timeoutSeconds: 10, perHost: 3))
        configuration.transferLoops = 3
        let fetcher = try HTTPFetcher(configuration: configuration)
        // Interleaved, as a job's hosts are.
        let requests = (0..<30).flatMap { index in
            servers.map { FetchRequest(url: "\($0.baseURL)/t/\(index)", kind: .tile) }
        }

        let caller = Thread.current
        var received: [String: Data] = [:]
        var deliveries = 0
        var iterator = requests.makeIterator()
        fetcher.fetchAll(&iterator) { request, result in
            XCTAssertTrue(Thread.current == caller, "answers are delivered on the calling thread")
            deliveries += 1
            received[request.url] = try? result.get().data  // a failure leaves the URL out: compared below
        }

        XCTAssertEqual(deliveries, 60, "each request answered once")
        XCTAssertTrue(received == expected, "every body arrives, each under its own request")
        for server in servers {
            XCTAssertLessThanOrEqual(server.peakConcurrentRequests, 3, "perHost holds over every loop")
            XCTAssertGreaterThanOrEqual(server.peakConcurrentRequests, 2, "a host's transfers overlap")
        }
        let carried = fetcher.loops.map(\.carried)
        XCTAssertEqual(carried.reduce(0, +), 60)
        XCTAssertEqual(carried.filter { $0 > 0 }.count, 3, "HTTP/1.1 hosts are spread over every loop: \(carried)")
    }

    func testConcurrencyHoldsOverEveryLoop() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        for index in 0..<40 {
            server.setRoute("/t/\(index)", .delay(0.02, then: .ok(Fixtures.tile(layers: ["a"], seed: index))))
        }
        // perHost above concurrency: only the concurrency cap can hold the transfers to 5.
        var configuration = HTTPFetcher.Configuration(
            settings: DownloadSettings(concurrency: 5, retries: 0, timeoutSeconds: 10, perHost: 16))
        configuration.transferLoops = 3
        let fetcher = try HTTPFetcher(configuration: configuration)
        let results = fetch(fetcher, (0..<40).map { FetchRequest(url: "\(server.baseURL)/t/\($0)", kind: .tile) })
        XCTAssertEqual(results.filter { (try? $0.1.get()) != nil }.count, 40)
        XCTAssertLessThanOrEqual(server.peakConcurrentRequests, 5, "concurrency counts the transfers of every loop")
        XCTAssertGreaterThanOrEqual(server.peakConcurrentRequests, 3, "transfers overlap")
        XCTAssertEqual(fetcher.loops.map(\.carried).filter { $0 > 0 }.count, 3, "every loop carried some")
    }

    func testOneLoopPerRequestInFlightAtMost() throws {
        var configuration = HTTPFetcher.Configuration(settings: DownloadSettings(concurrency: 2))
        configuration.transferLoops = 8
        XCTAssertEqual(try HTTPFetcher(configuration: configuration).loops.count, 2)
        configuration.transferLoops = 0
        XCTAssertEqual(try HTTPFetcher(configuration: configuration).loops.count, 1)
    }
}
