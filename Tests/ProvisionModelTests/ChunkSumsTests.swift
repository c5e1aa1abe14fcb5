import ProvisionModel
import XCTest

/// `ChunkSums` pins one damaged row of a chunk (unusable, missing or extra) and vouches for the
/// rest; anything else is unexplained.
final class ChunkSumsTests: XCTestCase {
    private func values(_ n: Int, seed: UInt64 = 7) -> [UInt64] {
        var state = seed
        return (0..<n).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return ChunkSums.value(ofDigest: withUnsafeBytes(of: state.bigEndian) { Array($0) })
        }
    }

    private func sums(_ values: [UInt64]) -> ChunkSums {
        var sums = ChunkSums()
        for value in values { sums.add(value) }
        return sums
    }

    func testHexRoundTrips() throws {
        let sums = sums(values(64))
        XCTAssertEqual(sums.hex.count, 32)
        XCTAssertEqual(ChunkSums(hex: sums.hex, count: 64), sums)
        XCTAssertNil(ChunkSums(hex: "0123456789abcdef", count: 64), "a version 4 digest is not sums")
    }

    func testIntactRowsAreIntact() {
        let rows = values(64)
        XCTAssertEqual(sums(rows).explain(rows.map { ($0, false) }), .intact)
    }

    func testOneUnusableRowIsPinnedAtEveryPlace() {
        let rows = values(64)
        let lock = sums(rows)
        for u in rows.indices {
            var now = rows.map { ($0, false) }
            now[u] = (12345, true)
            XCTAssertEqual(lock.explain(now), .unusableRow(u))
            // A second, valid-looking change elsewhere is no longer explained.
            now[(u + 7) % 64].0 = 999
            XCTAssertEqual(lock.explain(now), .unexplained)
        }
    }

    func testOneMissingRowIsPinnedAtEveryPlace() {
        let rows = values(64)
        let lock = sums(rows)
        for j in rows.indices {
            var now = rows
            now.remove(at: j)
            XCTAssertEqual(lock.explain(now.map { ($0, false) }), .missingRow)
            now[(j + 3) % 63] = 42
            XCTAssertEqual(lock.explain(now.map { ($0, false) }), .unexplained)
        }
    }

    func testOneExtraRowIsPinned() {
        let rows = values(10)
        var now = rows
        now.insert(77, at: 4)
        XCTAssertEqual(sums(rows).explain(now.map { ($0, false) }), .extraRow(4))
    }

    func testAChangeOnlyTheDigestShowsIsUnexplained() {
        let rows = values(64)
        var now = rows
        now[10] = now[11]
        XCTAssertEqual(sums(rows).explain(now.map { ($0, false) }), .unexplained)
        // Two rows swapped keep the first sum but not the second.
        now = rows
        now.swapAt(3, 9)
        XCTAssertEqual(sums(rows).explain(now.map { ($0, false) }), .unexplained)
    }
}
