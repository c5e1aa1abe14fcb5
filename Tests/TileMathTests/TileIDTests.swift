import XCTest
@testable import TileMath

final class TileIDTests: XCTestCase {
    func testQuadkeysRoundTripForEveryTileUpToZoom7() {
        var seen = Set<String>()
        for zoom in 0...7 {
            let n = 1 << zoom
            for x in 0..<n {
                for y in 0..<n {
                    let tile = TileID(z: zoom, x: x, y: y)
                    let key = tile.quadkey
                    XCTAssertEqual(key.count, zoom)
                    XCTAssertEqual(TileID(quadkey: key), tile)
                    seen.insert(key)
                }
            }
        }
        XCTAssertEqual(seen.count, (0...7).reduce(0) { $0 + (1 << (2 * $1)) })
    }

    func testQuadkeyNamedValues() {
        XCTAssertEqual(TileID(z: 0, x: 0, y: 0).quadkey, "")
        XCTAssertEqual(TileID(z: 3, x: 3, y: 5).quadkey, "213")  // Bing Maps Tile System example
        XCTAssertEqual(TileID(z: 1, x: 1, y: 1).quadkey, "3")
        XCTAssertEqual(TileID(quadkey: "213"), TileID(z: 3, x: 3, y: 5))
        XCTAssertNil(TileID(quadkey: "2140"))
        XCTAssertNil(TileID(quadkey: String(repeating: "0", count: 31)))
        XCTAssertEqual(TileID(quadkey: String(repeating: "3", count: 30)),
                       TileID(z: 30, x: (1 << 30) - 1, y: (1 << 30) - 1))
    }

    func testEveryTileCentreMapsBackToItsTileAndBoundsNest() {
        for zoom in 0...8 {
            let n = 1 << zoom
            for x in stride(from: 0, to: n, by: max(1, n / 64)) {
                for y in stride(from: 0, to: n, by: max(1, n / 64)) {
                    let tile = TileID(z: zoom, x: x, y: y)
                    let box = tile.bounds
                    let centre = LngLat(lng: (box.west + box.east) / 2, lat: (box.south + box.north) / 2)
                    XCTAssertEqual(WebMercator.tile(containing: centre, zoom: zoom), tile)
                    if let parent = tile.parent {
                        XCTAssertTrue(parent.children.contains(tile))
                        let outer = parent.bounds
                        XCTAssertLessThanOrEqual(outer.west, box.west)
                        XCTAssertGreaterThanOrEqual(outer.north, box.north)
                    }
                }
            }
        }
    }

    func testParentChildrenAndAncestors() {
        XCTAssertNil(TileID(z: 0, x: 0, y: 0).parent)
        XCTAssertEqual(TileID(z: 5, x: 17, y: 9).parent, TileID(z: 4, x: 8, y: 4))
        XCTAssertEqual(TileID(z: 5, x: 17, y: 9).ancestor(atZoom: 2), TileID(z: 2, x: 2, y: 1))
        XCTAssertNil(TileID(z: 5, x: 17, y: 9).ancestor(atZoom: 6))
        XCTAssertEqual(TileID(z: 1, x: 1, y: 0).children,
                       [TileID(z: 2, x: 2, y: 0), TileID(z: 2, x: 2, y: 1),
                        TileID(z: 2, x: 3, y: 0), TileID(z: 2, x: 3, y: 1)])
        XCTAssertEqual(TileID(z: 1, x: 1, y: 0).children, TileID(z: 1, x: 1, y: 0).children.sorted())
    }

    func testValidity() {
        XCTAssertTrue(TileID(z: 0, x: 0, y: 0).isValid)
        XCTAssertFalse(TileID(z: 0, x: 1, y: 0).isValid)
        XCTAssertFalse(TileID(z: 2, x: 0, y: 4).isValid)
        XCTAssertFalse(TileID(z: 2, x: -1, y: 0).isValid)
        XCTAssertFalse(TileID(z: -1, x: 0, y: 0).isValid)
        XCTAssertTrue(TileID(z: 30, x: (1 << 30) - 1, y: 0).isValid)
        XCTAssertFalse(TileID(z: 31, x: 0, y: 0).isValid)
    }

    func testGeographicAndMercatorBoundsOfNamedTiles() {
        let world = TileID(z: 0, x: 0, y: 0)
        XCTAssertEqual(world.bounds.west, -180)
        XCTAssertEqual(world.bounds.east, 180)
        XCTAssertEqual(world.bounds.north, WebMercator.maxLatitude, accuracy: 1e-12)
        XCTAssertEqual(world.bounds.south, -WebMercator.maxLatitude, accuracy: 1e-12)
        let metres = world.mercatorBounds
        XCTAssertEqual(metres, MercatorBounds(minX: -20_037_508.342789244, minY: -20_037_508.342789244,
                                              maxX: 20_037_508.342789244, maxY: 20_037_508.342789244))
        let northEast = TileID(z: 1, x: 1, y: 0)
        XCTAssertEqual(northEast.bounds, BoundingBox(west: 0, south: 0, east: 180, north: northEast.bounds.north))
        XCTAssertEqual(northEast.mercatorBounds.minX, 0)
        XCTAssertEqual(northEast.mercatorBounds.minY, 0)
        // Neighbours share edges exactly.
        let a = TileID(z: 14, x: 8185, y: 5448).mercatorBounds
        let b = TileID(z: 14, x: 8186, y: 5449).mercatorBounds
        XCTAssertEqual(a.maxX, b.minX)
        XCTAssertEqual(a.minY, b.maxY)
    }
}
