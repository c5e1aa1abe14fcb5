import Foundation
import XCTest
@testable import TileMath

final class TileBoundsTests: XCTestCase {
    private func bounds(_ w: Double, _ s: Double, _ e: Double, _ n: Double) -> TileBounds {
        guard let b = TileBounds(west: w, south: s, east: e, north: n) else {
            XCTFail("bounds [\(w), \(s), \(e), \(n)] refused")
            return TileBounds(west: -180, south: -90, east: 180, north: 90)!
        }
        return b
    }

    /// The fractional tile column and row by the textbook formulas, independent of `WebMercator`.
    private func column(_ lng: Double, _ z: Int) -> Double { (lng + 180) / 360 * Double(1 << z) }
    private func row(_ lat: Double, _ z: Int) -> Double {
        let phi = lat * .pi / 180
        return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * Double(1 << z)
    }

    func testRectIsMapLibresInclusiveTileRange() {
        // Edges strictly inside tiles: the tiles holding the corners, inclusive.
        let b = bounds(2.25, 48.8, 2.42, 48.9)
        for z in [1, 5, 10, 14] {
            let rect = b.rect(zoom: z)
            XCTAssertEqual(rect.columns, Int(floor(column(2.25, z)))..<Int(floor(column(2.42, z))) + 1, "z\(z)")
            XCTAssertEqual(rect.rows, Int(floor(row(48.9, z)))..<Int(floor(row(48.8, z))) + 1, "z\(z)")
        }
        // An east edge on a tile boundary takes in the tile beyond it (floor, not ceil − 1): at
        // z1, east = 0° is the boundary between columns 0 and 1.
        XCTAssertEqual(bounds(-10, 10, 0, 20).rect(zoom: 1).columns, 0..<2)
        XCTAssertEqual(bounds(-10, 0, 10, 20).rect(zoom: 1).rows, 0..<2)
        // The world's edges stay in the world; polar latitudes clamp into the first and last rows.
        XCTAssertEqual(bounds(-180, -90, 180, 90).rect(zoom: 3), TileRect(columns: 0..<8, rows: 0..<8))
        // z0 is always in range, whatever the bounds.
        XCTAssertEqual(bounds(10, -89, 11, -88).rect(zoom: 0), TileRect(columns: 0..<1, rows: 0..<1))
        XCTAssertTrue(bounds(10, 10, 11, 11).contains(TileID(z: 0, x: 0, y: 0)))
        XCTAssertFalse(bounds(10, 10, 11, 11).contains(TileID(z: 4, x: 0, y: 0)))
    }

    func testMapLibreRefusalsAndClamps() {
        XCTAssertNil(TileBounds(west: 170, south: -10, east: -170, north: 10))  // antimeridian
        XCTAssertNil(TileBounds(west: 0, south: 10, east: 1, north: 10))
        XCTAssertNil(TileBounds(west: 0, south: 91, east: 1, north: 95))  // both clamp to 90
        XCTAssertNil(TileBounds(west: 190, south: 0, east: 200, north: 10))  // nothing left inside the world
        XCTAssertNil(TileBounds(west: .nan, south: 0, east: 1, north: 1))
        let clamped = TileBounds(west: -200, south: -95, east: 200, north: 95)
        XCTAssertEqual(clamped, TileBounds(west: -180, south: -90, east: 180, north: 90))
        XCTAssertEqual(clamped?.isWorld, true)
        XCTAssertEqual(TileBounds(west: -180, south: -85, east: 180, north: 85)?.isWorld, false)
    }

    func testBBoxCoverClippedToBoundsIsTheIntersectionAndStaysArithmetic() {
        let area = CoverCheck.bbox(2.0, 48.5, 2.8, 49.1)
        let b = bounds(2.25, 48.8, 2.42, 48.9)
        for z in 0...14 {
            let clipped = TileCover(area, zoom: z, bounds: b)
            let expected = TileCover(area, zoom: z).filter { b.rect(zoom: z).contains($0) }
            XCTAssertEqual(CoverCheck.enumerate(clipped), expected, "z\(z)")
            if case .rectangle = clipped.plan {} else if !expected.isEmpty { XCTFail("z\(z): not a rectangle") }
        }
        // Bounds wholly outside the area: nothing.
        XCTAssertEqual(TileCover.count(area, zoom: 12, bounds: bounds(100, 10, 101, 11)), 0)
        // A planet at z22 clipped to a city is counted by arithmetic.
        let planet = TileCover(.bbox(.world), zoom: 22, bounds: b)
        let rect = b.rect(zoom: 22)
        XCTAssertEqual(planet.count, rect.count)
    }

    func testAntimeridianBBoxCoverIsClippedOnEachSide() {
        let area = CoverCheck.bbox(170, -10, -170, 10)
        let b = bounds(-180, -5, 175, 5)
        for z in 2...6 {
            let expected = TileCover(area, zoom: z).filter { b.rect(zoom: z).contains($0) }
            XCTAssertEqual(CoverCheck.enumerate(TileCover(area, zoom: z, bounds: b)), expected, "z\(z)")
        }
    }

    func testPolygonCoverClippedToBounds() {
        let triangle = CoverCheck.polygon([[(2.0, 48.5), (2.8, 48.6), (2.3, 49.2), (2.0, 48.5)]])
        let area = CoverArea.polygons([triangle])
        let b = bounds(2.25, 48.7, 2.9, 48.95)
        for z in [0, 3, 8, 10, 12] {
            let clipped = TileCover(area, zoom: z, bounds: b)
            let expected = TileCover(area, zoom: z).filter { b.rect(zoom: z).contains($0) }
            XCTAssertEqual(CoverCheck.enumerate(clipped), expected, "z\(z)")
            if z <= 8 { CoverCheck.checkContainsEverywhere(clipped) }
        }
        XCTAssertEqual(TileCover.count(area, zoom: 10, bounds: bounds(100, 10, 101, 11)), 0)
    }
}
