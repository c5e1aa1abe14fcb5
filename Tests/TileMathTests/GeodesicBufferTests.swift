import Foundation
import XCTest
@testable import TileMath

/// Buffers against an independent oracle (`Fixtures/make_buffer_oracle.py`: pyproj azimuthal
/// equidistant + shapely buffer on the WGS84 ellipsoid): every tile the true buffer touches is
/// covered, and at most 2% more.
final class GeodesicBufferTests: XCTestCase {
    private struct Fixture: Decodable {
        struct Case: Decodable {
            let name: String
            let metres: Double
            let geometry: Geometry
            let zooms: [String: [[Int]]]
        }
        struct Geometry: Decodable {
            let type: String
            let coordinates: AnyCoordinates
        }
        let cases: [Case]
    }

    /// Positions nested to any depth, flattened per innermost list.
    private struct AnyCoordinates: Decodable {
        let lists: [[LngLat]]
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let point = try? container.decode([Double].self) {
                lists = [[LngLat(lng: point[0], lat: point[1])]]
            } else if let line = try? container.decode([[Double]].self) {
                lists = [line.map { LngLat(lng: $0[0], lat: $0[1]) }]
            } else {
                lists = try container.decode([[[Double]]].self).map { $0.map { LngLat(lng: $0[0], lat: $0[1]) } }
            }
        }
    }

    func testBuffersCoverEveryTileTheTrueBufferTouchesAndAtMostTwoPercentMore() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "buffer_covers", withExtension: "json", subdirectory: "Fixtures"))
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
        XCTAssertEqual(fixture.cases.count, 3)
        for c in fixture.cases {
            let lists = c.geometry.coordinates.lists
            let polygons = GeodesicBuffer.polygons(
                lines: c.geometry.type == "LineString" ? lists : [], points: c.geometry.type == "Point" ? lists[0] : [],
                polygons: c.geometry.type == "Polygon" ? [Polygon(rings: lists)] : [], metres: c.metres)
            var expectedTotal = 0, extra = 0
            for (zoomText, tiles) in c.zooms {
                let z = try XCTUnwrap(Int(zoomText))
                let expected = Set(tiles.map { TileID(z: z, x: $0[0], y: $0[1]) })
                let covered = Set(TileCover(.polygons(polygons), zoom: z))
                XCTAssertTrue(expected.isSubset(of: covered), "\(c.name) z\(z): missing \(expected.subtracting(covered))")
                expectedTotal += expected.count
                extra += covered.subtracting(expected).count
            }
            XCTAssertLessThanOrEqual(Double(extra), max(1, 0.02 * Double(expectedTotal)), "\(c.name): \(extra) extra of \(expectedTotal)")
        }
    }

    func testDistancesAndDestinationsOnTheSphere() {
        let paris = LngLat(lng: 2.3522, lat: 48.8566)
        for bearing in stride(from: 0.0, to: 2 * .pi, by: .pi / 7) {
            let there = GeodesicBuffer.destination(paris, 5_000, bearing: bearing)
            XCTAssertEqual(GeodesicBuffer.distance(paris, there), 5_000, accuracy: 0.01)
        }
        // A degree of latitude is about 111.2 km on the mean sphere.
        XCTAssertEqual(GeodesicBuffer.distance(LngLat(lng: 0, lat: 0), LngLat(lng: 0, lat: 1)), 111_195, accuracy: 1)
    }
}
