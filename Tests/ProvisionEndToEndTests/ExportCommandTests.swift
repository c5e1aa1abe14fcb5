import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import XCTest

/// `provision export`: every archive read back by readers independent of provision (the
/// `pmtiles` package, Python's sqlite3, the `sqlite3` shell, GDAL) equals the store tile for
/// tile; the same store gives the same bytes and is never changed; a bundle renders in MapLibre
/// Native with no network; every refusal has its exit code.
final class ExportCommandTests: WorkspaceTestCase {
    private static let time = ["SOURCE_DATE_EPOCH": "1700000000"]
    private static let template = Demo.canonicalTiles + "{z}/{x}/{y}.pbf"
    /// A region tileset given as a bare URL template (served from the demo archive too).
    private static let overlay = "https://tiles.example.com/demo/overlay/{z}/{x}/{y}.pbf"

    private func url(_ name: String) -> URL { ws.root.appendingPathComponent(name) }

    /// Applies `cities` with the demo style pack; London also draws `overlay` when `withOverlay`.
    private func applyDemo(_ cities: [Demo.City] = [Demo.london, Demo.paris], withOverlay: Bool = false) throws {
        let regions = cities.map { city in
            withOverlay && city.id == Demo.london.id ? city.region(extra: [("tilesets", [.string(Self.overlay)])]) : city.region()
        }
        var origins = ws.origins(tiles: .mbtiles)
        origins.insert(("https://tiles.example.com/demo/overlay/", .string("mbtiles:" + Demo.mbtiles.path)), at: 0)
        let job = try ws.write(Demo.job(regions: regions, origins: origins))
        try ws.provision("apply", "--quiet", job.path, environment: Self.time).expect(0)
    }

    @discardableResult
    private func export(_ arguments: String..., status: Int32 = 0, file: StaticString = #filePath,
                        line: UInt = #line) throws -> ProcessResult {
        let result = try ProvisionProcess.provision(["export", "--store", ws.store.path] + arguments, in: ws.root,
                                                    file: file, line: line)
        result.expect(status, file: file, line: line)
        return result
    }

    private func storeTiles(_ template: String = template, regions: [Int] = []) throws -> Int {
        let filter = regions.isEmpty ? "" : " AND id IN (SELECT tile_id FROM region_tiles WHERE region_id IN (\(regions.map(String.init).joined(separator: ","))))"
        return try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template = '\(template)' AND length(data) > 0\(filter)")
    }

    /// Asserts the oracle found every store tile, byte for byte, and nothing else.
    private func assertEqualTiles(_ report: JSONValue, count: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(report["storeTiles"]?.intValue, count, file: file, line: line)
        XCTAssertEqual(report["archiveTiles"]?.intValue, count, file: file, line: line)
        XCTAssertEqual(report["equalTiles"]?.intValue, count, file: file, line: line)
        for key in ["differing", "missing", "extra"] {
            XCTAssertEqual(report[key], .array([]), key, file: file, line: line)
        }
    }

    private func tileJSON() throws -> JSONValue {
        try readJSON(Demo.directory.appendingPathComponent("tilesets/streets.json"))
    }

