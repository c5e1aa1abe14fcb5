import Foundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// The offline.db that `provision apply` leaves is what MapLibre Native expects (reference/maplibre-offline.md),
/// checked with the sqlite3 shell, not with the product's SQLite code.
final class OfflineDatabaseFormatTests: XCTestCase {
    /// One applied store shared by the tests of this class (read-only checks), built on first use.
    /// Unchecked: XCTest runs a class's setUp, tests and class tearDown one after another on one thread.
    nonisolated(unsafe) private static var shared: Workspace?
    nonisolated(unsafe) private static var sharedSetupError: Error?
    private let cities = [Demo.newYork, Demo.london, Demo.paris]
    private var ws: Workspace!

    override func setUpWithError() throws {
        _ = try SQLiteShell.executable()
        if let error = Self.sharedSetupError { throw error }
        if Self.shared == nil {
            do {
                let workspace = try Workspace()
                Self.shared = workspace
                let job = try workspace.write(workspace.job(cities, tiles: .mbtiles)).path
                let apply = try workspace.provision("apply", "--quiet", job)
                apply.expect(0)
                guard apply.status == 0 else { throw CocoaError(.fileWriteUnknown) }
            } catch {
                Self.sharedSetupError = error
                throw error
            }
        }
        ws = Self.shared
    }

    override class func tearDown() {
        shared?.tearDown()
        shared = nil
        super.tearDown()
    }

