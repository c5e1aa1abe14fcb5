import Foundation
import XCTest
@testable import TileMath

/// Compares covers tile for tile with the oracles written by `Fixtures/make_covers.py`:
/// mercantile for bounding boxes, an exact shapely interior test for polygons.
final class OracleFixtureTests: XCTestCase {
    private struct FixtureFile<Case: Decodable>: Decodable {
        let oracle: String
        let cases: [Case]
    }

    private struct BoxCase: Decodable {
        let name: String
        let bbox: [Double]
        /// Per zoom, columns as `[x, y0, y1, y0, y1, …]` with half-open row ranges.
        let zooms: [String: [[Int]]]
    }

    private struct PolygonCase: Decodable {
        let name: String
        let polygons: [[[[Double]]]]
        let zooms: [String: [[Int]]]
    }

    private func load<Case: Decodable>(_ name: String, as type: Case.Type) throws -> FixtureFile<Case> {
        let url = try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"),
                                "missing fixture \(name).json")
        return try JSONDecoder().decode(FixtureFile<Case>.self, from: Data(contentsOf: url))
    }

    private func encoded(_ cover: TileCover) -> [[Int]] {
        cover.columns.map { column in [column.x] + column.rows.flatMap { [$0.lowerBound, $0.upperBound] } }
    }

    private func tileCount(_ column: [Int]) -> Int {
        var total = 0
        for i in stride(from: 1, to: column.count - 1, by: 2) {
            total += column[i + 1] - column[i]
        }
        return total
    }

    private func compare(_ area: CoverArea, name: String, zooms: [String: [[Int]]]) {
        XCTAssertFalse(zooms.isEmpty, name)
        for (key, expected) in zooms.sorted(by: { Int($0.key) ?? 0 < Int($1.key) ?? 0 }) {
            guard let zoom = Int(key) else { return XCTFail("bad zoom key \(key) in \(name)") }
            let cover = TileCover(area, zoom: zoom)
            let actual = encoded(cover)
            if actual != expected {
                var expectedTiles = Set<TileID>()
                for column in expected {
                    for i in stride(from: 1, to: column.count - 1, by: 2) {
                        for y in column[i]..<column[i + 1] {
                            expectedTiles.insert(TileID(z: zoom, x: column[0], y: y))
                        }
                    }
                }
                let actualTiles = Set(cover)
                XCTFail("""
                    \(name) z\(zoom): missing \(expectedTiles.subtracting(actualTiles).sorted().prefix(5)), \
                    extra \(actualTiles.subtracting(expectedTiles).sorted().prefix(5))
                    """)
            }
            let tiles = CoverCheck.enumerate(cover)
            XCTAssertEqual(tiles.count, expected.map(tileCount).reduce(0, +), "\(name) z\(zoom)")
        }
    }

    func testBoundingBoxCoversMatchMercantileTileForTile() throws {
        let file = try load("bbox_covers", as: BoxCase.self)
        XCTAssertTrue(file.oracle.hasPrefix("mercantile"))
        XCTAssertGreaterThanOrEqual(file.cases.count, 3)
        for fixture in file.cases {
            let box = fixture.bbox
            XCTAssertEqual(box.count, 4)
            compare(.bbox(BoundingBox(west: box[0], south: box[1], east: box[2], north: box[3])),
                    name: fixture.name, zooms: fixture.zooms)
        }
        let names = Set(file.cases.map(\.name))
        XCTAssertTrue(names.isSuperset(of: ["new-york", "london", "paris"]))
        XCTAssertEqual(file.cases.first { $0.name == "new-york" }?.zooms.count, 17)
    }

    func testPolygonCoversMatchTheExactInteriorOracleTileForTile() throws {
        let file = try load("polygon_covers", as: PolygonCase.self)
        XCTAssertGreaterThanOrEqual(file.cases.count, 8)
        for fixture in file.cases {
            let polygons = fixture.polygons.map { rings in
                Polygon(rings: rings.map { ring in ring.map { LngLat(lng: $0[0], lat: $0[1]) } })
            }
            compare(.polygons(polygons), name: fixture.name, zooms: fixture.zooms)
        }
    }
}
