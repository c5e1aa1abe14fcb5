import XCTest
@testable import TileMath

final class TileCoverPolygonTests: XCTestCase {
    // MapLibre's test/util/tile_cover.test.cpp geometries.
    static let europe: [(Double, Double)] = [
        (5.09765625, 53.067626642387374), (2.373046875, 43.389081939117496), (-4.74609375, 48.45835188280866),
        (-1.494140625, 37.09023980307208), (22.587890625, 36.24427318493909), (31.640625, 46.13417004624326),
        (17.841796875, 54.7246201949245), (5.09765625, 53.067626642387374),
    ]
    static let europeHole: [(Double, Double)] = [
        (19.6875, 49.66762782262194), (22.8515625, 43.51668853502906), (13.623046875, 45.089035564831036),
        (16.34765625, 39.095962936305476), (5.185546875, 41.244772343082076),
        (8.701171874999998, 50.233151832472245), (19.6875, 49.66762782262194),
    ]
    static let asia: [(Double, Double)] = [
        (59.150390625, 45.460130637921004), (65.126953125, 41.11246878918088), (69.169921875, 47.45780853075031),
        (63.896484375, 50.064191736659104), (59.150390625, 45.460130637921004),
    ]
    static let sanFrancisco: [(Double, Double)] = [
        (-122.5143814086914, 37.779127216982424), (-122.50811576843262, 37.72721239056709),
        (-122.50313758850099, 37.70820178063929), (-122.3938751220703, 37.707454835665274),
        (-122.37567901611328, 37.70663997801684), (-122.36297607421874, 37.71343018466285),
        (-122.354736328125, 37.727280276860036), (-122.36469268798828, 37.73868429065797),
        (-122.38014221191408, 37.75442980295571), (-122.38391876220702, 37.78753873820529),
        (-122.35919952392578, 37.8065289741725), (-122.35679626464844, 37.820632846207864),
        (-122.3712158203125, 37.835276322922695), (-122.3818588256836, 37.82958198283902),
        (-122.37190246582031, 37.80788523279169), (-122.38735198974608, 37.791337175930686),
        (-122.40966796874999, 37.812767557570204), (-122.46425628662108, 37.807071480609274),
        (-122.46803283691405, 37.810326435534755), (-122.47901916503906, 37.81168262440736),
        (-122.48966217041016, 37.78916666399649), (-122.50579833984375, 37.78781006166096),
        (-122.5143814086914, 37.779127216982424),
    ]

    func testPolygonWithHoleMatchesMapLibreUpstream() {
        let cover = TileCover(.polygons([CoverCheck.polygon([Self.europe, Self.europeHole])]), zoom: 8)
        _ = CoverCheck.enumerate(cover)
        XCTAssertTrue(cover.contains(TileID(z: 8, x: 134, y: 87)))
        XCTAssertTrue(cover.contains(TileID(z: 8, x: 139, y: 87)))
        XCTAssertFalse(cover.contains(TileID(z: 8, x: 136, y: 87)), "should have a hole")
    }

    func testMultiPolygonMatchesMapLibreUpstreamCount() {
        let area = CoverArea.polygons([CoverCheck.polygon([Self.europe]), CoverCheck.polygon([Self.asia])])
        let cover = TileCover(area, zoom: 8)
        XCTAssertEqual(CoverCheck.enumerate(cover).count, 424)
        for tile in [(139, 87), (136, 87), (174, 94)] {
            XCTAssertTrue(cover.contains(TileID(z: 8, x: tile.0, y: tile.1)))
        }
    }

