import XCTest
@testable import TileMath

final class TileCoverBoundingBoxTests: XCTestCase {
    private let world = CoverCheck.bbox(-180, -90, 180, 90)
    // MapLibre's test/util/tile_cover.test.cpp: LatLngBounds::hull({37.6609, -122.5744}, {37.8271, -122.3204}).
    private let sanFrancisco = CoverCheck.bbox(-122.5744, 37.6609, -122.3204, 37.8271)

    func testWorldIsOneTileAtZ0AndFourAtZ1() {
        XCTAssertEqual(CoverCheck.enumerate(TileCover(world, zoom: 0)), [TileID(z: 0, x: 0, y: 0)])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(world, zoom: 1)),
                       CoverCheck.tiles(1, [(0, 0), (0, 1), (1, 0), (1, 1)]))
        XCTAssertEqual(TileCover.count(world, zoom: 10), 1 << 20)
    }

    func testSanFranciscoMatchesMapLibreUpstreamVectors() {
        XCTAssertEqual(CoverCheck.enumerate(TileCover(sanFrancisco, zoom: 0)), [TileID(z: 0, x: 0, y: 0)])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(sanFrancisco, zoom: 10)),
                       CoverCheck.tiles(10, [(163, 395), (163, 396), (164, 395), (164, 396)]))
        // TileCount.SanFranciscoZ22 (the bounds, not the polygon).
        XCTAssertEqual(TileCover.count(sanFrancisco, zoom: 22), 7_254_450)
        // TileCount.SanFranciscoWrappedZ10: the same box 360° east.
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(237.4256, 37.6609, 237.6796, 37.8271), zoom: 10), 4)
    }

    func testBoundsWestOfTheAntimeridianMatchMapLibreCounts() {
        // TileCount.BoundsCrossingAntimeridian: hull({-20.9615, -214.309}, {19.477, -155.830}).
        let area = CoverCheck.bbox(-214.309, -20.9615, -155.830, 19.477)
        XCTAssertEqual(TileCover.count(area, zoom: 0), 1)
        XCTAssertEqual(TileCover.count(area, zoom: 3), 4)
        XCTAssertEqual(TileCover.count(area, zoom: 4), 8)
        XCTAssertEqual(CoverCheck.enumerate(TileCover(area, zoom: 3)),
                       CoverCheck.tiles(3, [(0, 3), (0, 4), (7, 3), (7, 4)]))
    }

    func testEastAndSouthEdgesOnTileBoundariesDoNotPullInTheNeighbour() {
        // At z2, lng −90 and 0 are columns 1.0 and 2.0 exactly; lat 0 is row 2.0 exactly.
        let cover = TileCover(CoverCheck.bbox(-80, 0, 0, 10), zoom: 2)
        XCTAssertEqual(CoverCheck.enumerate(cover), CoverCheck.tiles(2, [(1, 1)]))
        XCTAssertFalse(cover.contains(TileID(z: 2, x: 2, y: 1)))
        XCTAssertFalse(cover.contains(TileID(z: 2, x: 1, y: 2)))
    }

    func testWestAndNorthEdgesOnTileBoundariesIncludeTheInsideTile() {
        let cover = TileCover(CoverCheck.bbox(-90, -10, -80, 0), zoom: 2)
        XCTAssertEqual(CoverCheck.enumerate(cover), CoverCheck.tiles(2, [(1, 2)]))
        // The exact tile bounds give exactly that tile, at every zoom.
        for zoom in 1...16 {
            let tile = TileID(z: zoom, x: (1 << zoom) / 2 - 1, y: (1 << zoom) / 2)
            let box = tile.bounds
            XCTAssertEqual(Array(TileCover(.bbox(box), zoom: zoom)).first, tile)
            XCTAssertEqual(TileCover.count(.bbox(box), zoom: zoom), 1, "z\(zoom)")
        }
    }

    func testZeroWidthAndPointBoxesStillGiveTheirTile() {
        XCTAssertEqual(CoverCheck.enumerate(TileCover(CoverCheck.bbox(10.1, 5, 10.1, 5), zoom: 4)),
                       [WebMercator.tile(containing: LngLat(lng: 10.1, lat: 5), zoom: 4)])
        // On a boundary, the tile east and south of the point.
        XCTAssertEqual(CoverCheck.enumerate(TileCover(CoverCheck.bbox(0, 0, 0, 0), zoom: 1)),
                       [TileID(z: 1, x: 1, y: 1)])
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(10.1, -40, 10.1, 40), zoom: 3), 2)
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(-40, 10, 40, 10), zoom: 3), 2)
    }

    func testPolesAreClampedAndSouthNorthMayBeSwapped() {
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(-180, 85.06, 180, 90), zoom: 2), 4)
        XCTAssertEqual(Array(TileCover(CoverCheck.bbox(-180, 85.06, 180, 90), zoom: 2)).map(\.y), [0, 0, 0, 0])
        XCTAssertEqual(Array(TileCover(CoverCheck.bbox(-180, -90, -170, -89), zoom: 3)), [TileID(z: 3, x: 0, y: 7)])
        XCTAssertEqual(Array(TileCover(CoverCheck.bbox(1, 20, 2, 10), zoom: 6)),
                       Array(TileCover(CoverCheck.bbox(1, 10, 2, 20), zoom: 6)))
    }

    func testWestGreaterThanEastCrossesTheAntimeridianInSortedOrder() {
        let cover = TileCover(CoverCheck.bbox(170, -10, -170, 10), zoom: 3)
        XCTAssertEqual(CoverCheck.enumerate(cover), CoverCheck.tiles(3, [(0, 3), (0, 4), (7, 3), (7, 4)]))
        CoverCheck.checkContainsEverywhere(cover)
        // The same box written with an eastern longitude beyond 180°.
        XCTAssertEqual(Array(TileCover(CoverCheck.bbox(170, -10, 190, 10), zoom: 3)), Array(cover))
        XCTAssertEqual(Array(TileCover(CoverCheck.bbox(-190, -10, -170, 10), zoom: 3)), Array(cover))
        // An east edge exactly on the antimeridian seam adds nothing.
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(90, -10, -180, 10), zoom: 2), 2)
        // 360° or more is the whole ring of columns, each once.
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(-200, -10, 200, 10), zoom: 3), 8 * 2)
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(10, -10, 5, 10), zoom: 3), 8 * 2)
    }

    func testNonFiniteBoxesCoverNothing() {
        XCTAssertEqual(TileCover.count(CoverCheck.bbox(.nan, 0, 1, 1), zoom: 3), 0)
        XCTAssertTrue(Array(TileCover(CoverCheck.bbox(0, 0, .infinity, 1), zoom: 3)).isEmpty)
    }

    /// Counts no enumeration could reach in a test's life: the count is arithmetic.
    func testPlanetCountOverAllZoomsIsArithmetic() {
        let total = TileCover.count(world, zooms: 0...22)
        XCTAssertEqual(total, ((1 << 46) - 1) / 3)
        XCTAssertEqual(total, 23_456_248_059_221)
        XCTAssertEqual(TileCover.count(world, zooms: 0...TileID.maxZoom), ((1 << 62) - 1) / 3)
    }

    func testZoom22PlanetCoverEnumeratesLazily() {
        let cover = TileCover(world, zoom: 22)
        let first = Array(cover.prefix(3))
        XCTAssertEqual(first, CoverCheck.tiles(22, [(0, 0), (0, 1), (0, 2)]))
        var iterator = cover.makeIterator()
        for _ in 0..<(1 << 22) { _ = iterator.next() }
        XCTAssertEqual(iterator.next(), TileID(z: 22, x: 1, y: 0))
        XCTAssertTrue(cover.contains(TileID(z: 22, x: (1 << 22) - 1, y: (1 << 22) - 1)))
        XCTAssertFalse(cover.contains(TileID(z: 21, x: 0, y: 0)))
    }

    func testContainsAgreesWithEnumeration() {
        for area in [sanFrancisco, CoverCheck.bbox(-30, -50, 60, 20), CoverCheck.bbox(100, 60, -120, 70)] {
            for zoom in 0...6 {
                let cover = TileCover(area, zoom: zoom)
                _ = CoverCheck.enumerate(cover)
                CoverCheck.checkContainsEverywhere(cover)
            }
        }
    }
}
