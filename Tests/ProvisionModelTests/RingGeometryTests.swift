import Foundation
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

    func testALargeCircleIsCheckedQuicklyAndAWigglyOneIsCaught() {
        let count = 20_000
        var circle = (0..<count).map { i -> LngLat in
            let angle = Double(i) / Double(count) * 2 * Double.pi
            return LngLat(lng: 10 * cos(angle), lat: 10 * sin(angle))
        }
        circle.append(circle[0])
        let start = Date()
        XCTAssertNil(RingGeometry.firstSelfIntersection(circle))
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)

        // Swap two vertices far apart: the ring now crosses itself.
        circle.swapAt(100, 10_000)
        XCTAssertNotNil(RingGeometry.firstSelfIntersection(circle))
    }
}
