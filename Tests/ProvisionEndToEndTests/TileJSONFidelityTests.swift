import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Issue 9, points 2 and 4: a style whose TileJSONs have relative templates, bounds smaller than
/// the region, several templates, an extension-less URL, and a source stopping at z6 below a
/// region at z10–12. The apply requests exactly the tiles computed here, the plan after it has
/// no changes, and the audit finds the store whole.
final class TileJSONFidelityTests: WorkspaceTestCase {
    static let base = "https://tiles.example.com/e2e/"
    /// Around Greenwich, across the z6 column boundary at 0°.
    static let region = [-0.2, 51.42, 0.2, 51.6]
    static let zooms = 10...12
    /// The streets TileJSON's bounds: smaller than the region on every side.
    static let bounds = [-0.1, 51.45, 0.05, 51.55]
    /// A minimal Mapbox Vector Tile: one layer named "a", version 2.
    static let tile = Data([0x1a, 0x05, 0x0a, 0x01, 0x61, 0x78, 0x02])

    /// Columns floor(xWest)…floor(xEast) and rows floor(yNorth)…floor(ySouth), inclusive: MapLibre's
    /// `TileRange::fromLatLngBounds`, from the textbook formulas.
    static func inBounds(_ tile: TileAddress) -> Bool {
        let x = Int(floor(WebMercatorOracle.x(bounds[0], zoom: tile.z)))...Int(floor(WebMercatorOracle.x(bounds[2], zoom: tile.z)))
        let y = Int(floor(WebMercatorOracle.y(bounds[3], zoom: tile.z)))...Int(floor(WebMercatorOracle.y(bounds[1], zoom: tile.z)))
        return x.contains(tile.x) && y.contains(tile.y)
    }

    /// Writes the upstream documents and a tile for every tile of the region's unclipped cover
    /// (so a request outside the bounds would be answered, and seen).
    private func writeUpstream() throws -> URL {
        let root = ws.root.appendingPathComponent("upstream")
        func write(_ json: JSONValue, _ path: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try json.data(.prettySorted).write(to: url)
        }
        try write(["version": 8, "name": "fidelity", "layers": [], "sources": [
            "streets": ["type": "vector", "url": .string(Self.base + "tilesets/streets.json")],
            "landcover": ["type": "vector", "url": .string(Self.base + "tiles/v3")],
        ]], "styles/style.json")
        try write(["tilejson": "3.0.0", "minzoom": 0, "maxzoom": 14, "bounds": .array(Self.bounds.map { .double($0) }),
                   "tiles": ["../tiles/streets/{z}/{x}/{y}.pbf?key=abc", "https://mirror.example/{z}/{x}/{y}.pbf"]],
                  "tilesets/streets.json")
        try write(["tilejson": "3.0.0", "maxzoom": 6, "tiles": ["/e2e/landcover/{z}/{x}/{y}.pbf"]], "tiles/v3")
        let all = WebMercatorOracle.tiles(bbox: Self.region, zooms: Self.zooms)
        for t in all {
            let url = root.appendingPathComponent("tiles/streets/\(t.z)/\(t.x)/\(t.y).pbf")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.tile.write(to: url)
        }
        for t in WebMercatorOracle.tiles(bbox: Self.region, zooms: 5...7) {
            let url = root.appendingPathComponent("landcover/\(t.z)/\(t.x)/\(t.y).pbf")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.tile.write(to: url)
        }
        return root
    }

    /// Serves the upstream and writes the job; returns its path.
    private func setUpJob() throws -> String {
        ws.server.serveDirectory(try writeUpstream(), at: "/e2e/")
        let region: JSONValue = ["id": "greenwich", "name": "Greenwich", "bbox": .array(Self.region.map { .double($0) }),
                                 "zoom": [.int(Self.zooms.lowerBound), .int(Self.zooms.upperBound)], "stylePacks": ["s"]]
        let pack: JSONValue = ["id": "s", "style": .string(Self.base + "styles/style.json")]
        return try ws.write(Demo.job(regions: [region], origins: [(Self.base, .string(ws.server.baseURL + "/e2e/"))],
                                     stylePacks: [pack])).path
    }

    static let expectedStreets = WebMercatorOracle.tiles(bbox: region, zooms: zooms).filter(inBounds)
    static let expectedLandcover = WebMercatorOracle.tiles(bbox: region, zooms: 6...6)

    /// The tiles requested under `prefix` (`z/x/y.pbf` paths), in request order.
    private func requestedTiles(_ prefix: String) -> [TileAddress] {
        ws.requests(under: prefix).compactMap { request in
            let parts = request.path.dropFirst(prefix.count).dropLast(4).split(separator: "/").compactMap { Int($0) }
            return parts.count == 3 ? TileAddress(z: parts[0], x: parts[1], y: parts[2]) : nil
        }
    }