    func testStoreDirectoryAndPragmas() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: ws.store.path).sorted()
        XCTAssertEqual(files, ["offline.db", "provision.lock.json"], "no -journal, -wal or temporary files left")
        let header = try Data(contentsOf: ws.database).prefix(100)
        XCTAssertEqual(Array(header.prefix(16)), Array("SQLite format 3\0".utf8))
        XCTAssertEqual([header[18], header[19]], [1, 1], "rollback journal file format, not WAL")
        let sql = ws.sqlite
        XCTAssertEqual(try sql.int("PRAGMA user_version"), 6)
        XCTAssertEqual(try sql.scalar("PRAGMA journal_mode"), "delete")
        XCTAssertEqual(try sql.int("PRAGMA auto_vacuum"), 2, "auto_vacuum = INCREMENTAL, as MapLibre creates it")
        XCTAssertEqual(try sql.scalar("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sql.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
                        .map { $0[0] }, ["region_resources", "region_tiles", "regions", "resources", "tiles"])
        let tileColumns = try sql.rows("PRAGMA table_info(tiles)").map { $0[1] }
        XCTAssertEqual(tileColumns, ["id", "url_template", "pixel_ratio", "z", "x", "y", "expires", "modified", "etag",
                                     "data", "compressed", "accessed", "must_revalidate"])
        let resourceColumns = try sql.rows("PRAGMA table_info(resources)").map { $0[1] }
        XCTAssertEqual(resourceColumns, ["id", "url", "kind", "expires", "modified", "etag", "data", "compressed",
                                         "accessed", "must_revalidate"])
        let indexes = Set(try sql.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
            .map { $0[0] })
        XCTAssertTrue(indexes.isSuperset(of: ["resources_accessed", "tiles_accessed", "region_resources_resource_id",
                                              "region_tiles_tile_id"]), "\(indexes)")
    }

    func testRegionRows() throws {
        let rows = try ws.sqlite.rows("SELECT id, definition, CAST(description AS TEXT), typeof(definition) FROM regions ORDER BY id")
        XCTAssertEqual(rows.count, cities.count)
        for (row, city) in zip(rows, cities) {
            let text = row[1]
            XCTAssertFalse(text.contains(" ") || text.contains("\n"), "compact JSON: \(text)")
            let definition = try parseJSON(text)
            XCTAssertEqual(definition.objectValue?.keys,
                           ["style_url", "min_zoom", "max_zoom", "pixel_ratio", "include_ideographs", "bounds"])
            XCTAssertEqual(definition["style_url"], .string(Demo.styleURL))
            // rapidjson's IsDouble(): numbers must be written with a fraction.
            XCTAssertTrue(text.contains("\"min_zoom\":10.0,\"max_zoom\":14.0,\"pixel_ratio\":2.0,"), text)
            XCTAssertEqual(definition["include_ideographs"], .bool(false))
            let bounds = definition["bounds"]?.arrayValue ?? []
            XCTAssertEqual(bounds, [city.bbox[1], city.bbox[0], city.bbox[3], city.bbox[2]].map { .double($0) },
                           "[south, west, north, east] of \(city.id)")
            XCTAssertEqual(try parseJSON(row[2]), ["name": .string(city.name)], "description = the region metadata")
            let linked = try ws.sqlite.int("SELECT count(*) FROM region_tiles WHERE region_id = \(row[0])")
            XCTAssertEqual(linked, city.tiles.count, "tiles linked to \(city.id)")
            XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM region_resources WHERE region_id = \(row[0])"), 136)
        }
    }

    func testResources() throws {
        let sql = ws.sqlite
        let kinds = Dictionary(uniqueKeysWithValues: try sql.rows("SELECT kind, count(*) FROM resources GROUP BY kind")
            .map { (Int($0[0]) ?? -1, Int($0[1]) ?? -1) })
        XCTAssertEqual(kinds, [1: 1, 2: 1, 4: 130, 5: 2, 6: 2], "style, TileJSON, 130 glyph ranges, 2 sprite images, 2 sprite JSONs")
        let named = try sql.rows("SELECT kind, url FROM resources WHERE kind <> 4 ORDER BY kind, url").map { "\($0[0]) \($0[1])" }
        XCTAssertEqual(named, [
            "1 \(Demo.styleURL)",
            "2 \(Demo.canonicalBase)tilesets/streets.json",
            "5 \(Demo.canonicalBase)sprites/streets.png",
            "5 \(Demo.canonicalBase)sprites/streets@2x.png",
            "6 \(Demo.canonicalBase)sprites/streets.json",
            "6 \(Demo.canonicalBase)sprites/streets@2x.json",
        ])
        let glyphs = try sql.rows("SELECT url FROM resources WHERE kind = 4").map { $0[0] }
        let glyphBase = Demo.canonicalBase + "fonts/Noto%20Sans%20Regular/"
        XCTAssertTrue(glyphs.allSatisfy { $0.hasPrefix(glyphBase) && $0.hasSuffix(".pbf") }, "\(glyphs.prefix(3))")
        XCTAssertTrue(glyphs.contains(glyphBase + "0-255.pbf"))
        XCTAssertFalse(glyphs.contains(glyphBase + "19968-20223.pbf"), "ideographs are rendered locally")
        XCTAssertEqual(try sql.int("SELECT count(*) FROM resources WHERE typeof(url) <> 'text' OR must_revalidate <> 0 OR expires IS NOT NULL"), 0)

        try requireInflate(sql)
        for (url, file) in [(Demo.styleURL, "styles/streets.json"), (Demo.canonicalBase + "sprites/streets@2x.png", "sprites/streets@2x.png"),
                            (glyphBase + "0-255.pbf", "fonts/Noto Sans Regular/0-255.pbf")] {
            let hex = try sql.scalar("SELECT hex(\(Self.payload)) FROM resources WHERE url = '\(url)'")
            let expected = try Data(contentsOf: Demo.directory.appendingPathComponent(file))
            XCTAssertEqual(VectorTileShape.bytes(hex: hex).map { Data($0) }, expected, "\(url) is stored verbatim")
        }
    }

    func testTiles() throws {
        let sql = ws.sqlite
        let tileJSON = try readJSON(Demo.directory.appendingPathComponent("tilesets/streets.json"))
        let template = tileJSON["tiles"]?.arrayValue?.first?.stringValue ?? "?"
        XCTAssertEqual(try sql.rows("SELECT DISTINCT url_template, typeof(url_template), pixel_ratio FROM tiles").map { $0 },
                       [[template, "text", "1"]], "one template, as TEXT, at pixel ratio 1 (vector tiles)")
        XCTAssertEqual(try sql.int("SELECT count(*) FROM tiles WHERE must_revalidate <> 0 OR expires IS NOT NULL"), 0)
        let expected = cities.reduce(into: Set<TileAddress>()) { $0.formUnion($1.tiles) }
        XCTAssertEqual(try storedTiles(sql), expected, "the stored tiles are the cover of the three regions")

        try requireInflate(sql)
        let rows = try sql.rows("SELECT z, x, y, compressed, length(data), length(\(Self.payload)), hex(\(Self.payload)) FROM tiles")
        XCTAssertEqual(rows.count, expected.count)
        var layers = Set<String>()
        var compressedRows = 0
        for row in rows {
            let name = "\(row[0])/\(row[1])/\(row[2])"
            if row[3] == "1" {
                compressedRows += 1
                XCTAssertLessThan(Int(row[4]) ?? 0, Int(row[5]) ?? 0, "\(name): compressed only when smaller")
            } else {
                XCTAssertEqual(row[3], "0", name)
            }
            guard let bytes = VectorTileShape.bytes(hex: row[6]), let names = VectorTileShape.layerNames(bytes) else {
                XCTFail("\(name) is not a raw vector tile after inflating: \(row[6].prefix(16))")
                continue
            }
            layers.formUnion(names)
        }
        XCTAssertGreaterThan(compressedRows, 0, "vector tiles are zlib-compressed at rest")
        XCTAssertTrue(layers.isSubset(of: ["land", "water", "roads", "places"]) && !layers.isEmpty, "\(layers)")
    }

    /// The stored payload, inflated when `compressed` is 1 (zlib, as MapLibre reads it); an error when it does not inflate.
    private static let payload = SQLiteShell.inflatedData

    /// Fails when this sqlite3 shell was built without zlib (no `sqlar_uncompress`).
    private func requireInflate(_ sql: SQLiteShell) throws {
        guard try SQLiteShell.canInflate() else { throw MissingTool("a sqlite3 shell with sqlar_uncompress (zlib)", package: "Debian's sqlite3") }
    }
}
