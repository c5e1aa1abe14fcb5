import XCTest
import ProvisionFoundation

/// Work done on several threads comes back in the order it went in, and the pool never holds
/// more than its capacity.
final class OrderedPoolTests: XCTestCase {
    /// Work of uneven cost (so batches finish out of order), returning its input doubled.
    private static func uneven(_ input: Int) -> Int {
        var value = UInt64(truncatingIfNeeded: input)
        for _ in 0..<((input * 7_919) % 20_000) { value = value &* 6_364_136_223_846_793_005 &+ 1 }
        return value == 42 ? -1 : input * 2
    }

    func testOutputsComeInInputOrder() {
        for (workers, batch) in [(1, 1), (3, 4), (4, 32)] {
            let pool = OrderedPool<Int, Int>(workers: workers, batchSize: batch, capacity: 3, transform: Self.uneven)
            var outputs: [Int] = []
            for input in 0..<2_000 {
                pool.add(input) { outputs.append($0) }
                pool.deliverReady { outputs.append($0) }
            }
            pool.drain { outputs.append($0) }
            XCTAssertTrue(pool.isIdle)
            XCTAssertEqual(outputs, (0..<2_000).map { $0 * 2 }, "\(workers) workers, batches of \(batch)")
            pool.close()
        }
    }

    func testAtMostCapacityBatchesAreHeld() {
        let pool = OrderedPool<Int, Int>(workers: 2, batchSize: 5, capacity: 2, transform: Self.uneven)
        defer { pool.close() }
        var added = 0, delivered = 0, most = 0
        for input in 0..<1_000 {
            pool.add(input) { _ in delivered += 1 }
            added += 1
            most = max(most, added - delivered)
        }
        pool.drain { _ in delivered += 1 }
        XCTAssertEqual(delivered, 1_000)
        // Two batches at the workers and the one being filled.
        XCTAssertLessThanOrEqual(most, 3 * 5)
        XCTAssertGreaterThan(most, 5, "the pool holds work while the workers run")
    }

    /// A pool that never got a full batch delivers what it has on drain, and closes.
    func testDrainDeliversAPartialBatch() {
        let pool = OrderedPool<Int, Int>(workers: 2, batchSize: 100) { $0 + 1 }
        var outputs: [Int] = []
        for input in 0..<7 { pool.add(input) { outputs.append($0) } }
        XCTAssertEqual(outputs, [], "nothing is delivered before a batch is full")
        pool.drain { outputs.append($0) }
        XCTAssertEqual(outputs, Array(1...7))
        pool.close()
        pool.close()
    }
}
