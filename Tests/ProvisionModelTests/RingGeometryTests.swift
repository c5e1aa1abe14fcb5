import Foundation
import ProvisionFoundation
import TileMath
import XCTest
@testable import ProvisionModel

final class RingGeometryTests: XCTestCase {
    private func ring(_ pairs: [(Double, Double)]) -> [LngLat] { pairs.map { LngLat(lng: $0.0, lat: $0.1) } }

    func testSelfIntersectionAgreesWithShapelyOnRandomRings() throws {
        let cases = try XCTUnwrap(JSONValue.parse(ringOracleFixture).arrayValue)
        XCTAssertEqual(cases.count, 300)
        var simpleCount = 0
        for (n, item) in cases.enumerated() {
            let positions = try XCTUnwrap(item["ring"]?.arrayValue).map { pair -> LngLat in
                LngLat(lng: pair.arrayValue?[0].doubleValue ?? .nan, lat: pair.arrayValue?[1].doubleValue ?? .nan)
            }
            let isSimple = try XCTUnwrap(item["simple"]) == .bool(true)
            if isSimple { simpleCount += 1 }
            XCTAssertEqual(RingGeometry.firstSelfIntersection(positions) == nil, isSimple, "case \(n)")
        }
        XCTAssertGreaterThan(simpleCount, 100)
        XCTAssertLessThan(simpleCount, 200)
    }

    func testHolesInsideOutsideAndAcrossTheirOuterRing() {
        let outer = [LngLat(lng: 0, lat: 0), LngLat(lng: 10, lat: 0), LngLat(lng: 10, lat: 10), LngLat(lng: 0, lat: 10),
                     LngLat(lng: 0, lat: 0)]
        func ring(_ points: [(Double, Double)]) -> [LngLat] { points.map { LngLat(lng: $0.0, lat: $0.1) } }
        let inside = ring([(2, 2), (2, 4), (4, 4), (4, 2), (2, 2)])
        let outside = ring([(20, 2), (20, 4), (24, 4), (24, 2), (20, 2)])
        let across = ring([(8, 2), (8, 4), (12, 4), (12, 2), (8, 2)])
        let touching = ring([(0, 2), (2, 4), (2, 2), (0, 2)])
        XCTAssertNil(RingGeometry.firstCrossing(outer, inside))
        XCTAssertEqual(RingGeometry.contains(outer, inside[0]), true)
        XCTAssertNil(RingGeometry.firstCrossing(outer, outside))
        XCTAssertEqual(RingGeometry.contains(outer, outside[0]), false)
        XCTAssertNotNil(RingGeometry.firstCrossing(outer, across))
        XCTAssertNil(RingGeometry.firstCrossing(outer, touching), "touching at a vertex is not crossing")
        XCTAssertNil(RingGeometry.contains(outer, touching[0]), "on the boundary")
        XCTAssertEqual(RingGeometry.contains(outer, touching[1]), true)
    }

    func testNamedRings() {
        let square = ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)])
        XCTAssertNil(RingGeometry.firstSelfIntersection(square))
        XCTAssertEqual(RingGeometry.area(square), 1)
        XCTAssertEqual(RingGeometry.area(square.reversed()), -1)

        let bowTie = ring([(0, 0), (1, 1), (1, 0), (0, 1), (0, 0)])
        XCTAssertEqual(RingGeometry.firstSelfIntersection(bowTie)?.0, 0)
        XCTAssertEqual(RingGeometry.firstSelfIntersection(bowTie)?.1, 2)

        // Repeated consecutive positions are zero-length edges, not crossings.
        let stutter = ring([(0, 0), (1, 0), (1, 0), (1, 1), (0, 1), (0, 1), (0, 0)])
        XCTAssertNil(RingGeometry.firstSelfIntersection(stutter))

        // Two non-adjacent edges on one line that overlap.
        let overlap = ring([(0, 0), (4, 0), (4, 1), (3, 1), (3, 0), (1, 0), (1, -1), (0, -1), (0, 0)])
        XCTAssertNotNil(RingGeometry.firstSelfIntersection(overlap))

        // A concave but simple "C" shape.
        let cShape = ring([(0, 0), (3, 0), (3, 1), (1, 1), (1, 2), (3, 2), (3, 3), (0, 3), (0, 0)])
        XCTAssertNil(RingGeometry.firstSelfIntersection(cShape))
        XCTAssertEqual(RingGeometry.area(cShape), 7)
    }

    func testALargeCircleIsSimpleAndAWigglyOneIsCaught() {
        let count = 20_000
        var circle = (0..<count).map { i -> LngLat in
            let angle = Double(i) / Double(count) * 2 * Double.pi
            return LngLat(lng: 10 * cos(angle), lat: 10 * sin(angle))
        }
        circle.append(circle[0])
        XCTAssertNil(RingGeometry.firstSelfIntersection(circle))

        // Swap two vertices far apart: the ring now crosses itself.
        circle.swapAt(100, 10_000)
        XCTAssertNotNil(RingGeometry.firstSelfIntersection(circle))
    }
}