    func testPMTilesHoldEveryStoreTileAsThePMTilesPackageReadsThem() throws {
        try applyDemo([Demo.newYork, Demo.london, Demo.paris])
        let out = url("streets.pmtiles")
        let result = try export("--format", "pmtiles", "--out", out.path, "--json")
        let report = try ExportOracles.check("pmtiles", out, store: ws.store, template: Self.template)
        let tiles = try storeTiles()
        assertEqualTiles(report, count: tiles)
        XCTAssertEqual(report["lookupsEqual"], true, "Reader.get finds every tile through the directories")
        XCTAssertEqual(report["gzipped"]?.intValue, tiles, "vector tiles are gzip members")
        let header = try XCTUnwrap(report["header"])
        XCTAssertEqual(header["tile_compression"], "GZIP")
        XCTAssertEqual(header["internal_compression"], "GZIP")
        XCTAssertEqual(header["tile_type"], "MVT")
        XCTAssertEqual(header["clustered"], true)
        XCTAssertEqual(header["addressed_tiles_count"]?.intValue, tiles)
        let distinct = try ws.sqlite.int("SELECT count(DISTINCT data) FROM tiles")
        XCTAssertEqual(header["tile_contents_count"]?.intValue, report["distinct"]?.intValue)
        XCTAssertLessThanOrEqual(try XCTUnwrap(header["tile_contents_count"]?.intValue), distinct, "equal tiles stored once")
        XCTAssertLessThan(try XCTUnwrap(header["tile_entries_count"]?.intValue), tiles, "runs of equal tiles share an entry")
        XCTAssertEqual(header["min_zoom"], 10)
        XCTAssertEqual(header["max_zoom"], 14)
        // Bounds: the three cities' union (inside the stored tiles), centre at the lowest zoom.
        XCTAssertEqual(header["min_lon_e7"], .int(Int(Demo.newYork.bbox[0] * 1e7)))
        XCTAssertEqual(header["min_lat_e7"], .int(Int((Demo.newYork.bbox[1] * 1e7).rounded())))
        XCTAssertEqual(header["max_lon_e7"], .int(Int((Demo.paris.bbox[2] * 1e7).rounded())))
        XCTAssertEqual(header["max_lat_e7"], .int(Int((Demo.london.bbox[3] * 1e7).rounded())))
        XCTAssertEqual(header["center_zoom"], 10)
        let metadata = try XCTUnwrap(report["metadata"])
        let tileJSON = try tileJSON()
        XCTAssertEqual(metadata["attribution"], tileJSON["attribution"])
        XCTAssertEqual(metadata["vector_layers"]?.serialized(.canonical), tileJSON["vector_layers"]?.serialized(.canonical))
        XCTAssertEqual(metadata["name"], tileJSON["name"])

        let document = try parseJSON(result.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(document), [])
        XCTAssertEqual(document["files"]?.arrayValue?.first?["tiles"]?.intValue, tiles)
        XCTAssertEqual(document["files"]?.arrayValue?.first?["bytes"]?.intValue, try fileSize(out))
    }

    func testMBTilesAreReadBySQLiteAndGDAL() throws {
        try applyDemo()
        let out = url("streets.mbtiles")
        try export("--format", "mbtiles", "--out", out.path)
        let tiles = try storeTiles()
        let report = try ExportOracles.check("mbtiles", out, store: ws.store, template: Self.template)
        assertEqualTiles(report, count: tiles)
        XCTAssertEqual(report["integrity"], "ok")
        XCTAssertEqual(report["objects"]?["tiles"], "view")
        XCTAssertEqual(report["objects"]?["map"], "table")
        XCTAssertEqual(report["objects"]?["images"], "table")
        XCTAssertEqual(report["images"]?.intValue, try ws.sqlite.int("SELECT count(DISTINCT data) FROM tiles"),
                       "one image row a distinct tile")
        XCTAssertEqual(report["gzipped"]?.intValue, tiles)
        let metadata = try XCTUnwrap(report["metadata"])
        let tileJSON = try tileJSON()
        XCTAssertEqual(metadata["format"], "pbf")
        XCTAssertEqual(metadata["minzoom"], "10")
        XCTAssertEqual(metadata["maxzoom"], "14")
        XCTAssertEqual(metadata["name"], tileJSON["name"])
        XCTAssertEqual(metadata["attribution"], tileJSON["attribution"])
        // London and Paris: west and south from London, east and north from London and Paris.
        XCTAssertEqual(metadata["bounds"], "-0.1278,48.8366,2.3822,51.5174")
        XCTAssertEqual(metadata["center"], "1.1272,50.177,10")
        let json = try parseJSON(try XCTUnwrap(metadata["json"]?.stringValue))
        XCTAssertEqual(json["vector_layers"]?.serialized(.canonical), tileJSON["vector_layers"]?.serialized(.canonical))

        // The sqlite3 shell, and GDAL's MBTiles driver reading the vector layers and features.
        let shell = SQLiteShell(database: out)
        XCTAssertEqual(try shell.int("SELECT count(*) FROM tiles"), tiles)
        XCTAssertEqual(try shell.int("PRAGMA application_id"), 0x4D50_4258)
        let layers = try ExportOracles.ogrinfo(["-ro", "-so", "-oo", "ZOOM_LEVEL=14", out.path])
        for layer in ["land", "water", "roads", "places"] {
            XCTAssertTrue(layers.split(separator: "\n").contains { $0.hasSuffix(": \(layer)") || $0.contains(": \(layer) (") },
                          "GDAL lists layer \(layer): \(layers)")
        }
        let features = try ExportOracles.ogrinfo(["-ro", "-so", "-oo", "ZOOM_LEVEL=12", out.path, "water"])
        XCTAssertTrue(features.contains("Feature Count: "), features)
        XCTAssertFalse(features.contains("Feature Count: 0\n"), "GDAL decodes water features at z12: \(features)")
    }

