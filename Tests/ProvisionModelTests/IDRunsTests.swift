import ProvisionModel
import XCTest

/// Ascending ids kept as runs give back the ids they were given, in order, with one run per
/// stretch of consecutive ids.
final class IDRunsTests: XCTestCase {
    func testTheIdsComeBackInOrderAsRuns() {
        let ids: [Int64] = [1, 2, 3, 7, 9, 10, 11, 12, 40]
        let runs = IDRuns(ids)
        XCTAssertEqual(Array(runs), ids)
        XCTAssertEqual(runs.count, ids.count)
        XCTAssertEqual(runs.runCount, 4)
        XCTAssertEqual(runs.last, 40)
        XCTAssertEqual(IDRuns(ids), runs)
        XCTAssertNotEqual(IDRuns(ids.dropLast()), runs)
        var bounds: [[Int64]] = []
        runs.forEachRun { bounds.append([$0, $1]) }
        XCTAssertEqual(bounds, [[1, 3], [7, 7], [9, 12], [40, 40]])
    }

    func testALongStretchIsOneRun() {
        var runs = IDRuns()
        for id in Int64(1)...1_000_000 { runs.append(id) }
        XCTAssertEqual(runs.runCount, 1)
        XCTAssertEqual(runs.count, 1_000_000)
        XCTAssertEqual(runs.reduce(0, +), 500_000_500_000)
    }

    func testEmpty() {
        let runs = IDRuns()
        XCTAssertNil(runs.last)
        XCTAssertEqual(Array(runs), [])
        XCTAssertEqual(runs.runCount, 0)
    }
}
