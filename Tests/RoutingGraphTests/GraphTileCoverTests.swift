import ProvisionTestSupport
import RoutingGraph
import TileMath
import XCTest

/// The cover of an area on each level: exact (a cell is in iff the closed area has a point in the
/// half-open cell), checked against shapely, with arithmetic counts for huge areas.
final class GraphTileCoverTests: XCTestCase {
    func level(_ number: Int) throws -> GraphLevel { try XCTUnwrap(GraphLevel(number)) }

    func indexes(_ cover: GraphTileCover) -> [Int] { cover.map(\.index) }

    func testTownBoundingBoxMeetsThreeByTwoLevelTwoTilesAndOneTileAbove() throws {
        let town = CoverArea.bbox(BoundingBox(west: 5.02, south: 50.02, east: 5.73, north: 50.48))
        XCTAssertEqual(indexes(GraphTileCover(town, level: try level(0))), [3_196])
        XCTAssertEqual(indexes(GraphTileCover(town, level: try level(1))), [50_585])
        XCTAssertEqual(indexes(GraphTileCover(town, level: try level(2))), [807_140, 807_141, 807_142, 808_580, 808_581, 808_582])
        XCTAssertEqual(GraphTileCover(town, level: try level(2)).count, 6)
        XCTAssertEqual(GraphTileCover.covers(town).map(\.count), [1, 1, 6])
    }

    /// A box edge on a cell boundary: the east and north edges' points lie in the cells beyond, so
    /// those come in; the cells west and south of the box, which its edges only touch, do not.
    func testBoundingBoxEdgesOnCellBoundaries() throws {
        let two = try level(2)
        let box = GraphTileCover(.bbox(BoundingBox(west: 5.0, south: 50.0, east: 5.25, north: 50.25)), level: two)
        XCTAssertEqual(indexes(box), [807_140, 807_141, 808_580, 808_581])
        XCTAssertFalse(box.contains(two.tile(lng: 4.9, lat: 50.1)))
        XCTAssertFalse(box.contains(two.tile(lng: 5.1, lat: 49.9)))
        // A zero-size box is its point's cell.
        XCTAssertEqual(indexes(GraphTileCover(.bbox(BoundingBox(west: 5.25, south: 50.25, east: 5.25, north: 50.25)), level: two)),
                       [808_581])
        // South and north in either order.
        XCTAssertEqual(indexes(GraphTileCover(.bbox(BoundingBox(west: 5.0, south: 50.25, east: 5.25, north: 50.0)), level: two)),
                       indexes(box))
    }

    func testBoundingBoxAcrossTheAntimeridian() throws {
        let two = try level(2)
        let cover = GraphTileCover(.bbox(BoundingBox(west: 179.6, south: 10.1, east: -179.6, north: 10.2)), level: two)
        let row = two.row(lat: 10.1)
        XCTAssertEqual(indexes(cover), [row * 1_440, row * 1_440 + 1, row * 1_440 + 1_438, row * 1_440 + 1_439])
        XCTAssertEqual(cover.count, 4)
        // West and east in one column, west east of east: all the way round.
        let zero = try level(0)
        XCTAssertEqual(GraphTileCover(.bbox(BoundingBox(west: 10.5, south: 1, east: 10.2, north: 1.5)), level: zero).count, 90)
        XCTAssertEqual(GraphTileCover(.bbox(BoundingBox(west: 10.2, south: 1, east: 10.5, north: 1.5)), level: zero).count, 1)
    }

    /// Counting the world or a continent at level 2 is arithmetic or row sums, and agrees with
    /// enumeration where enumerating is affordable.
    func testCountsWithoutEnumeratingHugeAreas() throws {
        let two = try level(2)
        XCTAssertEqual(GraphTileCover(.bbox(.world), level: two).count, 1_036_800)
        XCTAssertEqual(GraphTileCover(.bbox(.world), level: try level(0)).count, 4_050)
        let africa = Polygon(rings: [[LngLat(lng: -17, lat: 15), LngLat(lng: 10, lat: 37), LngLat(lng: 33, lat: 31),
                                      LngLat(lng: 51, lat: 12), LngLat(lng: 40, lat: -15), LngLat(lng: 20, lat: -35),
                                      LngLat(lng: 12, lat: -5), LngLat(lng: -17, lat: 15)]])
        let cover = GraphTileCover(.polygons([africa]), level: two)
        var enumerated = 0
        var previous = -1
        for tile in cover {
            XCTAssertGreaterThan(tile.index, previous)
            previous = tile.index
            enumerated += 1
        }
        XCTAssertEqual(cover.count, enumerated)
        XCTAssertGreaterThan(cover.count, 30_000)
    }

