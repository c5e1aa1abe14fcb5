import XCTest
@testable import TileMath

final class WebMercatorTests: XCTestCase {
    func testTileBoundariesRoundTripThroughDegreesAtEveryZoomUpTo12() {
        for zoom in 0...12 {
            let n = 1 << zoom
            for i in 0...n {
                let lng = WebMercator.lng(tileX: Double(i), zoom: zoom)
                XCTAssertEqual(WebMercator.tileX(lng: lng, zoom: zoom), Double(i), accuracy: 1e-9, "z\(zoom) x\(i)")
                let lat = WebMercator.lat(tileY: Double(i), zoom: zoom)
                XCTAssertEqual(WebMercator.tileY(lat: lat, zoom: zoom), Double(i), accuracy: 1e-7, "z\(zoom) y\(i)")
            }
        }
    }

    func testFractionalCoordinatesRoundTripAtZoom22() {
        for lng in stride(from: -179.9, through: 179.9, by: 7.3) {
            let x = WebMercator.tileX(lng: lng, zoom: 22)
            XCTAssertEqual(WebMercator.lng(tileX: x, zoom: 22), lng, accuracy: 1e-9)
        }
        for lat in stride(from: -85.0, through: 85.0, by: 3.7) {
            let y = WebMercator.tileY(lat: lat, zoom: 22)
            XCTAssertEqual(WebMercator.lat(tileY: y, zoom: 22), lat, accuracy: 1e-9)
        }
    }

    func testWorldEdgesAndPolesClampToTheSquareWorld() {
        XCTAssertEqual(WebMercator.tileX(lng: -180, zoom: 3), 0)
        XCTAssertEqual(WebMercator.tileX(lng: 180, zoom: 3), 8)
        XCTAssertEqual(WebMercator.tileX(lng: 0, zoom: 3), 4)
        XCTAssertEqual(WebMercator.tileY(lat: 0, zoom: 3), 4)
        XCTAssertEqual(WebMercator.tileY(lat: 90, zoom: 3), 0)
        XCTAssertEqual(WebMercator.tileY(lat: -90, zoom: 3), 8)
        XCTAssertEqual(WebMercator.tileY(lat: 89, zoom: 5), WebMercator.tileY(lat: 85.06, zoom: 5))
        XCTAssertEqual(WebMercator.lat(tileY: 0, zoom: 0), WebMercator.maxLatitude, accuracy: 1e-12)
        XCTAssertEqual(WebMercator.lat(tileY: 1, zoom: 0), -WebMercator.maxLatitude, accuracy: 1e-12)
        // Longitudes are not wrapped by the projection: the cover wraps columns itself.
        XCTAssertEqual(WebMercator.tileX(lng: 190, zoom: 0), 370.0 / 360.0, accuracy: 1e-15)
    }

    func testTileContainingAPointWrapsColumnsAndClampsRows() {
        XCTAssertEqual(WebMercator.tile(containing: LngLat(lng: 0, lat: 0), zoom: 1), TileID(z: 1, x: 1, y: 1))
        XCTAssertEqual(WebMercator.tile(containing: LngLat(lng: -180, lat: 90), zoom: 2), TileID(z: 2, x: 0, y: 0))
        XCTAssertEqual(WebMercator.tile(containing: LngLat(lng: 180, lat: -90), zoom: 2), TileID(z: 2, x: 0, y: 3))
        XCTAssertEqual(WebMercator.tile(containing: LngLat(lng: -181, lat: 0), zoom: 2), TileID(z: 2, x: 3, y: 2))
        // MapLibre's upstream vectors (GeomPoint).
        XCTAssertEqual(WebMercator.tile(containing: LngLat(lng: -122.5744, lat: 37.6609), zoom: 2),
                       TileID(z: 2, x: 0, y: 1))
    }

    func testMetresMatchEPSG3857() {
        let corner = WebMercator.metres(LngLat(lng: 180, lat: WebMercator.maxLatitude))
        XCTAssertEqual(corner.x, 20_037_508.342789244, accuracy: 1e-6)
        XCTAssertEqual(corner.y, 20_037_508.342789244, accuracy: 1e-3)
        let origin = WebMercator.metres(LngLat(lng: 0, lat: 0))
        XCTAssertEqual(origin.x, 0)
        XCTAssertEqual(origin.y, 0, accuracy: 1e-9)
    }
}