    /// A TileJSON whose template MapLibre could not request fails the plan with 65, naming the
    /// TileJSON's URL and the JSON pointer; nothing is fetched.
    func testUnusableTileJSONTemplateExits65NamingTheDocumentAndPointer() throws {
        let job = try setUpJob()
        let landcover = ws.root.appendingPathComponent("upstream/tiles/v3")
        let unusable: JSONValue = ["tilejson": "3.0.0", "tiles": ["file:///var/tiles/{z}/{x}/{y}.pbf"]]
        try unusable.data(.prettySorted).write(to: landcover)
        for command in ["plan", "apply"] {
            let result = try ws.provision(command, job)
            result.expect(65, command)
            XCTAssertTrue(result.stderr.contains(Self.base + "tiles/v3"), result.stderr)
            XCTAssertTrue(result.stderr.contains("/tiles/0"), result.stderr)
            XCTAssertTrue(result.stderr.contains("file:"), result.stderr)
        }
        XCTAssertEqual(requestedTiles("/e2e/tiles/streets/"), [])
    }

    /// A saved plan carries the bounds and the overzoom zoom: `apply PLAN` fetches the same tiles.
    func testSavedPlanAppliesTheSameClippedAndOverzoomedTiles() throws {
        let job = try setUpJob()
        let planFile = ws.root.appendingPathComponent("saved.plan.json").path
        try ws.provision("plan", "--quiet", "--out", planFile, job).expect(0)
        try ws.provision("apply", "--quiet", planFile).expect(0)
        XCTAssertEqual(requestedTiles("/e2e/tiles/streets/").sorted(), Self.expectedStreets.sorted())
        XCTAssertEqual(requestedTiles("/e2e/landcover/").sorted(), Self.expectedLandcover.sorted())
        try ws.provision("audit", "--store", ws.store.path).expect(0, "the store is whole")
    }

    func testRelativeTemplatesBoundsAndOverzoomFetchExactlyTheExpectedTiles() throws {
        let job = try setUpJob()
        let expectedStreets = Self.expectedStreets
        let expectedLandcover = Self.expectedLandcover
        XCTAssertLessThan(expectedStreets.count, WebMercatorOracle.tiles(bbox: Self.region, zooms: Self.zooms).count,
                          "the bounds must cut tiles for this test to mean anything")
        XCTAssertEqual(expectedLandcover.count, 2, "the region spans two z6 columns")

        let plan = try ws.provision("plan", "--json", job)
        plan.expect(0)
        let document = try parseJSON(plan.stdout)
        XCTAssertEqual(document["summary"]?["tilesToDownload"]?.intValue, expectedStreets.count + expectedLandcover.count)
        let notes = (document["notes"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue }
        XCTAssertTrue(notes.contains { $0.contains("source 'streets' lists 2 templates") }, "\(notes)")
        XCTAssertTrue(notes.contains { $0.contains("source 'landcover' stops at z6") && $0.contains("its 2 tiles") }, "\(notes)")

        try ws.provision("apply", "--quiet", job).expect(0)
        let streets = ws.requests(under: "/e2e/tiles/streets/")
        let landcover = ws.requests(under: "/e2e/landcover/")
        XCTAssertEqual(requestedTiles("/e2e/tiles/streets/").sorted(), expectedStreets.sorted(),
                       "streets: each once, none outside the bounds")
        XCTAssertEqual(requestedTiles("/e2e/landcover/").sorted(), expectedLandcover.sorted(), "landcover: z6 only")
        XCTAssertTrue(streets.allSatisfy { $0.target.hasSuffix(".pbf?key=abc") }, "the query is kept as written")
        let documents: Set = ["/e2e/styles/style.json", "/e2e/tilesets/streets.json", "/e2e/tiles/v3"]
        let others = ws.requests(under: "/e2e/").filter { !documents.contains($0.path) }
        XCTAssertEqual(others.count, streets.count + landcover.count, "nothing but the style, the TileJSONs and those tiles")
        XCTAssertEqual(Set(ws.requests(under: "/e2e/").map(\.path)).intersection(documents), documents)

        let templates = try ws.sqlite.rows("SELECT DISTINCT url_template FROM tiles ORDER BY url_template").map { $0[0] }
        XCTAssertEqual(templates, [Self.base + "landcover/{z}/{x}/{y}.pbf", Self.base + "tiles/streets/{z}/{x}/{y}.pbf?key=abc"])
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM region_tiles"), expectedStreets.count + expectedLandcover.count)

        try ws.provision("plan", "--detailed-exitcode", job).expect(0, "converged")
        try ws.provision("audit", "--store", ws.store.path).expect(0, "the store is whole")
        try ws.provision("audit", "--manifest", job, "--store", ws.store.path).expect(0, "and matches the job")
    }
}