    func testTheSameStoreGivesTheSameBytesAndStaysUnchanged() throws {
        try applyDemo()
        let before = try digest(ws.database), lockBefore = try digest(ws.lock)
        for format in ["pmtiles", "mbtiles"] {
            try export("--format", format, "--out", url("a.\(format)").path)
            try export("--format", format, "--out", url("b.\(format)").path)
            XCTAssertEqual(try digest(url("a.\(format)")), try digest(url("b.\(format)")), format)
        }
        try export("--format", "bundle", "--out", url("bundle-a").path)
        try export("--format", "bundle", "--out", url("bundle-b").path)
        for name in ["streets.pmtiles", "streets.style.json", "sprites/streets@2x.png", "fonts/Noto Sans Regular/0-255.pbf"] {
            XCTAssertEqual(try digest(url("bundle-a/\(name)")), try digest(url("bundle-b/\(name)")), name)
        }
        XCTAssertEqual(try digest(ws.database), before, "export never writes the store")
        XCTAssertEqual(try digest(ws.lock), lockBefore)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.hasPrefix(".") }, [],
                       "no temporary file is left")
    }

    func testSeveralSourcesNeedSourceOrAnOutputDirectory() throws {
        try applyDemo(withOverlay: true)
        let refused = try export("--format", "pmtiles", "--out", url("one.pmtiles").path, status: 64)
        XCTAssertTrue(refused.stderr.contains("2 sources (overlay, streets)"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--source NAME"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("one.pmtiles").path))
        let typo = try export("--format", "pmtiles", "--source", "street", "--out", url("one.pmtiles").path, status: 64)
        XCTAssertTrue(typo.stderr.contains("did you mean 'streets'"), typo.stderr)

        // The name audit lists for the bare template selects it.
        let audit = try parseJSON(try ws.provision("audit", "--json").stdout)
        let names = audit["sources"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(names, ["overlay", "streets"])
        XCTAssertEqual(audit["sources"]?.arrayValue?.first?["template"], .string(Self.overlay))
        try export("--format", "mbtiles", "--source", "overlay", "--out", url("overlay.mbtiles").path)
        assertEqualTiles(try ExportOracles.check("mbtiles", url("overlay.mbtiles"), store: ws.store, template: Self.overlay),
                         count: try storeTiles(Self.overlay))

        let all = try export("--format", "pmtiles", "--out", url("all").path + "/", "--json")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: url("all").path).sorted(),
                       ["overlay.pmtiles", "streets.pmtiles"])
        XCTAssertEqual(try parseJSON(all.stdout)["files"]?.arrayValue?.count, 2)
        assertEqualTiles(try ExportOracles.check("pmtiles", url("all/overlay.pmtiles"), store: ws.store, template: Self.overlay),
                         count: try storeTiles(Self.overlay))
    }

    func testARegionExportsOnlyItsTilesAndExtent() throws {
        try applyDemo()
        let lock = try readJSON(ws.lock)
        let paris = try XCTUnwrap(lock["regions"]?.arrayValue?.first { $0["id"] == "paris" }?["rowId"]?.intValue)
        try export("--format", "pmtiles", "--region", "paris", "--out", url("paris.pmtiles").path)
        let report = try ExportOracles.check("pmtiles", url("paris.pmtiles"), store: ws.store, template: Self.template,
                                             regions: [paris])
        assertEqualTiles(report, count: try storeTiles(regions: [paris]))
        XCTAssertEqual(report["storeTiles"]?.intValue, Demo.paris.tiles.count)
        XCTAssertEqual(report["header"]?["min_lon_e7"], .int(Int((Demo.paris.bbox[0] * 1e7).rounded())))
        XCTAssertEqual(report["header"]?["max_lat_e7"], .int(Int((Demo.paris.bbox[3] * 1e7).rounded())))
        let unknown = try export("--format", "pmtiles", "--region", "pari", "--out", url("x.pmtiles").path, status: 64)
        XCTAssertTrue(unknown.stderr.contains("did you mean 'paris'"), unknown.stderr)
    }

    func testABundleRendersInMapLibreNativeWithNoNetwork() throws {
        try applyDemo([Demo.newYork, Demo.london, Demo.paris])
        let bundle = url("bundle")
        let result = try export("--format", "bundle", "--out", bundle.path, "--json")
        let document = try parseJSON(result.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(document), [])
        XCTAssertEqual(document["bundle"]?["styles"], ["streets.style.json"])
        XCTAssertEqual(document["bundle"]?["onlineSources"], [])

        // The style: sources read the archive, sprite and glyphs are relative; nothing else changed.
        let style = try readJSON(bundle.appendingPathComponent("streets.style.json"))
        let original = try readJSON(Demo.directory.appendingPathComponent("styles/streets.json"))
        XCTAssertEqual(style["sources"], ["streets": ["type": "vector", "url": "pmtiles://streets.pmtiles"]])
        XCTAssertEqual(style["sprite"], "sprites/streets")
        XCTAssertEqual(style["glyphs"], "fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(style["layers"], original["layers"])
        // Sprites and glyphs are the stored bytes.
        for (file, canonical) in [("sprites/streets@2x.png", "sprites/streets@2x.png"), ("sprites/streets.json", "sprites/streets.json"),
                                  ("fonts/Noto Sans Regular/0-255.pbf", "fonts/Noto%20Sans%20Regular/0-255.pbf")] {
            let stored = try ws.sqlite.scalar("""
                SELECT hex(\(SQLiteShell.inflatedData)) FROM resources WHERE url = '\(Demo.canonicalBase)\(canonical)'
                """)
            XCTAssertEqual(try Data(contentsOf: bundle.appendingPathComponent(file)).map { String(format: "%02X", $0) }.joined(),
                           stored, file)
        }
        let glyphs = try FileManager.default.contentsOfDirectory(atPath: bundle.appendingPathComponent("fonts/Noto Sans Regular").path)
        XCTAssertEqual(glyphs.count, try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 4"))
        let readme = try String(contentsOf: bundle.appendingPathComponent("README.txt"), encoding: .utf8)
        XCTAssertTrue(readme.hasPrefix("provision export bundle\n"))
        for phrase in ["pmtiles://file://", "asset://bundle/", "addProtocol(\"pmtiles\"", "copy this\ndirectory out of the APK"] {
            XCTAssertTrue(readme.contains(phrase), "README.txt says \(phrase)")
        }
        assertEqualTiles(try ExportOracles.check("pmtiles", bundle.appendingPathComponent("streets.pmtiles"), store: ws.store,
                                                 template: Self.template), count: try storeTiles())

        // MapLibre Native renders New York from the bundle in a network namespace with no
        // interface up: the same pixels as from the MBTiles export, unlike a render without tiles.
        try export("--format", "mbtiles", "--out", url("streets.mbtiles").path)
        let view = ["-73.98", "40.75", "12"]
        let render = { (name: String, extra: [String]) throws -> JSONValue in
            try ExportOracles.run("render_bundle.py", [bundle.path, "streets.style.json", self.url(name).path] + view + extra,
                                  environment: ["EGL_PLATFORM": "surfaceless"], wrapper: try Self.offline())
        }
        let fromBundle = try render("bundle.png", [])
        let fromMBTiles = try render("mbtiles.png", ["--source", "streets=mbtiles://" + url("streets.mbtiles").path])
        let withoutTiles = try render("empty.png", ["--no-source", "streets"])
        XCTAssertEqual(fromBundle["urls"], .array([.string("pmtiles://file://\(bundle.path)/streets.pmtiles"),
                                                   .string("file://\(bundle.path)/sprites/streets"),
                                                   .string("file://\(bundle.path)/fonts/{fontstack}/{range}.pbf")]))
        XCTAssertEqual(fromBundle["pixels"], fromMBTiles["pixels"], "the PMTiles and MBTiles exports draw the same map")
        XCTAssertNotEqual(fromBundle["pixels"], withoutTiles["pixels"], "the tiles are drawn")
        XCTAssertEqual(withoutTiles["distinctColors"], 1, "without tiles only the background")
        let water = try XCTUnwrap(fromBundle["colors"]?["#a8cce8"]?.intValue, "water (#a8cce8) is drawn")
        XCTAssertGreaterThan(water, 10_000)
        XCTAssertGreaterThan(try XCTUnwrap(fromBundle["distinctColors"]?.intValue), 100, "roads, labels and icons")
    }

    func testRefusalsHaveTheirExitCodes() throws {
        let missing = try ProvisionProcess.provision(["export", "--store", url("nowhere").path, "--format", "mbtiles",
                                                      "--out", url("x.mbtiles").path], in: ws.root)
        missing.expect(66)
        try applyDemo([Demo.paris])
        try export("--format", "mbtiles", status: 64)
        try export("--out", url("x.mbtiles").path, status: 64)
        try export("--format", "zip", "--out", url("x").path, status: 64)
        try export("--format", "bundle", "--source", "streets", "--out", url("b").path, status: 64)
        try export("--format", "mbtiles", "--out", ws.database.path, status: 64)
        try export("--format", "pmtiles", "--out", ws.store.appendingPathComponent("x.pmtiles").path, status: 64)
        try export("--format", "bundle", "--out", ws.store.path, status: 64)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.store.path).sorted(),
                       ["offline.db", "provision.lock.json"])
        try export("--format", "mbtiles", "--out", url("no/such/dir/x.mbtiles").path, status: 73)
        try FileManager.default.createDirectory(at: url("mine"), withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: url("mine/notes.txt"))
        let occupied = try export("--format", "bundle", "--out", url("mine").path, status: 73)
        XCTAssertTrue(occupied.stderr.contains("is not a bundle"), occupied.stderr)
        XCTAssertEqual(try String(contentsOf: url("mine/notes.txt"), encoding: .utf8), "keep")
        // A bundle replaces an earlier bundle.
        try export("--format", "bundle", "--out", url("b").path)
        try export("--format", "bundle", "--out", url("b").path)

        // A stored tile that does not inflate is damaged input, named; nothing is written.
        _ = try ws.sqlite.rows("UPDATE tiles SET data = x'789c0000', compressed = 1 WHERE id = (SELECT min(id) FROM tiles)",
                               writing: true)
        let damaged = try export("--format", "pmtiles", "--out", url("d.pmtiles").path, "--json", status: 65)
        XCTAssertTrue(damaged.stderr.contains("cannot read source 'streets'"), damaged.stderr)
        XCTAssertEqual(try parseJSON(damaged.stdout)["exitCode"], 65)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("d.pmtiles").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.hasPrefix(".") }, [])
    }

    func testAnUnreadableStoredTileJSONIsAWarningInTheTextAndTheJSON() throws {
        try applyDemo([Demo.paris])
        let tileJSONURL = Demo.canonicalBase + "tilesets/streets.json"
        _ = try ws.sqlite.rows("UPDATE resources SET data = CAST('not json' AS BLOB), compressed = 0 WHERE url = '\(tileJSONURL)'",
                               writing: true)
        let json = try export("--format", "pmtiles", "--out", url("w.pmtiles").path, "--json")
        let report = try parseJSON(json.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(report), [], json.stdout)
        let warnings = report["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.hasPrefix("the stored TileJSON \(tileJSONURL) of source 'streets' of style pack 'streets' "
                                                + "is not valid JSON (") == true, "\(warnings)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: url("w.pmtiles").path), "the tiles are exported all the same")
        let text = try export("--format", "pmtiles", "--out", url("t.pmtiles").path)
        XCTAssertTrue(text.stdout.contains("warning: the stored TileJSON \(tileJSONURL)"), text.stdout)
    }

    func testEventsFollowTheSchema() throws {
        try applyDemo([Demo.paris])
        let result = try export("--format", "pmtiles", "--out", url("p.pmtiles").path, "--progress", "json")
        let schema = try SchemaSubset(named: "events.schema.json")
        let events = try result.stderr.split(separator: "\n").map { try parseJSON(String($0)) }
        XCTAssertEqual(events.compactMap { $0["event"]?.stringValue }, ["export-started", "export-file", "export-finished"])
        for event in events { XCTAssertEqual(schema.problems(event), [], event.serialized()) }
    }

    // MARK: Helpers

    /// `unshare -n` (a network namespace with no interface up) when this user may make one, so a
    /// render that reached for the network would fail; else nothing.
    private static func offline() throws -> [String] {
        guard let unshare = ProvisionProcess.onPath("unshare") else { return [] }
        let probe = try ProvisionProcess.run(unshare, ["-n", "true"], in: FileManager.default.temporaryDirectory,
                                             environment: ProcessInfo.processInfo.environment, timeout: 10)
        return probe.status == 0 ? [unshare.path, "-n"] : []
    }

    private func digest(_ url: URL) throws -> String {
        SHA256.hex(try Data(contentsOf: url))
    }

    private func fileSize(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? -1
    }
}
