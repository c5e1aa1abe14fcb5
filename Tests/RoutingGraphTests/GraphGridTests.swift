import RoutingGraph
import XCTest

/// The grid, graph ids and tile paths against the fact sheet's examples (Valhalla's documentation
/// and `test/graphtile.cc`), with exhaustive round trips over every tile of every level.
final class GraphGridTests: XCTestCase {
    func level(_ number: Int) throws -> GraphLevel { try XCTUnwrap(GraphLevel(number)) }

    func testLevelSizesAndGridDimensions() throws {
        let expected: [(Double, Int, Int, Int)] = [(4, 90, 45, 4_049), (1, 360, 180, 64_799),
                                                   (0.25, 1_440, 720, 1_036_799), (0.25, 1_440, 720, 1_036_799)]
        for (number, (size, columns, rows, maxIndex)) in expected.enumerated() {
            let level = try level(number)
            XCTAssertEqual(level.tileSize, size)
            XCTAssertEqual(level.columns, columns)
            XCTAssertEqual(level.rows, rows)
            XCTAssertEqual(level.maxIndex, maxIndex)
        }
        XCTAssertNil(GraphLevel(4))
        XCTAssertNil(GraphLevel(-1))
        XCTAssertEqual(GraphLevel.roads.map(\.level), [0, 1, 2])
        XCTAssertEqual(GraphLevel.all.map(\.pathDigits), [6, 6, 9, 9])
    }

    /// Central Helsinki (24.94° E, 60.17° N): tiles 3,381, 54,204 and 864,819 with base corners
    /// (24, 58), (24, 60) and (24.75, 60).
    func testHelsinkiTilesAndBaseCorners() throws {
        let expected: [(Int, Double, Double)] = [(3_381, 24, 58), (54_204, 24, 60), (864_819, 24.75, 60)]
        for (number, (index, lng, lat)) in expected.enumerated() {
            let tile = try level(number).tile(lng: 24.94, lat: 60.17)
            XCTAssertEqual(tile.index, index)
            XCTAssertEqual(tile.baseCorner.lng, lng)
            XCTAssertEqual(tile.baseCorner.lat, lat)
        }
    }

    func testPathsOfTheFactSheet() throws {
        XCTAssertEqual(GraphTileID(level: try level(0), index: 3_381)?.path, "0/003/381.gph")
        XCTAssertEqual(GraphTileID(level: try level(1), index: 64_799)?.path, "1/064/799.gph")
        XCTAssertEqual(GraphTileID(level: try level(2), index: 2)?.path, "2/000/000/002.gph")
        XCTAssertEqual(GraphTileID(level: try level(2), index: 864_819)?.path, "2/000/864/819.gph")
        XCTAssertEqual(GraphTileID(level: try level(3), index: 1_036_799)?.path, "3/001/036/799.gph")
        // Valhalla's own 2/006/897/468.gph comes from a custom hierarchy: past the standard level 2.
        XCTAssertThrowsError(try GraphTileID.parse(path: "2/006/897/468.gph")) { error in
            XCTAssertEqual((error as? GraphTilePathError)?.reason, "names index 6897468, past level 2's largest 1036799")
        }
    }

    func testGraphIDPacking() throws {
        let tile = try XCTUnwrap(GraphTileID(level: try level(2), index: 864_819))
        XCTAssertEqual(tile.graphID, 2 | 864_819 << 3)
        XCTAssertEqual(GraphTileID(graphID: tile.graphID), tile)
        // Object id bits (above bit 25) are not part of the tile.
        XCTAssertEqual(GraphTileID(graphID: tile.graphID | 12_345 << 25), tile)
        XCTAssertNil(GraphTileID(graphID: 4))  // level 4
        XCTAssertNil(GraphTileID(graphID: UInt64(4_050) << 3))  // past level 0's grid
        XCTAssertEqual(GraphTileID.headerIDMask, 0x3FFF_FFFF_FFFF)
        XCTAssertNil(GraphTileID(level: try level(1), index: 64_800))
        XCTAssertNil(GraphTileID(level: try level(1), index: -1))
    }

