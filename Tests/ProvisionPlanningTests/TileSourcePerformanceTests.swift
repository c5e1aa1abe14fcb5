import ProvisionPlanning
import TileMath
import XCTest

final class TileSourcePerformanceTests: XCTestCase {
    /// An apply expands one template per tile: every expansion of a long run is the URL for its
    /// tile (its speed is measured by Benchmarks/run, not asserted here).
    func testExpandingTwoHundredThousandURLsGivesEachTileItsURL() {
        let source = TileSource(template: "https://tiles.example.com/v1/{z}/{x}/{y}{ratio}.png?key=${KEY}", type: .raster)
        for x in 0..<200_000 {
            let url = source.url(for: TileID(z: 18, x: x, y: 1000), pixelRatio: 2)
            guard url == "https://tiles.example.com/v1/18/\(x)/1000@2x.png?key=${KEY}" else {
                return XCTFail("tile 18/\(x)/1000: \(url)")
            }
        }
    }
}
