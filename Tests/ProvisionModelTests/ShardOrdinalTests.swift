import ProvisionModel
import TileMath
import XCTest

/// Shard ordinals follow the stored walk (a TMS column from the south); positions the ascending
/// order; and a set of bits remembers positions.
final class ShardOrdinalTests: XCTestCase {
    private func group(tms: Bool, areas: [BoundingBox]) -> TileGroup {
        let set = PlannedTileSet(urlTemplate: "https://t/{z}/{x}/{y}.pbf", pixelRatio: 1, isTMS: tms, zooms: 6...6)
        return TileGroup(tileSet: set, zoom: 6, areas: areas.map { .bbox($0) }, rows: Array(areas.indices), desiredCount: 0)
    }

    func testEveryRangeGivesTheTilesAtThoseWalkOrdinalsWithTheirAscendingPositions() throws {
        let boxes = [BoundingBox(west: 2, south: 40, east: 20, north: 50), BoundingBox(west: 15, south: 35, east: 30, north: 45)]
        for tms in [false, true] {
            let group = group(tms: tms, areas: boxes)
            var walk: [TileID] = []
            group.forEachColumn { walk += $0 }
            let ascending = Array(group.tiles)
            XCTAssertEqual(walk.count, group.distinctCount)
            XCTAssertEqual(Set(walk), Set(ascending))
            XCTAssertEqual(walk == ascending, !tms, "only a TMS walk differs from the ascending order")
            for lower in stride(from: 0, through: walk.count, by: 3) {
                for upper in stride(from: lower, through: walk.count, by: 5) {
                    var seen: [(Int, TileID)] = []
                    let count = try group.forEachTile(inOrdinals: (lower + 100)..<(upper + 100), base: 100, store: nil) { position, tile, stored in
                        XCTAssertFalse(stored)
                        seen.append((position, tile))
                    }
                    XCTAssertEqual(count, walk.count)
                    XCTAssertEqual(Set(seen.map(\.1)), Set(walk[lower..<upper]), "tms \(tms) \(lower)..<\(upper)")
                    for (position, tile) in seen { XCTAssertEqual(ascending[position], tile) }
                    XCTAssertEqual(seen.map(\.0), seen.map(\.0).sorted(), "ascending")
                }
            }
        }
    }

    func testSharesAreEqualToOneTileAndTileTheWhole() {
        for total in [0, 1, 7, 100, 1_000_003] {
            for count in [1, 2, 3, 7, 64] {
                let ranges = (0..<count).map { Shard(index: $0, count: count).range(total: total) }
                XCTAssertEqual(ranges.first?.lowerBound, 0)
                XCTAssertEqual(ranges.last?.upperBound, total)
                for (a, b) in zip(ranges, ranges.dropFirst()) { XCTAssertEqual(a.upperBound, b.lowerBound) }
                let sizes = ranges.map(\.count)
                XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1, "\(total)/\(count)")
            }
        }
        XCTAssertEqual(Shard("2/7"), Shard(index: 2, count: 7))
        for bad in ["7/7", "-1/3", "1/0", "1/", "a/b", "1/2/3", " 1/2", "+1/2"] { XCTAssertNil(Shard(bad), bad) }
    }

    func testTileBits() {
        var bits = TileBits()
        XCTAssertTrue(bits.isEmpty)
        for position in [0, 63, 64, 1_000, 63] { bits.insert(position) }
        XCTAssertEqual(bits.count, 4, "a position inserted twice counts once")
        for position in [0, 63, 64, 1_000] { XCTAssertTrue(bits.contains(position), "\(position)") }
        for position in [1, 62, 65, 999, 1_001, 1_000_000] { XCTAssertFalse(bits.contains(position), "\(position)") }
    }
}