    /// Every tile of levels 0, 1 and 2 (level 3 shares level 2's grid: its first and last 10,000
    /// and every 97th): id → graph id → id, id → path → id, base corner and centre → same index.
    func testEveryTileRoundTripsThroughGraphIDPathAndCorner() throws {
        for level in GraphLevel.all {
            var previous: GraphTileID?
            let indexes = level.level < 3 ? Array(0...level.maxIndex)
                : Array(0..<10_000) + Array(stride(from: 10_000, to: level.maxIndex - 10_000, by: 97))
                    + Array((level.maxIndex - 10_000)...level.maxIndex)
            for index in indexes {
                guard let tile = GraphTileID(level: level, index: index) else { return XCTFail("no tile \(index)") }
                guard GraphTileID(graphID: tile.graphID) == tile,
                      (try? GraphTileID.parse(path: tile.path)) == tile,
                      level.tileIndex(lng: tile.baseCorner.lng, lat: tile.baseCorner.lat) == index,
                      level.tileIndex(lng: tile.baseCorner.lng + level.tileSize / 2,
                                      lat: tile.baseCorner.lat + level.tileSize / 2) == index else {
                    return XCTFail("tile \(tile) (\(tile.path)) does not round-trip")
                }
                if let previous, !(previous < tile) { return XCTFail("\(previous) is not before \(tile)") }
                previous = tile
            }
        }
    }

    /// Cells are half-open: a point on a boundary lies in the cell east or north of it; the world's
    /// east and north edges lie in the last column and row.
    func testHalfOpenCellEdges() throws {
        let two = try level(2)
        XCTAssertEqual(two.column(lng: 5.25), two.column(lng: 5.3))
        XCTAssertEqual(two.column(lng: 5.25), two.column(lng: 5.2) + 1)
        XCTAssertEqual(two.row(lat: 50.25), two.row(lat: 50.3))
        XCTAssertEqual(two.column(lng: -180), 0)
        XCTAssertEqual(two.column(lng: 180), 1_439)
        XCTAssertEqual(two.row(lat: -90), 0)
        XCTAssertEqual(two.row(lat: 90), 719)
        XCTAssertEqual(two.tileIndex(lng: 180, lat: 90), two.maxIndex)
        XCTAssertEqual(two.tileIndex(lng: 179.9, lat: 89.9), two.maxIndex)
        XCTAssertEqual(two.tileIndex(lng: -180, lat: -90), 0)
    }

    func testMalformedPathsAreRefusedWithTheReason() {
        let cases: [(String, String)] = [
            ("2/000/864/819", "does not end in .gph"),
            ("2/000/864/819.gph.gz", "does not end in .gph"),
            ("4/000/864/819.gph", "does not start with a level 0…3"),
            ("/2/000/864/819.gph", "does not start with a level 0…3"),
            ("02/000/864/819.gph", "does not start with a level 0…3"),
            ("x/000/864/819.gph", "does not start with a level 0…3"),
            ("2/864/819.gph", "has 2 digit groups, level 2 has 3"),
            ("2/000/000/864/819.gph", "has 4 digit groups, level 2 has 3"),
            ("0/000/003/381.gph", "has 3 digit groups, level 0 has 2"),
            ("2/000/864//819.gph", "has 4 digit groups, level 2 has 3"),
            ("2/000/86/4819.gph", "has the group \"86\", not three digits"),
            ("2/000/8a4/819.gph", "has the group \"8a4\", not three digits"),
            ("2/000/+86/819.gph", "has the group \"+86\", not three digits"),
            ("2/000/٨٦٤/819.gph", "has the group \"٨٦٤\", not three digits"),
            ("0/004/050.gph", "names index 4050, past level 0's largest 4049"),
            ("1/064/800.gph", "names index 64800, past level 1's largest 64799"),
        ]
        for (path, reason) in cases {
            XCTAssertThrowsError(try GraphTileID.parse(path: path), path) { error in
                XCTAssertEqual((error as? GraphTilePathError)?.reason, reason, path)
                XCTAssertEqual((error as? GraphTilePathError)?.description, "not a graph tile path \"\(path)\": it \(reason)")
            }
        }
    }
}
