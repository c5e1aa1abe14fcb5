import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// One test's world: a temporary directory for job files and the store, and a loopback HTTP
/// server that serves Examples/demo under `/demo/` (and, on request, the demo tiles under `/tiles/`).
final class Workspace {
    /// Where tiles come from in a job.
    enum TileOrigin {
        /// The demo MBTiles archive, through an `mbtiles:` origin.
        case mbtiles
        /// The loopback server's `/tiles/` tree (HTTP through libcurl).
        case http
    }

    /// The temporary directory; removed by `tearDown()`.
    let root: URL
    /// The loopback server.
    let server: LoopbackHTTPServer
    /// The store directory the jobs name (`store`, relative to the job file).
    var store: URL { root.appendingPathComponent("store") }
    /// The offline database in the store.
    var database: URL { store.appendingPathComponent("offline.db") }
    /// The lock file in the store.
    var lock: URL { store.appendingPathComponent("provision.lock.json") }
    /// The tile tree served under `/tiles/`, once `serveTiles()` ran.
    private(set) var tileTree: URL?

    /// Creates the directory and starts the server.
    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("provision-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        server = try LoopbackHTTPServer()
        server.serveDirectory(Demo.directory, at: "/demo/")
    }

    /// Stops the server and deletes everything.
    func tearDown() {
        server.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The mirror base of the demo documents on the loopback server.
    var documentsMirror: String { server.baseURL + "/demo/" }

    /// Extracts the demo tiles into `z/x/y.pbf` files (gzipped, as the archive holds them) and serves them.
    func serveTiles() throws {
        let tree = root.appendingPathComponent("tile-tree")
        try SQLiteShell.extractTiles(from: Demo.mbtiles, to: tree)
        server.serveDirectory(tree, at: "/tiles/")
        tileTree = tree
    }

    /// Copies the demo documents and the tile tree (`serveTiles()` first) to `upstream/` for a
    /// test to change, and returns it: `tiles/` holds the tree, the rest as in Examples/demo.
    @discardableResult
    func copyUpstream() throws -> URL {
        let upstream = root.appendingPathComponent("upstream")
        let fm = FileManager.default
        try fm.createDirectory(at: upstream, withIntermediateDirectories: true)
        for item in ["styles", "tilesets", "sprites", "fonts"] {
            try fm.copyItem(at: Demo.directory.appendingPathComponent(item), to: upstream.appendingPathComponent(item))
        }
        try fm.copyItem(at: root.appendingPathComponent("tile-tree"), to: upstream.appendingPathComponent("tiles"))
        return upstream
    }

    /// The served path of a tile.
    func tilePath(_ tile: TileAddress) -> String { "/tiles/\(tile.z)/\(tile.x)/\(tile.y).pbf" }

    /// The bytes the tile tree holds for a tile.
    func tileBytes(_ tile: TileAddress) throws -> Data {
        guard let tree = tileTree else { throw CocoaError(.fileNoSuchFile) }
        return try Data(contentsOf: tree.appendingPathComponent("\(tile.z)/\(tile.x)/\(tile.y).pbf"))
    }

    /// Origins that send the demo documents to the loopback server and tiles to `tiles`.
    func origins(tiles: TileOrigin) -> [(String, JSONValue)] {
        let tileMirror: JSONValue
        switch tiles {
        case .mbtiles: tileMirror = .string("mbtiles:" + Demo.mbtiles.path)
        case .http: tileMirror = .string(server.baseURL + "/tiles/")
        }
        return [(Demo.canonicalTiles, tileMirror), (Demo.canonicalBase, .string(documentsMirror))]
    }

    /// A job over `cities` with the demo style pack.
    func job(_ cities: [Demo.City], tiles: TileOrigin) -> JSONValue {
        Demo.job(regions: cities.map { $0.region() }, origins: origins(tiles: tiles))
    }

    /// Writes a job file into the workspace and returns its path.
    @discardableResult
    func write(_ job: JSONValue, to name: String = "job.json") throws -> URL {
        let url = root.appendingPathComponent(name)
        try job.data(.prettySorted).write(to: url)
        return url
    }

    /// Writes raw text as a job file.
    @discardableResult
    func write(text: String, to name: String) throws -> URL {
        let url = root.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Runs the built binary in the workspace.
    func provision(_ arguments: String..., environment: [String: String] = [:],
                   file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try ProvisionProcess.provision(arguments, in: root, environment: environment, file: file, line: line)
    }

    /// The store's database through the sqlite3 shell.
    var sqlite: SQLiteShell { SQLiteShell(database: database) }

    /// Requests the server received whose path starts with `prefix`.
    func requests(under prefix: String) -> [LoopbackHTTPServer.LoggedRequest] {
        server.requests.filter { $0.path.hasPrefix(prefix) }
    }
}

/// Parses a command's stdout as JSON, failing the test with the output when it is not.
func parseJSON(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
    do {
        return try JSONValue.parse(Data(text.utf8))
    } catch {
        XCTFail("not JSON (\(error)):\n\(text.prefix(2000))", file: file, line: line)
        throw error
    }
}

/// Reads and parses a JSON file.
func readJSON(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
    try parseJSON(String(decoding: try Data(contentsOf: url), as: UTF8.self), file: file, line: line)
}

extension ProcessResult {
    /// Asserts the exit status, showing the output on failure.
    func expect(_ status: Int32, _ what: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(self.status, status, "\(what)\n--- stdout:\n\(stdout.prefix(3000))\n--- stderr:\n\(stderr.prefix(3000))",
                       file: file, line: line)
    }
}