    func testLinesAndPointsMeetTheCellsTheyPassThrough() throws {
        let two = try level(2)
        let line = GraphTileCover(.paths(lines: [[LngLat(lng: 5.1, lat: 50.1), LngLat(lng: 5.6, lat: 50.1)]], points: []), level: two)
        XCTAssertEqual(indexes(line), [807_140, 807_141, 807_142])
        // A line ending on a boundary reaches the cell beyond; a point on a corner is its cell.
        let ending = GraphTileCover(.paths(lines: [[LngLat(lng: 5.1, lat: 50.1), LngLat(lng: 5.25, lat: 50.1)]],
                                           points: [LngLat(lng: 5.5, lat: 50.25)]), level: two)
        XCTAssertEqual(indexes(ending), [807_140, 807_141, 808_582])
        // A diagonal through a corner meets the two cells it enters and the corner's own cell.
        let diagonal = GraphTileCover(.paths(lines: [[LngLat(lng: 5.1, lat: 50.1), LngLat(lng: 5.4, lat: 50.4)]], points: []),
                                      level: two)
        XCTAssertEqual(indexes(diagonal), [807_140, 808_581])
    }

    /// Hand-made edge cases (vertices and edges on cell boundaries, holes, touching polygons, thin
    /// slivers) and seeded random polygons, on levels 0, 1 and 2: our cover equals shapely's answer
    /// with half-open cells; shapely's closed `intersects` (what `valhalla_build_extract -g` uses)
    /// differs only by cells the area touches on their east or north edge.
    func testPolygonCoversEqualShapelyWithHalfOpenCells() throws {
        var cases: [[[[LngLat]]]] = [
            [[ring([(5.02, 50.02), (5.73, 50.02), (5.73, 50.48), (5.02, 50.48)])]],
            [[ring([(5.0, 50.0), (5.5, 50.0), (5.0, 50.5)])]],
            [[ring([(5.25, 50.0), (5.5, 50.25), (5.25, 50.5), (5.0, 50.25)])]],
            [[ring([(4.9, 49.9), (5.9, 49.9), (5.9, 50.9), (4.9, 50.9)]), ring([(5.1, 50.1), (5.6, 50.1), (5.6, 50.6), (5.1, 50.6)])]],
            [[ring([(5.0, 50.0), (5.25, 50.0), (5.25, 50.25), (5.0, 50.25)])], [ring([(5.25, 50.0), (5.5, 50.0), (5.5, 50.25)])]],
            [[ring([(5.0, 50.0), (5.75, 50.0), (5.75, 50.0001)])]],
            [[ring([(5.1, 50.1), (5.25, 50.1), (5.25, 50.2), (5.1, 50.2)])]],
            [[ring([(-180, -90), (-176, -90), (-176, -86), (-180, -86)])]],
            [[ring([(176, 86), (180, 86), (180, 90), (176, 90)])]],
            [[ring([(3.0, 49.0), (8.0, 49.0), (8.0, 53.0), (3.0, 53.0)]), ring([(4.0, 50.0), (4.5, 50.5), (4.0, 51.0)])]],
        ]
        var random = SeededRandom(seed: 22)
        for _ in 0..<40 {
            let centre = (4.0 + random.unit() * 3, 49.0 + random.unit() * 3)
            let count = 3 + Int(random.unit() * 6)
            var points: [(Double, Double)] = []
            for k in 0..<count {
                let angle = (Double(k) + random.unit() * 0.5) / Double(count) * 2 * .pi
                let radius = 0.3 + random.unit() * 1.2
                let snap = { (value: Double) in (value * 16).rounded() / 16 }
                points.append((snap(centre.0 + radius * cos(angle)), snap(centre.1 + radius * sin(angle))))
            }
            cases.append([[ring(points)]])
        }
        for number in 0...2 {
            let level = try level(number)
            let json = cases.map { polygons in polygons.map { rings in rings.map { ring in ring.map { [$0.lng, $0.lat] } } } }
            let oracle = try ValhallaFixture.coverOracle(tileSize: level.tileSize, cases: json)
            for (i, polygons) in cases.enumerated() {
                XCTAssertTrue(oracle[i].isValid, "case \(i) is not a valid polygon")
                let cover = GraphTileCover(.polygons(polygons.map { Polygon(rings: $0) }), level: level)
                XCTAssertEqual(indexes(cover), oracle[i].halfOpen, "case \(i) on \(level)")
                XCTAssertEqual(cover.count, oracle[i].halfOpen.count)
                XCTAssertTrue(Set(oracle[i].halfOpen).isSubset(of: oracle[i].closed), "case \(i) on \(level)")
                for tile in cover { XCTAssertTrue(cover.contains(tile)) }
            }
        }
    }

    func ring(_ points: [(Double, Double)]) -> [LngLat] { points.map { LngLat(lng: $0.0, lat: $0.1) } }
}

/// A small deterministic generator (SplitMix64) for seeded random cases.
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