    func testSanFranciscoPolygonMatchesMapLibreUpstream() {
        let area = CoverArea.polygons([CoverCheck.polygon([Self.sanFrancisco])])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(area, zoom: 12)),
                       CoverCheck.tiles(12, [(654, 1582), (654, 1583), (654, 1584), (655, 1582), (655, 1583),
                                             (655, 1584)]))
    }

    func testSanFranciscoPolygonAtZ22CountsBySpansAndEnumeratesTheSame() {
        let area = CoverArea.polygons([CoverCheck.polygon([Self.sanFrancisco])])
        let count = TileCover.count(area, zoom: 22)
        // Strictly inside the bounding box's cover, and most of it.
        let box = TileCover.count(CoverCheck.bbox(-122.5143814086914, 37.70663997801684,
                                                  -122.354736328125, 37.835276322922695), zoom: 22)
        XCTAssertLessThan(count, box)
        XCTAssertGreaterThan(count, box / 2)
        var enumerated = 0
        for column in TileCover(area, zoom: 22).columns {
            enumerated += column.tileCount
        }
        XCTAssertEqual(enumerated, count)
    }

    func testOpenTriangleFromMapLibreUpstream() {
        // GeomInvalid: Polygon{{1.0, 34.2}, {1.0, 34.4}, {0.5, 34.3}} at z10 (ring not closed).
        let area = CoverArea.polygons([CoverCheck.polygon([[(1.0, 34.2), (1.0, 34.4), (0.5, 34.3)]])])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(area, zoom: 10)),
                       CoverCheck.tiles(10, [(513, 407), (513, 408), (514, 407), (514, 408)]))
    }

    func testDegenerateRingsCoverNothing() {
        XCTAssertEqual(TileCover.count(.polygons([CoverCheck.polygon([[(1.0, 35.0)]])]), zoom: 16), 0)
        XCTAssertEqual(TileCover.count(.polygons([CoverCheck.polygon([[(1, 35), (2, 36), (1, 35)]])]), zoom: 8), 0)
        XCTAssertEqual(TileCover.count(.polygons([CoverCheck.polygon([[(1, 35), (2, 35), (3, 35)]])]), zoom: 8), 0)
        XCTAssertEqual(TileCover.count(.polygons([CoverCheck.polygon([[(1, 35), (1, 36), (1, 37)]])]), zoom: 8), 0)
        // Straight in degrees is not straight in Mercator: this is a real (thin) triangle.
        XCTAssertGreaterThan(TileCover.count(.polygons([CoverCheck.polygon([[(1, 35), (2, 36), (3, 37)]])]),
                                             zoom: 8), 0)
        XCTAssertEqual(TileCover.count(.polygons([]), zoom: 8), 0)
        XCTAssertEqual(TileCover.count(.polygons([Polygon(rings: [])]), zoom: 8), 0)
    }

    func testHolesAreHolesWhicheverWayTheyWind() {
        let outer: [(Double, Double)] = [(-10, -10), (10, -10), (10, 10), (-10, 10)]
        let hole: [(Double, Double)] = [(-5, -5), (5, -5), (5, 5), (-5, 5)]
        let same = TileCover(.polygons([CoverCheck.polygon([outer, hole])]), zoom: 7)
        let reversed = TileCover(.polygons([CoverCheck.polygon([outer, hole.reversed()])]), zoom: 7)
        let flipped = TileCover(.polygons([CoverCheck.polygon([outer.reversed(), hole])]), zoom: 7)
        XCTAssertEqual(Array(same), Array(reversed))
        XCTAssertEqual(Array(same), Array(flipped))
        // z7 tiles are 2.8125° wide: columns 63 and 64 (−2.8125…2.8125) and the two rows about the equator
        // lie wholly inside the hole; every other tile meets the ring.
        XCTAssertFalse(same.contains(WebMercator.tile(containing: LngLat(lng: 0.1, lat: 0.1), zoom: 7)))
        XCTAssertTrue(same.contains(WebMercator.tile(containing: LngLat(lng: 7.5, lat: 0.1), zoom: 7)))
        XCTAssertEqual(same.count, TileCover.count(.polygons([CoverCheck.polygon([outer])]), zoom: 7) - 2 * 2)
    }

    func testEdgesOnTileBoundariesAreHalfOpen() {
        // A square exactly on the z2 tile (1, 1): lng −90…0, lat 0…66.51° (y 1.0 is not exact, so
        // the north edge sits a hair inside and must not pull in row 0).
        let square = CoverCheck.polygon([[(-90, 0), (0, 0), (0, 66.5), (-90, 66.5)]])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(.polygons([square]), zoom: 2)), [TileID(z: 2, x: 1, y: 1)])
        XCTAssertEqual(TileCover.count(.polygons([square]), zoom: 3), 2 * 2)
        // A step whose vertical edge runs along x = 2.0 and whose lower edge runs along y = 2.0 at z2:
        // column 2 row 2 is touched only on its west and north edges.
        let step = CoverCheck.polygon([[(-90, -60), (0, -60), (0, 0), (90, 0), (90, 60), (-90, 60)]])
        let cover = TileCover(.polygons([step]), zoom: 2)
        XCTAssertEqual(CoverCheck.enumerate(cover), CoverCheck.tiles(2, [(1, 1), (1, 2), (2, 1)]))
        CoverCheck.checkContainsEverywhere(cover)
    }

    func testPolygonAcrossTheAntimeridianWrapsAndStaysSorted() {
        let area = CoverArea.polygons([CoverCheck.polygon([[(170, -20), (190, -25), (185, -5), (172, -8)]])])
        for zoom in 0...6 {
            let cover = TileCover(area, zoom: zoom)
            let tiles = CoverCheck.enumerate(cover)
            CoverCheck.checkContainsEverywhere(cover)
            if zoom >= 2 {
                XCTAssertEqual(tiles.first?.x, 0)
                XCTAssertEqual(tiles.last?.x, (1 << zoom) - 1)
            }
        }
        // A polygon wider than the world covers each tile once.
        let band = CoverArea.polygons([CoverCheck.polygon([[(-300, -10), (300, -10), (300, 10), (-300, 10)]])])
        XCTAssertEqual(CoverCheck.enumerate(TileCover(band, zoom: 3)).count, 8 * 2)
    }

    func testPolygonCountOverZoomsSumsPerZoomCounts() {
        let area = CoverArea.polygons([CoverCheck.polygon([Self.europe, Self.europeHole])])
        let perZoom = (0...9).map { TileCover.count(area, zoom: $0) }
        XCTAssertEqual(TileCover.count(area, zooms: 0...9), perZoom.reduce(0, +))
        XCTAssertEqual(perZoom[8], 314)
    }
}
