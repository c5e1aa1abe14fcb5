import ProvisionEngine
import ProvisionExport
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

/// Issue 20: a stored document the catalog cannot read is a warning naming it and what it leaves
/// out, in the export's result (text and JSON), never a source or style pack silently missing.
final class ExportCatalogWarningTests: XCTestCase {
    private static let styleURL = "https://tiles.example.com/demo/styles/streets.json"
    private static let tileJSONURL = "https://tiles.example.com/demo/tilesets/streets.json"

    private func appliedStore() throws -> (EngineFixtures.OverlappingJobRoot, URL) {
        let root = try EngineFixtures.OverlappingJobRoot("catalog-warnings")
        _ = try root.apply(into: "store")
        return (root, root.url.appendingPathComponent("store"))
    }

    /// Runs SQL on the store's database with the sqlite3 shell (the damage a foreign writer or a disk does).
    private func damage(_ store: URL, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store.appendingPathComponent("offline.db").path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, sql)
    }

    private func export(_ store: URL, _ format: ExportRun.Format, to name: String) throws -> ExportResult {
        try ExportRun(store: store.path, format: format, region: nil, source: nil,
                      out: store.deletingLastPathComponent().appendingPathComponent(name).path, progress: SilentProgress()).run()
    }

    func testAStoreWhoseDocumentsAreReadableExportsWithoutWarnings() throws {
        let (root, store) = try appliedStore()
        let result = try export(store, .mbtiles, to: "out")
        XCTAssertEqual(result.warnings, [])
        XCTAssertEqual(result.json["warnings"], .array([]))
        XCTAssertFalse(result.text.contains("warning:"), result.text)
        withExtendedLifetime(root) {}
    }

    func testAnUnreadableTileJSONAndRegionDefinitionAreWarningsAndTheTilesAreStillExported() throws {
        let (root, store) = try appliedStore()
        try damage(store, "UPDATE resources SET data = CAST('not json' AS BLOB), compressed = 0 WHERE url = '\(Self.tileJSONURL)'")
        try damage(store, "UPDATE regions SET definition = CAST('{\"style_url\": ' AS BLOB) WHERE id = (SELECT min(id) FROM regions)")
        let result = try export(store, .mbtiles, to: "out")

        XCTAssertFalse(result.files.isEmpty, "the tiles are exported all the same")
        let tileJSON = result.warnings.filter { $0.hasPrefix("the stored TileJSON \(Self.tileJSONURL) of source 'streets' of style pack") }
        XCTAssertEqual(tileJSON.count, 2, "one for each style pack that draws from it: \(result.warnings)")
        XCTAssertTrue(tileJSON.allSatisfy { $0.contains("is not valid JSON (") && $0.contains("exported as XYZ rows") }, "\(tileJSON)")
        XCTAssertTrue(result.warnings.contains { $0.hasPrefix("the definition of region row 1 is not valid JSON (") }, "\(result.warnings)")
        XCTAssertEqual(result.json["warnings"]?.arrayValue?.count, result.warnings.count)
        for warning in result.warnings { XCTAssertTrue(result.text.contains("warning: \(warning)\n"), result.text) }
        withExtendedLifetime(root) {}
    }

    func testAStyleThatIsMissingOrNotAStyleLeavesItsPackOutOfABundleAndSaysSo() throws {
        let (root, store) = try appliedStore()
        try damage(store, "UPDATE resources SET data = CAST('{\"version\": 8}' AS BLOB), compressed = 0 WHERE url = '\(Self.styleURL)'")
        let notAStyle = try export(store, .mbtiles, to: "out")
        XCTAssertTrue(notAStyle.warnings.contains("the stored style \(Self.styleURL) of style pack 'streets' is not a style (no version or "
                                                  + "layers): the style pack is left out (of a bundle, too) and its sources are "
                                                  + "named from their templates"), "\(notAStyle.warnings)")

        try damage(store, "DELETE FROM resources WHERE url = '\(Self.styleURL)'")
        let missing = try export(store, .mbtiles, to: "out2")
        XCTAssertTrue(missing.warnings.contains { $0.hasPrefix("the style \(Self.styleURL) of style pack 'retina' is not stored: ") },
                      "\(missing.warnings)")
        XCTAssertFalse(missing.files.isEmpty)
        withExtendedLifetime(root) {}
    }
}
