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

    func testPointsAndLinesAreCoveredAsPathsAndWrittenAsTheirGeometry() throws {
        let line = try area(#""geometry": {"type": "LineString", "coordinates": [[2.29, 48.85], [2.35, 48.86]]}"#)
        guard case .paths(let lines, let points, let geoJSON) = line else { return XCTFail("\(line)") }
        XCTAssertEqual(lines.count, 1)
        XCTAssertEqual(points, [])
        XCTAssertEqual(geoJSON["type"], "LineString")
        let collection = try area(#""geometry": {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [1, 2]}, {"type": "MultiPoint", "coordinates": [[3, 4]]}]}"#)
        guard case .paths(_, let collected, let collectedJSON) = collection else { return XCTFail("\(collection)") }
        XCTAssertEqual(collected, [LngLat(lng: 1, lat: 2), LngLat(lng: 3, lat: 4)])
        XCTAssertEqual(collectedJSON["type"], "MultiPoint", "a collection is flattened: MapLibre covers nothing for one")
    }

    func testABufferedShapeIsTheGrownMultiPolygon() throws {
        let corridor = try area(#""geometry": {"type": "LineString", "coordinates": [[2.29, 48.85], [2.35, 48.86]]}, "buffer": 500"#)
        guard case .geometry(let polygons, let geoJSON) = corridor else { return XCTFail("\(corridor)") }
        XCTAssertEqual(polygons.count, 1, "the parts of the corridor are united")
        XCTAssertEqual(polygons.first?.rings.count, 1)
        XCTAssertEqual(geoJSON["type"], "MultiPolygon")
        let line = TileCover(.paths(lines: [[LngLat(lng: 2.29, lat: 48.85), LngLat(lng: 2.35, lat: 48.86)]], points: []), zoom: 14)
        let grown = Set(TileCover(corridor.coverArea, zoom: 14))
        XCTAssertTrue(Set(line).isSubset(of: grown))
        XCTAssertGreaterThan(grown.count, line.count)
    }
}
