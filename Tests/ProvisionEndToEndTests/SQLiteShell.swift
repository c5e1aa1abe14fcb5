import Foundation
import ProvisionTestSupport
import XCTest

/// Queries a database with the `sqlite3` command-line shell, independently of the product's SQLite code.
struct SQLiteShell {
    /// The database file.
    let database: URL

    /// The `sqlite3` executable; fails the test when the machine has none.
    static func executable() throws -> URL {
        guard let url = ProvisionProcess.onPath("sqlite3") else {
            throw MissingTool("the sqlite3 command-line shell", package: "sqlite3")
        }
        return url
    }

    /// Runs `sql` (read-only unless `writing`); one array of `|`-separated fields per output line.
    func rows(_ sql: String, writing: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws -> [[String]] {
        let result = try ProvisionProcess.run(
            Self.executable(), (writing ? [] : ["-readonly"]) + ["-batch", "-noheader", "-separator", "|", database.path, sql],
            in: database.deletingLastPathComponent(), environment: ProcessInfo.processInfo.environment, timeout: 30,
            file: file, line: line)
        guard result.status == 0, result.stderr.isEmpty else {
            XCTFail("sqlite3 failed (\(result.status)) on \(sql): \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadCorruptFile)
        }
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The first field of the first row.
    func scalar(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try rows(sql, file: file, line: line).first?.first ?? ""
    }

    /// The first field of the first row as an integer (-1 when it is not one).
    func int(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        Int(try scalar(sql, file: file, line: line)) ?? -1
    }

    /// SQL for the `data` column inflated when `compressed` is 1 (zlib, as MapLibre reads it); a query
    /// using it fails when a row does not inflate.
    static let inflatedData = "CASE compressed WHEN 1 THEN sqlar_uncompress(data, 67108864) ELSE data END"

    /// Whether this shell was built with zlib (`sqlar_uncompress`), which `inflatedData` needs.
    static func canInflate() throws -> Bool {
        let probe = try ProvisionProcess.run(executable(), ["-batch", ":memory:", "SELECT sqlar_uncompress(x'00', 0)"],
                                             in: FileManager.default.temporaryDirectory,
                                             environment: ProcessInfo.processInfo.environment, timeout: 10)
        return probe.status == 0
    }

    /// Writes every tile of an MBTiles archive as `z/x/y.pbf` (XYZ rows, bytes as stored) under `directory`.
    static func extractTiles(from mbtiles: URL, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let sql = """
            SELECT count(writefile(zoom_level || '/' || tile_column || '/' || ((1 << zoom_level) - 1 - tile_row) || '.pbf', \
            tile_data)) FROM tiles;
            """
        let result = try ProvisionProcess.run(executable(), ["-readonly", "-batch", mbtiles.path, sql], in: directory,
                                              environment: ProcessInfo.processInfo.environment, timeout: 30)
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": result.stderr]) }
    }
}
