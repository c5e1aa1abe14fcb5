import Foundation
import ProvisionFoundation
import XCTest

final class ParallelBatchesTests: XCTestCase {
    private struct Stop: Error, Equatable { var at: Int }

    func testResultsComeInTheOrderTheItemsCameWhateverTheBatchesAndWorkers() throws {
        for (batchSize, workers, count) in [(1, 1, 5), (7, 2, 100), (256, 3, 1_000), (64, 8, 10), (10, 2, 0)] {
            var consumed: [Int] = []
            let batches = ParallelBatches<Int, Int>(batchSize: batchSize, workers: workers, transform: { $0 * $0 },
                                                    consume: { consumed.append($0) })
            for n in 0..<count { try batches.add(n) }
            try batches.finish()
            XCTAssertEqual(consumed, (0..<count).map { $0 * $0 }, "batches of \(batchSize), \(workers) workers")
        }
    }

    func testAConsumeThatThrowsStopsThereAndNothingAfterIsConsumed() throws {
        var consumed: [Int] = []
        let batches = ParallelBatches<Int, Int>(batchSize: 4, workers: 2, transform: { $0 }, consume: { n in
            if n == 9 { throw Stop(at: n) }
            consumed.append(n)
        })
        var thrown: Error?
        do {
            for n in 0..<40 { try batches.add(n) }
            try batches.finish()
        } catch {
            thrown = error
        }
        XCTAssertEqual(thrown as? Stop, Stop(at: 9))
        XCTAssertEqual(consumed, Array(0..<9))
    }

    func testAnItemGatheredButNotYetDueIsConsumedByFinish() throws {
        var consumed: [String] = []
        let batches = ParallelBatches<Int, String>(batchSize: 100, transform: { String($0) }, consume: { consumed.append($0) })
        try batches.add(1)
        try batches.add(2)
        XCTAssertEqual(consumed, [], "a batch is consumed once the next one starts, or at finish")
        try batches.finish()
        XCTAssertEqual(consumed, ["1", "2"])
    }
}
