import Foundation
import XCTest
@testable import TileMath

/// Lines and points: the tiles they pass through, checked against an independent oracle (each
/// candidate tile clipped against the segment, Liang–Barsky, with the half-open edge rule).
final class PathCoverTests: XCTestCase {
    typealias Point = (x: Double, y: Double)

    /// Whether the closed segment a–b meets the half-open square [x, x+1) × [y, y+1).
    static func oracleMeets(_ a: Point, _ b: Point, x: Int, y: Int) -> Bool {
        var t0 = 0.0, t1 = 1.0
        let dx = b.x - a.x, dy = b.y - a.y
        for (p, q) in [(-dx, a.x - Double(x)), (dx, Double(x + 1) - a.x), (-dy, a.y - Double(y)), (dy, Double(y + 1) - a.y)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
            }
        }
        guard t0 <= t1 else { return false }
        let p0 = (x: a.x + t0 * dx, y: a.y + t0 * dy), p1 = (x: a.x + t1 * dx, y: a.y + t1 * dy)
        if p0.x == Double(x + 1) && p1.x == Double(x + 1) { return false }
        if p0.y == Double(y + 1) && p1.y == Double(y + 1) { return false }
        return true
    }

    static func oracle(_ a: Point, _ b: Point) -> Set<[Int]> {
        var out = Set<[Int]>()
        for x in Int(floor(min(a.x, b.x))) - 1...Int(floor(max(a.x, b.x))) + 1 {
            for y in Int(floor(min(a.y, b.y))) - 1...Int(floor(max(a.y, b.y))) + 1 where oracleMeets(a, b, x: x, y: y) {
                out.insert([x, y])
            }
        }
        return out
    }

    static func cells(_ a: Point, _ b: Point) -> Set<[Int]> {
        Set(PathCover.segmentCells(a, b).flatMap { x, rows in rows.map { [x, $0] } })
    }

    func testNamedSegmentsOnBoundariesAndThroughCorners() {
        let cases: [(String, Point, Point)] = [
            ("inside one tile", (0.2, 0.2), (0.8, 0.7)),
            ("along a vertical boundary", (1, 0.5), (1, 2.5)),
            ("along a horizontal boundary", (0.5, 2), (2.5, 2)),
            ("through a corner, down-right", (0.5, 0.5), (1.5, 1.5)),
            ("through a corner, up-left", (1.5, 1.5), (0.5, 0.5)),
            ("through a corner, up-right", (0.5, 1.5), (1.5, 0.5)),
            ("through a corner, down-left", (1.5, 0.5), (0.5, 1.5)),
            ("ending on a boundary", (0.5, 0.5), (2, 0.5)),
            ("starting on a boundary, going west", (2, 0.5), (0.5, 0.5)),
            ("a corner point", (3, 3), (3, 3)),
            ("vertical, ending on a row boundary", (0.5, 0.5), (0.5, 2)),
            ("long diagonal", (0.1, 0.3), (7.9, 5.2)),
        ]
        for (name, a, b) in cases {
            XCTAssertEqual(Self.cells(a, b), Self.oracle(a, b), name)
        }
        XCTAssertEqual(Self.cells((1, 0.5), (1, 2.5)), [[1, 0], [1, 1], [1, 2]], "a line on x = 1 belongs to column 1")
        XCTAssertEqual(Self.cells((0.5, 0.5), (1.5, 1.5)), [[0, 0], [1, 1]], "through the corner: the two tiles it crosses")
    }

    func testRandomSegmentsAgreeWithTheOracle() {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<3000 {
            func coordinate() -> Double {
                // A third of the coordinates sit on a tile boundary or a half, to hit the edge rules.
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: return Double(Int.random(in: 0...8, using: &generator))
                case 1: return Double(Int.random(in: 0...16, using: &generator)) / 2
                default: return Double.random(in: 0...8, using: &generator)
                }
            }
            let a = (x: coordinate(), y: coordinate()), b = (x: coordinate(), y: coordinate())
            XCTAssertEqual(Self.cells(a, b), Self.oracle(a, b), "\(a) – \(b)")
        }
    }

    func testCoversOfLinesAndPointsAtEveryZoom() {
        let route = [LngLat(lng: 2.2945, lat: 48.8584), LngLat(lng: 2.3499, lat: 48.8530), LngLat(lng: 2.3522, lat: 48.8566)]
        let tower = LngLat(lng: 2.2945, lat: 48.8584)
        for z in 0...16 {
            let cover = TileCover(.paths(lines: [route], points: [tower]), zoom: z)
            var expected = Set<TileID>()
            let projected = route.map { (x: WebMercator.tileX(lng: $0.lng, zoom: z), y: WebMercator.tileY(lat: $0.lat, zoom: z)) }
            for (a, b) in zip(projected, projected.dropFirst()) {
                for cell in Self.oracle(a, b) { expected.insert(TileID(z: z, x: cell[0], y: cell[1])) }
            }
            let tiles = Array(cover)
            XCTAssertEqual(Set(tiles), expected, "z\(z)")
            XCTAssertEqual(tiles, tiles.sorted(), "tiles come in TileID order")
            XCTAssertEqual(cover.count, expected.count)
            let pointTile = TileID(z: z, x: Int(WebMercator.tileX(lng: tower.lng, zoom: z)), y: Int(WebMercator.tileY(lat: tower.lat, zoom: z)))
            XCTAssertTrue(cover.contains(pointTile))
            XCTAssertEqual(Array(TileCover(.paths(lines: [], points: [tower]), zoom: z)), [pointTile])
        }
        XCTAssertEqual(Array(TileCover(.paths(lines: [[LngLat(lng: 180, lat: 0), LngLat(lng: 179.9, lat: 0)]], points: []), zoom: 2)),
                       [TileID(z: 2, x: 3, y: 2)], "longitude 180 belongs to the last column")
    }
}

/// A small deterministic generator (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
