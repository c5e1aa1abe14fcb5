import ProvisionEngine
import XCTest

/// The names a region's extra tileset gets (`audit` lists them, `export --source` takes them).
final class ExportCatalogTests: XCTestCase {
    func testNamesComeFromTheLastPlainPathSegmentElseTheHost() {
        let cases: [(String, String)] = [
            ("https://tiles.example.com/demo/tiles/streets/{z}/{x}/{y}.pbf", "streets"),
            ("https://tiles.example.com/terrain/tiles.json", "tiles"),
            ("https://example.com/v1/contours.json?key=${KEY}", "contours"),
            ("https://a.tile.example.org/{z}/{x}/{y}.png", "a.tile.example.org"),
            ("mapbox://mapbox.mapbox-streets-v8", "mapbox.mapbox-streets-v8"),
            ("https://example.com/my tiles/{z}/{x}/{y}.pbf", "my-tiles"),
            ("https://example.com/tiles/v2/../{z}/{x}/{y}.pbf", "v2"),
        ]
        for (url, name) in cases {
            XCTAssertEqual(ExportCatalog.derivedName(url), name, url)
        }
    }
}
