import Foundation
import ProvisionCodecs
import ProvisionModel
import ProvisionTestSupport
import XCTest

extension Demo {
    /// A part of New York: 120 tiles at the demo zooms, enough to interrupt an apply in the middle.
    static let manhattan = City(id: "manhattan", name: "Manhattan", bbox: [-74.05, 40.65, -73.90, 40.80])
}

extension Workspace {
    /// Serves every tile of `cities` from the tile tree after `delay` seconds each (the tile
    /// tree must be served first with `serveTiles()`); returns the paths of the slow tiles.
    @discardableResult
    func serveSlowTiles(_ cities: [Demo.City], delay: TimeInterval) throws -> Set<String> {
        var paths: Set<String> = []
        for tile in cities.reduce(into: Set<TileAddress>(), { $0.formUnion($1.tiles) }) {
            let path = tilePath(tile)
            server.setRoute(path, .delay(delay, then: .ok(try tileBytes(tile), contentType: "application/x-protobuf")))
            paths.insert(path)
        }
        return paths
    }

    /// Starts `provision arguments…` in the background.
    func start(_ arguments: String..., environment: [String: String] = [:],
               file: StaticString = #filePath, line: UInt = #line) throws -> BackgroundProvision {
        try BackgroundProvision(arguments, in: root, environment: environment, file: file, line: line)
    }

    /// Paths of the tile requests the server received, in order.
    var tileRequestPaths: [String] { requests(under: "/tiles/").map(\.path) }

    /// The served paths of the tiles `offline.db` holds, read with a shell that may write (so a
    /// hot journal a killed writer left is rolled back first, as the next reader would).
    func storedTilePaths(in database: URL? = nil) throws -> Set<String> {
        let rows = try WritableSQLite(database: database ?? self.database).rows("SELECT z, x, y FROM tiles")
        return Set(rows.compactMap { row in row.count == 3 ? "/tiles/\(row[0])/\(row[1])/\(row[2]).pbf" : nil })
    }

    /// The tiles a killed apply committed: those in `offline.db` and those in the new file it was
    /// writing (`offline.db.canonical`), which the next apply takes back into the store.
    func committedTilePaths() throws -> Set<String> {
        let partial = URL(fileURLWithPath: database.path + ".canonical")
        guard FileManager.default.fileExists(atPath: partial.path) else { return try storedTilePaths() }
        return try storedTilePaths().union(storedTilePaths(in: partial))
    }

    /// `PRAGMA integrity_check` through the sqlite3 shell (rolling back a hot journal first).
    func integrityCheck(_ database: URL? = nil) throws -> String {
        try WritableSQLite(database: database ?? self.database).rows("PRAGMA integrity_check")
            .map { $0.joined(separator: "|") }.joined(separator: "\n")
    }

    /// The sha256 of a file's bytes, or "absent".
    func sha256(_ url: URL) -> String {
        guard let data = try? Data(contentsOf: url) else { return "absent" }
        return SHA256.hex(data)
    }

    /// The `complete` flag of each region in the lock, by key.
    func lockCompleteness() throws -> [String: Bool] {
        let lock = try readJSON(self.lock)
        return Dictionary(uniqueKeysWithValues: (lock["regions"]?.arrayValue ?? []).compactMap { region in
            guard let key = region["key"]?.stringValue, case .bool(let complete)? = region["complete"] else { return nil }
            return (key, complete)
        })
    }

    /// Names in the store directory, sorted.
    func storeEntries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.path).sorted()
    }
}

/// The sqlite3 shell opening a database read-write: on open it rolls back a hot journal, as
/// any SQLite reader that can write does.
struct WritableSQLite {
    /// The database file.
    let database: URL

    /// Runs `sql`; one array of `|`-separated fields per output line. It waits for a live
    /// writer's lock rather than failing.
    func rows(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String]] {
        let result = try ProvisionProcess.run(
            SQLiteShell.executable(), ["-batch", "-noheader", "-separator", "|", "-cmd", ".timeout 10000", database.path, sql],
            in: database.deletingLastPathComponent(), environment: ProcessInfo.processInfo.environment, timeout: 30,
            file: file, line: line)
        guard result.status == 0, result.stderr.isEmpty else {
            XCTFail("sqlite3 failed (\(result.status)) on \(sql): \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadCorruptFile)
        }
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: true)
            .map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs statements that change the database.
    func exec(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try rows(sql, file: file, line: line)
    }
}
