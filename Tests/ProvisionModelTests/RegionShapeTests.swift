import Foundation
import ProvisionModel
import TileMath
import XCTest

/// Regions of every shape the job file accepts, as the loader turns them into areas to cover.
final class RegionShapeTests: XCTestCase {
    private func area(_ region: String) throws -> RegionArea {
        let text = """
            {"version": 1, "name": "t", "stylePacks": [],
             "regions": [{"id": "r", "name": "R", "zoom": [0, 6], "tilesets": ["https://t.example/{z}/{x}/{y}.pbf"], \(region)}]}
            """
        let result = JobLoader.parse(data: Data(text.utf8), baseDirectory: URL(fileURLWithPath: "/tmp"), displayName: "job.json")
        XCTAssertEqual(result.diagnostics.map(\.description), [])
        return try XCTUnwrap(result.job?.regions.first?.area)
    }

    func testABoxAcrossTheAntimeridianCoversBothSidesAndIsWrittenAsTwoHalves() throws {
        let crossing = try area(#""bbox": [170, -10, -170, 10]"#)
        guard case .geometry(let polygons, let geoJSON) = crossing else { return XCTFail("\(crossing)") }
        XCTAssertEqual(polygons.count, 2)
        XCTAssertEqual(geoJSON["type"], "MultiPolygon")
        let rings = geoJSON["coordinates"]?.arrayValue?.compactMap { $0.arrayValue?.first?.arrayValue } ?? []
        XCTAssertEqual(rings.map { $0.map { $0.arrayValue?.compactMap(\.doubleValue) ?? [] } },
                       [[[170, -10], [180, -10], [180, 10], [170, 10], [170, -10]],
                        [[-180, -10], [-170, -10], [-170, 10], [-180, 10], [-180, -10]]])
        let west = BoundingBox(west: 170, south: -10, east: 180, north: 10)
        let east = BoundingBox(west: -180, south: -10, east: -170, north: 10)
        for z in 0...8 {
            let expected = Set(TileCover(.bbox(west), zoom: z)).union(TileCover(.bbox(east), zoom: z))
            let covered = Set(TileCover(crossing.coverArea, zoom: z))
            XCTAssertEqual(covered, expected, "z\(z)")
            XCTAssertEqual(TileCover.count(crossing.coverArea, zoom: z), expected.count, "z\(z)")
            if z >= 3 { XCTAssertFalse(covered.contains { $0.x == (1 << z) / 2 }, "not the band between the two longitudes") }
        }
    }

    func testAnOrdinaryBoxStaysATilePyramid() throws {
        XCTAssertEqual(try area(#""bbox": [2.25, 48.8, 2.45, 48.9]"#), .bbox(BoundingBox(west: 2.25, south: 48.8, east: 2.45, north: 48.9)))
    }
}
