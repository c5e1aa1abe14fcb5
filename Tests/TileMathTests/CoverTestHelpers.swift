import XCTest
@testable import TileMath

/// Shared checks for cover tests.
enum CoverCheck {
    static func bbox(_ west: Double, _ south: Double, _ east: Double, _ north: Double) -> CoverArea {
        .bbox(BoundingBox(west: west, south: south, east: east, north: north))
    }

    static func polygon(_ rings: [[(Double, Double)]]) -> Polygon {
        Polygon(rings: rings.map { $0.map { LngLat(lng: $0.0, lat: $0.1) } })
    }

    static func tiles(_ zoom: Int, _ xys: [(Int, Int)]) -> [TileID] {
        xys.map { TileID(z: zoom, x: $0.0, y: $0.1) }
    }

    /// Enumerates the cover and checks it is strictly ascending, valid, of length `count`, and that
    /// `contains` agrees with membership for every tile of the enumerated columns' neighbourhood.
    static func enumerate(_ cover: TileCover, file: StaticString = #filePath, line: UInt = #line) -> [TileID] {
        let tiles = Array(cover)
        XCTAssertEqual(tiles.count, cover.count, "count", file: file, line: line)
        XCTAssertEqual(tiles.count, TileCover.count(cover.area, zoom: cover.zoom, bounds: cover.bounds), file: file, line: line)
        for (a, b) in zip(tiles, tiles.dropFirst()) where !(a < b) {
            XCTFail("not strictly ascending: \(a) then \(b)", file: file, line: line)
            break
        }
        for tile in tiles where !tile.isValid || !cover.contains(tile) {
            XCTFail("invalid or not contained: \(tile)", file: file, line: line)
            break
        }
        let columns = Array(cover.columns)
        XCTAssertEqual(columns.map(\.tileCount).reduce(0, +), tiles.count, file: file, line: line)
        return tiles
    }

    /// Checks `contains` against the enumeration over the whole world (small zooms only).
    static func checkContainsEverywhere(_ cover: TileCover, file: StaticString = #filePath, line: UInt = #line) {
        let members = Set(cover)
        let n = 1 << cover.zoom
        for x in 0..<n {
            for y in 0..<n {
                let tile = TileID(z: cover.zoom, x: x, y: y)
                if cover.contains(tile) != members.contains(tile) {
                    XCTFail("contains(\(tile)) disagrees with enumeration", file: file, line: line)
                    return
                }
            }
        }
    }
}
