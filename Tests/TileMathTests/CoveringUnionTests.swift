import Foundation
import XCTest
@testable import TileMath

/// `CoveringUnion`: overlapping polygons become valid ones (rings that neither cross nor touch,
/// holes inside their shells) that hold every point of the input.
final class CoveringUnionTests: XCTestCase {
    private func square(_ west: Double, _ south: Double, _ side: Double) -> Polygon {
        Polygon(rings: [[LngLat(lng: west, lat: south), LngLat(lng: west + side, lat: south),
                         LngLat(lng: west + side, lat: south + side), LngLat(lng: west, lat: south + side),
                         LngLat(lng: west, lat: south)]])
    }

    /// A cell of about 1/100 of 0.01°.
    private let cell = 0.01 / 360 / 100

    /// Whether `point` is inside `polygon` (even-odd over its rings), compared in Web Mercator.
    private func contains(_ polygon: Polygon, _ point: LngLat) -> Bool {
        let p = CoveringUnion.mercator(point)
        var inside = false
        for ring in polygon.rings.map({ $0.map(CoveringUnion.mercator) }) {
            for (a, b) in zip(ring, ring.dropFirst()) where (a.y > p.y) != (b.y > p.y) {
                if p.x < a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y) { inside.toggle() }
            }
        }
        return inside
    }

    /// Fails when two edges of the rings (of all polygons) share any point, adjacent edges of a
    /// ring at their common vertex aside.
    private func assertNoEdgesMeet(_ polygons: [Polygon], file: StaticString = #filePath, line: UInt = #line) {
        var edges: [(ring: Int, index: Int, count: Int, a: LngLat, b: LngLat)] = []
        var ringNumber = 0
        for polygon in polygons {
            for ring in polygon.rings {
                XCTAssertEqual(ring.first, ring.last, "closed", file: file, line: line)
                for k in 0..<(ring.count - 1) { edges.append((ringNumber, k, ring.count - 1, ring[k], ring[k + 1])) }
                ringNumber += 1
            }
        }
        func orientation(_ a: LngLat, _ b: LngLat, _ c: LngLat) -> Double {
            (b.lng - a.lng) * (c.lat - a.lat) - (b.lat - a.lat) * (c.lng - a.lng)
        }
        func onSegment(_ a: LngLat, _ b: LngLat, _ p: LngLat) -> Bool {
            orientation(a, b, p) == 0 && min(a.lng, b.lng) <= p.lng && p.lng <= max(a.lng, b.lng)
                && min(a.lat, b.lat) <= p.lat && p.lat <= max(a.lat, b.lat)
        }
        for i in 0..<edges.count {
            for j in (i + 1)..<edges.count {
                let (e, f) = (edges[i], edges[j])
                if e.ring == f.ring && (f.index == e.index + 1 || (e.index == 0 && f.index == e.count - 1)) { continue }
                let d1 = orientation(f.a, f.b, e.a), d2 = orientation(f.a, f.b, e.b)
                let d3 = orientation(e.a, e.b, f.a), d4 = orientation(e.a, e.b, f.b)
                let crosses = ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
                let touches = onSegment(f.a, f.b, e.a) || onSegment(f.a, f.b, e.b) || onSegment(e.a, e.b, f.a)
                    || onSegment(e.a, e.b, f.b)
                if crosses || touches {
                    return XCTFail("ring \(e.ring) edge \(e.index) meets ring \(f.ring) edge \(f.index)", file: file, line: line)
                }
            }
        }
    }

    private func signedArea(_ ring: [LngLat]) -> Double {
        zip(ring, ring.dropFirst()).reduce(0) { $0 + $1.0.lng * $1.1.lat - $1.1.lng * $1.0.lat } / 2
    }

    func testOverlappingSquaresBecomeOneValidPolygonHoldingBoth() {
        let input = [square(2.30, 48.85, 0.01), square(2.305, 48.855, 0.01)]
        let union = CoveringUnion.polygons(input, cell: cell)
        XCTAssertEqual(union.count, 1)
        XCTAssertEqual(union.first?.rings.count, 1)
        assertNoEdgesMeet(union)
        XCTAssertGreaterThan(signedArea(union[0].rings[0]), 0, "shells counter-clockwise")
        for polygon in input {
            for corner in polygon.rings[0] { XCTAssertTrue(contains(union[0], corner), "\(corner)") }
            // Points along every edge, a hair inside.
            for (a, b) in zip(polygon.rings[0], polygon.rings[0].dropFirst()) {
                for k in 0...50 {
                    let t = Double(k) / 50
                    XCTAssertTrue(contains(union[0], LngLat(lng: a.lng + (b.lng - a.lng) * t, lat: a.lat + (b.lat - a.lat) * t)))
                }
            }
        }
        // Outward only, and by less than two cells.
        XCTAssertFalse(contains(union[0], LngLat(lng: 2.2999, lat: 48.8550)))
        XCTAssertEqual(union, CoveringUnion.polygons(input, cell: cell), "deterministic")
    }

    func testSquaresMeetingAtACornerGetRingsThatDoNotTouch() {
        let union = CoveringUnion.polygons([square(2.30, 48.85, 0.01), square(2.31, 48.86, 0.01)], cell: cell)
        assertNoEdgesMeet(union)
        for corner in [LngLat(lng: 2.30, lat: 48.85), LngLat(lng: 2.32, lat: 48.87), LngLat(lng: 2.31, lat: 48.86)] {
            XCTAssertTrue(union.contains { contains($0, corner) }, "\(corner)")
        }
    }

    func testAFrameBecomesAShellWithAHole() {
        // Four bars around an empty middle.
        let bars = [Polygon(rings: [[LngLat(lng: 2.30, lat: 48.85), LngLat(lng: 2.34, lat: 48.85), LngLat(lng: 2.34, lat: 48.851),
                                     LngLat(lng: 2.30, lat: 48.851), LngLat(lng: 2.30, lat: 48.85)]]),
                    Polygon(rings: [[LngLat(lng: 2.30, lat: 48.879), LngLat(lng: 2.34, lat: 48.879), LngLat(lng: 2.34, lat: 48.88),
                                     LngLat(lng: 2.30, lat: 48.88), LngLat(lng: 2.30, lat: 48.879)]]),
                    Polygon(rings: [[LngLat(lng: 2.30, lat: 48.85), LngLat(lng: 2.301, lat: 48.85), LngLat(lng: 2.301, lat: 48.88),
                                     LngLat(lng: 2.30, lat: 48.88), LngLat(lng: 2.30, lat: 48.85)]]),
                    Polygon(rings: [[LngLat(lng: 2.339, lat: 48.85), LngLat(lng: 2.34, lat: 48.85), LngLat(lng: 2.34, lat: 48.88),
                                     LngLat(lng: 2.339, lat: 48.88), LngLat(lng: 2.339, lat: 48.85)]])]
        let union = CoveringUnion.polygons(bars, cell: cell)
        XCTAssertEqual(union.count, 1)
        XCTAssertEqual(union.first?.rings.count, 2, "the middle is a hole")
        assertNoEdgesMeet(union)
        XCTAssertGreaterThan(signedArea(union[0].rings[0]), 0, "shell counter-clockwise")
        XCTAssertLessThan(signedArea(union[0].rings[1]), 0, "hole clockwise")
        XCTAssertFalse(contains(union[0], LngLat(lng: 2.32, lat: 48.865)), "the middle stays out")
        XCTAssertTrue(contains(union[0], LngLat(lng: 2.3005, lat: 48.865)))
    }

    func testTheGridGrowsWithTheExtentSoCellsStayBounded() {
        let union = CoveringUnion.polygons([square(-10, -10, 20), square(5, 5, 10)], cell: cell, maxCells: 256)
        XCTAssertEqual(union.count, 1)
        assertNoEdgesMeet(union)
        XCTAssertLessThan(union[0].rings[0].count, 64, "a coarse grid, a few vertices")
        for corner in [LngLat(lng: -10, lat: -10), LngLat(lng: 15, lat: 15)] { XCTAssertTrue(contains(union[0], corner)) }
    }
}
