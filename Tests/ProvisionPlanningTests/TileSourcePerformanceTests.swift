import ProvisionPlanning
import TileMath
import XCTest

final class TileSourcePerformanceTests: XCTestCase {
    /// Expanding a template must stay cheap: an apply expands one per tile.
    func testExpandingTwoHundredThousandURLsIsFast() {
        let source = TileSource(template: "https://tiles.example.com/v1/{z}/{x}/{y}{ratio}.png?key=${KEY}", type: .raster)
        let start = Date()
        var bytes = 0
        for x in 0..<200_000 {
            bytes += source.url(for: TileID(z: 18, x: x, y: 1000), pixelRatio: 2).utf8.count
        }
        XCTAssertGreaterThan(bytes, 0)
        XCTAssertLessThan(Date().timeIntervalSince(start), 10, "debug build; about 1 s expected")
    }
}
