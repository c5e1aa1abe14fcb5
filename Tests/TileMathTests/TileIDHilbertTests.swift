import Foundation
import TileMath
import XCTest

/// PMTiles tile ids against the `pmtiles` package (`Fixtures/make_pmtiles_ids.py`), and the
/// round trip over whole zooms.
final class TileIDHilbertTests: XCTestCase {
    func testIdsAgreeWithThePMTilesPackage() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "pmtiles_ids", withExtension: "json", subdirectory: "Fixtures"))
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [[UInt64]])
        XCTAssertGreaterThan(rows.count, 600)
        for row in rows {
            let tile = TileID(z: Int(row[0]), x: Int(row[1]), y: Int(row[2]))
            XCTAssertEqual(tile.pmtilesID, row[3], "\(tile)")
            XCTAssertEqual(TileID(pmtilesID: row[3]), tile, "id \(row[3])")
        }
    }

    func testEveryTileOfAZoomTakesEachIdOfItsRangeOnce() {
        for z in 0...6 {
            let first = TileID.firstPMTilesID(zoom: z)
            var seen = Set<UInt64>()
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) {
                    let tile = TileID(z: z, x: x, y: y)
                    let id = tile.pmtilesID!
                    XCTAssert(id >= first && id < TileID.firstPMTilesID(zoom: z + 1), "\(tile) → \(id)")
                    XCTAssertEqual(TileID(pmtilesID: id), tile)
                    seen.insert(id)
                }
            }
            XCTAssertEqual(seen.count, 1 << (2 * z))
        }
    }

    func testNeighboursOnTheCurveAreNeighboursOnTheMap() {
        // The Hilbert property: consecutive ids within a zoom are edge-adjacent tiles.
        let z = 7
        var previous = TileID(pmtilesID: TileID.firstPMTilesID(zoom: z))!
        for id in (TileID.firstPMTilesID(zoom: z) + 1)..<TileID.firstPMTilesID(zoom: z + 1) {
            let tile = TileID(pmtilesID: id)!
            XCTAssertEqual(abs(tile.x - previous.x) + abs(tile.y - previous.y), 1, "\(previous) → \(tile)")
            previous = tile
        }
    }

    func testTilesWithoutAnIdAreNil() {
        XCTAssertNil(TileID(z: 27, x: 0, y: 0).pmtilesID)
        XCTAssertNil(TileID(z: 3, x: 8, y: 0).pmtilesID)
        XCTAssertNil(TileID(z: -1, x: 0, y: 0).pmtilesID)
        XCTAssertNil(TileID(pmtilesID: TileID.firstPMTilesID(zoom: 27)))
        XCTAssertNotNil(TileID(pmtilesID: TileID.firstPMTilesID(zoom: 27) - 1))
    }
}
