import XCTest
@testable import TileMath

final class SortedMembershipTests: XCTestCase {
    /// Each distinct element once, ascending, with exactly the inputs holding it, on random
    /// inputs checked against sets.
    func testMembersAreTheInputsHoldingEachElement() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let inputs = (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                Array(Set((0..<Int.random(in: 0...30, using: &generator)).map { _ in Int.random(in: 0...40, using: &generator) }))
                    .sorted()
            }
            var walked: [(Int, [Int])] = []
            var walk = SortedMembership(inputs)
            walk.forEach { walked.append(($0, $1)) }
            let expected = inputs.reduce(into: Set<Int>()) { $0.formUnion($1) }.sorted()
            XCTAssertEqual(walked.map(\.0), expected)
            for (value, members) in walked {
                XCTAssertEqual(members, inputs.indices.filter { inputs[$0].contains(value) }, "members of \(value) in \(inputs)")
            }
        }
    }

    /// A value repeated within one input is one element held by that input once.
    func testRepeatsWithinAnInputCountOnce() {
        var walked: [(Int, [Int])] = []
        var walk = SortedMembership([[1, 1, 2], [1, 3, 3]])
        walk.forEach { walked.append(($0, $1)) }
        XCTAssertEqual(walked.map(\.0), [1, 2, 3])
        XCTAssertEqual(walked.map(\.1), [[0, 1], [0], [1]])
    }

    /// Tile covers: the tiles two overlapping boxes share are those both covers list.
    func testOverlappingCoversShareTheirIntersection() {
        let west = TileCover(.bbox(BoundingBox(west: 2.20, south: 48.80, east: 2.40, north: 48.90)), zoom: 12)
        let east = TileCover(.bbox(BoundingBox(west: 2.35, south: 48.85, east: 2.50, north: 48.95)), zoom: 12)
        var both = 0, total = 0
        var walk = SortedMembership([west, east])
        walk.forEach { _, members in
            total += 1
            if members == [0, 1] { both += 1 }
        }
        let a = Set(west), b = Set(east)
        XCTAssertGreaterThan(both, 0)
        XCTAssertEqual(both, a.intersection(b).count)
        XCTAssertEqual(total, a.union(b).count)
    }
}
