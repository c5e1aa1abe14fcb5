import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Stores built from provider-shaped styles (Mapbox, MapTiler, OpenFreeMap, a raster XYZ host, a
/// terrain host) served on loopback: every stored URL is the one MapLibre Native requests and
/// looks up, and no key reaches any output or any stored byte.
final class ProviderStyleTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    private var outputs: [(String, ProcessResult)] = []
    private static let zooms = 12...13
    private static let city = Demo.paris
    private var environment: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        let tile = try ws.tileBytes(TileAddress(z: 12, x: 1201, y: 1544))
        ProviderHost.install(on: ws.server, tile: tile)
    }

    @discardableResult
    private func run(_ arguments: String...) throws -> ProcessResult {
        try run(arguments)
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> ProcessResult {
        let result = try ProvisionProcess.provision(arguments, in: ws.root, environment: environment)
        outputs.append((arguments.joined(separator: " "), result))
        return result
    }

    private func writeJob(style: String? = nil, tilesets: [String] = [], pack: String = "pack") throws -> String {
        let region = Self.city.region(zoom: Self.zooms, stylePacks: style == nil ? [] : [pack],
                                      extra: tilesets.isEmpty ? [] : [("tilesets", .array(tilesets.map { .string($0) }))])
        let packs: [JSONValue] = style.map { [["id": .string(pack), "style": .string($0), "pixelRatio": 2,
                                               "glyphs": "ideographs-local"]] } ?? []
        return try ws.write(Demo.job(regions: [region], origins: ProviderHost.origins(ws.server), stylePacks: packs)).path
    }

    private func storedURLs(kind: ResourceKind) throws -> [String] {
        try ws.sqlite.rows("SELECT url FROM resources WHERE kind = \(kind.rawValue) ORDER BY url").map { $0[0] }
    }

    private func templates() throws -> [String] {
        try ws.sqlite.rows("SELECT DISTINCT url_template FROM tiles ORDER BY url_template").map { $0[0] }
    }

    private func expectedTiles(_ zooms: ClosedRange<Int>) -> Int {
        zooms.map { WebMercatorOracle.count(bbox: Self.city.bbox, zoom: $0) }.reduce(0, +)
    }

    /// plan, apply, a converged plan and a whole audit.
    private func applyConverges(_ job: String) throws {
        try run("validate", job).expect(0)
        try run("plan", "--json", job).expect(0)
        try run("apply", "--progress", "json", "--report", ws.root.appendingPathComponent("report.json").path, job).expect(0)
        try run("plan", "--detailed-exitcode", job).expect(0, "the store matches the job")
        try run("audit", "--verify", "--store", ws.store.path).expect(0)
    }

    // MARK: Mapbox

    func testAMapboxStyleIsStoredUnderMapboxURLsAndFetchedThroughAMirrorOfTheAPI() throws {
        environment = ["MAPBOX_ACCESS_TOKEN": ProviderHost.mapboxToken]
        let job = try writeJob(style: "mapbox://styles/provision-test/streets-v12")
        try applyConverges(job)

        XCTAssertEqual(try storedURLs(kind: .style), ["mapbox://styles/provision-test/streets-v12"])
        XCTAssertEqual(try storedURLs(kind: .source), ["mapbox://mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2"])
        XCTAssertEqual(try storedURLs(kind: .spriteImage), ["mapbox://sprites/provision-test/streets-v12.png",
                                                            "mapbox://sprites/provision-test/streets-v12@2x.png"])
        XCTAssertEqual(try storedURLs(kind: .spriteJSON), ["mapbox://sprites/provision-test/streets-v12.json",
                                                           "mapbox://sprites/provision-test/streets-v12@2x.json"])
        let glyphs = try storedURLs(kind: .glyphs)
        XCTAssertEqual(glyphs.count, 130)
        XCTAssertTrue(glyphs.contains("mapbox://fonts/provision-test/DIN%20Pro%20Medium%2cArial%20Unicode%20MS%20Regular/0-255.pbf"))
        XCTAssertEqual(try templates(), ["mapbox://tiles/mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2/{z}/{x}/{y}.vector.pbf"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), expectedTiles(Self.zooms))

        // Every request went to the mirror, with the token, on the API's own paths.
        let requests = ws.requests(under: "/mapbox/")
        XCTAssertFalse(requests.isEmpty)
        XCTAssertTrue(requests.allSatisfy { $0.target.contains("access_token=\(ProviderHost.mapboxToken)") })
        XCTAssertTrue(requests.contains { $0.path == "/mapbox/styles/v1/provision-test/streets-v12/sprite@2x.png" })
        XCTAssertTrue(requests.contains { $0.path == "/mapbox/v4/mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2.json" })
        XCTAssertTrue(requests.contains { $0.path.hasPrefix("/mapbox/fonts/v1/provision-test/DIN%20Pro%20Medium%2cArial") })
        XCTAssertTrue(requests.contains { $0.path.hasPrefix("/mapbox/v4/mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2/12/") })

        // The TileJSON echoed the token into its tile URLs; the stored copy has none.
        let tileJSON = try ws.sqlite.scalar(
            "SELECT replace(CAST(\(SQLiteShell.inflatedData) AS TEXT), char(10), ' ') FROM resources WHERE kind = \(ResourceKind.source.rawValue)")
        XCTAssertTrue(tileJSON.contains("/{z}/{x}/{y}.vector.pbf\""), tileJSON)
        XCTAssertFalse(tileJSON.contains("access_token"), tileJSON)
        // A saved plan carries the documents too, base64-encoded: applying it stores the same bytes.
        let saved = ws.root.appendingPathComponent("saved-plan.json")
        try run("plan", "--out", saved.path, job).expect(0)
        try run("apply", saved.path).expect(0)
        try ws.assertNoSecrets(ProviderHost.secrets, outputs: outputs,
                               files: [ws.root.appendingPathComponent("report.json"), saved, try ws.decodedSavedPlan(saved)])
    }

    func testEveryJobFileInJobsValidatesWithTheBinary() throws {
        let jobs = Demo.repositoryRoot.appendingPathComponent("Jobs")
        let files = try FileManager.default.contentsOfDirectory(atPath: jobs.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 6)
        try run(["validate", "--json"] + files.map { jobs.appendingPathComponent($0).path }).expect(0)
    }

    func testAMissingMapboxTokenIsAUsageErrorBeforeAnyRequest() throws {
        let job = try writeJob(style: "mapbox://styles/provision-test/streets-v12", pack: "mapbox-streets")
        for command in ["plan", "apply"] {
            let result = try run(command, job)
            result.expect(64)
            XCTAssertTrue(result.stderr.contains("style pack 'mapbox-streets'"), result.stderr)
            XCTAssertTrue(result.stderr.contains("export MAPBOX_ACCESS_TOKEN="), result.stderr)
        }
        environment = ["MAPBOX_ACCESS_TOKEN": ""]
        try run("plan", job).expect(64)
        XCTAssertEqual(ws.server.requests.count, 0, "nothing was requested")
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.database.path))
    }

    func testARefusedTokenIsExit69NamingTheStylePackNeverTheToken() throws {
        environment = ["MAPBOX_ACCESS_TOKEN": "pk.WRONG-TOKEN-123"]
        let job = try writeJob(style: "mapbox://styles/provision-test/streets-v12", pack: "mapbox-streets")
        for command in ["plan", "apply"] {
            let result = try run(command, job)
            result.expect(69)
            XCTAssertTrue(result.stderr.contains("the access token was refused"), result.stderr)
            XCTAssertTrue(result.stderr.contains("style pack 'mapbox-streets'"), result.stderr)
        }
        try ws.assertNoSecrets(["pk.WRONG-TOKEN-123"], outputs: outputs, files: [])
    }

    // MARK: MapTiler

    func testAMapTilerStyleWithItsKeyFromTheEnvironmentStoresNoKeyAnywhere() throws {
        environment = ["MAPTILER_KEY": ProviderHost.maptilerKey]
        let job = try writeJob(style: "https://api.maptiler.com/maps/streets-v2/style.json?key=${MAPTILER_KEY}")
        try applyConverges(job)

        XCTAssertEqual(try storedURLs(kind: .style), ["https://api.maptiler.com/maps/streets-v2/style.json"])
        XCTAssertEqual(try storedURLs(kind: .source), ["https://api.maptiler.com/tiles/v3/tiles.json"])
        XCTAssertEqual(try storedURLs(kind: .spriteImage), ["https://api.maptiler.com/maps/streets-v2/sprite.png",
                                                            "https://api.maptiler.com/maps/streets-v2/sprite@2x.png"])
        XCTAssertTrue(try storedURLs(kind: .glyphs).contains("https://api.maptiler.com/fonts/Roboto%20Regular/0-255.pbf"))
        XCTAssertEqual(try templates(), ["https://api.maptiler.com/tiles/v3/{z}/{x}/{y}.pbf"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), expectedTiles(Self.zooms))
        XCTAssertTrue(ws.requests(under: "/maptiler/").allSatisfy { $0.target.contains("key=\(ProviderHost.maptilerKey)") })
        try ws.assertNoSecrets(ProviderHost.secrets, outputs: outputs, files: [ws.root.appendingPathComponent("report.json")])
    }

    func testAnEmptyKeyVariableIsAUsageErrorNamingItAndThePack() throws {
        environment = ["MAPTILER_KEY": ""]
        let job = try writeJob(style: "https://api.maptiler.com/maps/streets-v2/style.json?key=${MAPTILER_KEY}",
                               pack: "maptiler-streets")
        let result = try run("apply", job)
        result.expect(64)
        XCTAssertTrue(result.stderr.contains("style pack 'maptiler-streets' names ${MAPTILER_KEY}, which is empty"), result.stderr)
        XCTAssertEqual(ws.server.requests.count, 0)
    }

    // MARK: OpenFreeMap, raster XYZ, terrain

    func testOpenFreeMapLibertyWithAnExtensionlessTileJSONAndALowZoomRasterSource() throws {
        let job = try writeJob(style: "https://tiles.openfreemap.org/styles/liberty")
        try applyConverges(job)
        XCTAssertEqual(try storedURLs(kind: .style), ["https://tiles.openfreemap.org/styles/liberty"])
        XCTAssertEqual(try storedURLs(kind: .source), ["https://tiles.openfreemap.org/planet"])
        let vector = "https://tiles.openfreemap.org/planet/20261101_001001_pt/{z}/{x}/{y}.pbf"
        let raster = "https://tiles.openfreemap.org/natural_earth/ne2sr/{z}/{x}/{y}.png"
        XCTAssertEqual(try templates(), [raster, vector])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template = '\(vector)'"), expectedTiles(Self.zooms))
        // The raster source stops at z6: its z6 tiles over the region are bundled so the layer draws offline.
        XCTAssertEqual(try ws.sqlite.rows("SELECT DISTINCT z FROM tiles WHERE url_template = '\(raster)'").map { $0[0] }, ["6"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles WHERE url_template = '\(raster)'"),
                       WebMercatorOracle.count(bbox: Self.city.bbox, zoom: 6))
    }

    func testARasterXYZHostAsARegionTileset() throws {
        let template = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
        let job = try writeJob(tilesets: [template])
        try applyConverges(job)
        XCTAssertEqual(try templates(), [template])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), expectedTiles(Self.zooms))
        XCTAssertTrue(ws.requests(under: "/osm/").contains { $0.path.hasPrefix("/osm/12/") })
    }

    func testARasterStyleOf256PixelTilesIsFetchedAtTheZoomMapLibreDrawsItAt() throws {
        let job = try writeJob(style: "https://styles.example.org/raster/style.json")
        try applyConverges(job)
        XCTAssertEqual(try templates(), ["https://tile.openstreetmap.org/{z}/{x}/{y}.png"])
        // A 256-pixel raster source is drawn one zoom up (MapLibre rounds z + log2(512/256)).
        XCTAssertEqual(try ws.sqlite.rows("SELECT DISTINCT z FROM tiles ORDER BY z").map { $0[0] }, ["13", "14"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), expectedTiles(13...14))
    }

    func testATerrainPackFetchesRasterDEMTilesOneZoomUpForTheir256PixelTiles() throws {
        let job = try writeJob(style: "https://styles.example.org/terrain/style.json")
        try applyConverges(job)
        let template = "https://elevation.example.org/terrarium/{z}/{x}/{y}.png"
        XCTAssertEqual(try templates(), [template])
        XCTAssertEqual(try ws.sqlite.rows("SELECT DISTINCT z FROM tiles ORDER BY z").map { $0[0] }, ["13", "14"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM tiles"), expectedTiles(13...14))
    }
}
