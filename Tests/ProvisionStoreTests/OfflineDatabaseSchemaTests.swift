import Foundation
import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionStore

/// The file `OfflineDatabase` creates must be the MapLibre offline schema 6 (reference §1.1, §9).
final class OfflineDatabaseSchemaTests: XCTestCase {
    private func makeDatabaseFile() throws -> URL {
        let url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        let store = try OfflineDatabase(url: url, epoch: 1_700_000_000)
        try store.finish()
        return url
    }

    /// (name, declared type, NOT NULL, default, pk) for every column, written out from the reference.
    private let expectedColumns: [String: [String]] = [
        "resources": [
            "id INTEGER 1 - 1", "url TEXT 1 - 0", "kind INTEGER 1 - 0", "expires INTEGER 0 - 0",
            "modified INTEGER 0 - 0", "etag TEXT 0 - 0", "data BLOB 0 - 0", "compressed INTEGER 1 0 0",
            "accessed INTEGER 1 - 0", "must_revalidate INTEGER 1 0 0",
        ],
        "tiles": [
            "id INTEGER 1 - 1", "url_template TEXT 1 - 0", "pixel_ratio INTEGER 1 - 0", "z INTEGER 1 - 0",
            "x INTEGER 1 - 0", "y INTEGER 1 - 0", "expires INTEGER 0 - 0", "modified INTEGER 0 - 0",
            "etag TEXT 0 - 0", "data BLOB 0 - 0", "compressed INTEGER 1 0 0", "accessed INTEGER 1 - 0",
            "must_revalidate INTEGER 1 0 0",
        ],
        "regions": ["id INTEGER 1 - 1", "definition TEXT 1 - 0", "description BLOB 0 - 0"],
        "region_resources": ["region_id INTEGER 1 - 0", "resource_id INTEGER 1 - 0"],
        "region_tiles": ["region_id INTEGER 1 - 0", "tile_id INTEGER 1 - 0"],
    ]

    func testTablesColumnsAndOrderMatchTheReference() throws {
        let db = try SQLiteDatabase(path: try makeDatabaseFile().path, options: .init(readOnly: true))
        let tables = try db.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ) { $0.text(0) }
        XCTAssertEqual(tables, ["region_resources", "region_tiles", "regions", "resources", "tiles"])
        for (table, expected) in expectedColumns {
            let columns = try db.query("PRAGMA table_info(\(table))") { row in
                "\(row.text(1)) \(row.text(2)) \(row.int64(3)) \(row.optionalText(4) ?? "-") \(row.int64(5))"
            }
            XCTAssertEqual(columns, expected, table)
        }
        for table in ["resources", "tiles", "regions"] {
            let sql = try db.queryFirst("SELECT sql FROM sqlite_master WHERE name = ?1", [.text(table)]) { $0.text(0) }
            XCTAssertTrue(sql?.contains("id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT") ?? false, table)
        }
    }

    func testUniqueConstraintsForeignKeysAndIndexes() throws {
        let db = try SQLiteDatabase(path: try makeDatabaseFile().path, options: .init(readOnly: true))
        func uniques(_ table: String) throws -> [[String]] {
            try db.query("SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1 ORDER BY name", [.text(table)]) {
                $0.text(0)
            }.map { index in
                try db.query("SELECT name FROM pragma_index_info(?1) ORDER BY seqno", [.text(index)]) { $0.text(0) }
            }
        }
        XCTAssertEqual(try uniques("resources"), [["url"]])
        XCTAssertEqual(try uniques("tiles"), [["url_template", "pixel_ratio", "z", "x", "y"]])
        XCTAssertEqual(try uniques("region_resources"), [["region_id", "resource_id"]])
        XCTAssertEqual(try uniques("region_tiles"), [["region_id", "tile_id"]])

        let keys = try db.query("""
            SELECT m.name, f."from", f."table", f."to", f.on_delete
            FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
            WHERE m.type = 'table' ORDER BY m.name, f."from"
            """) { "\($0.text(0)).\($0.text(1)) -> \($0.text(2))(\($0.text(3))) \($0.text(4))" }
        XCTAssertEqual(keys, [
            "region_resources.region_id -> regions(id) CASCADE",
            "region_resources.resource_id -> resources(id) NO ACTION",
            "region_tiles.region_id -> regions(id) CASCADE",
            "region_tiles.tile_id -> tiles(id) NO ACTION",
        ])

        let indexes = try db.query("""
            SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name
            """) { "\($0.text(0)) on \($0.text(1))" }
        XCTAssertEqual(indexes, [
            "region_resources_resource_id on region_resources", "region_tiles_tile_id on region_tiles",
            "resources_accessed on resources", "tiles_accessed on tiles",
        ])
        for (index, column) in [("resources_accessed", "accessed"), ("tiles_accessed", "accessed"),
                                ("region_resources_resource_id", "resource_id"), ("region_tiles_tile_id", "tile_id")] {
            XCTAssertEqual(try db.query("SELECT name FROM pragma_index_info(?1)", [.text(index)]) { $0.text(0) },
                           [column], index)
        }
    }

    func testPragmasUserVersionAutoVacuumAndJournalAfterClose() throws {
        let url = try makeDatabaseFile()
        let directory = url.deletingLastPathComponent()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["offline.db"])
        // The file header itself: bytes 18-19 are 1/1 for rollback journal (2/2 would be WAL).
        let header = try Data(contentsOf: url).prefix(100)
        XCTAssertEqual(Array(header.prefix(16)), Array("SQLite format 3\0".utf8))
        XCTAssertEqual(header[18], 1)
        XCTAssertEqual(header[19], 1)
        let db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true))
        XCTAssertEqual(try db.userVersion(), 6)
        XCTAssertEqual(try db.queryFirst("PRAGMA auto_vacuum") { $0.int64(0) }, 2)
        XCTAssertEqual(try db.queryFirst("PRAGMA journal_mode") { $0.text(0) }, "delete")
        XCTAssertEqual(try db.queryFirst("PRAGMA integrity_check") { $0.text(0) }, "ok")
    }

    func testReopeningAnExistingStoreKeepsItAndSeesTheSchema() throws {
        let url = try makeDatabaseFile()
        let store = try OfflineDatabase(url: url, epoch: 1)
        let id = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        try store.finish()
        let again = try OfflineDatabase(url: url, epoch: 1)
        XCTAssertEqual(try again.regions().map(\.rowID), [id])
        XCTAssertEqual(try again.schemaProblems(), [])
        XCTAssertEqual(try again.integrityCheck(), [])
    }

    func testNewerUserVersionIsRefusedAndTheFileIsLeftUnchanged() throws {
        let url = try makeDatabaseFile()
        do {
            let db = try SQLiteDatabase(path: url.path)
            try db.setUserVersion(7)
            try db.close()
        }
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try OfflineDatabase(url: url, epoch: 1)) { error in
            guard let error = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .unsupportedVersion)
            XCTAssertEqual(error.path, url.path)
            XCTAssertTrue(error.description.contains("user_version is 7, expected 6"), error.description)
        }
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path),
                       ["offline.db"])
    }

    func testForeignFilesAreRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        // An SQLite file with other tables and user_version 0.
        let other = dir.appendingPathComponent("other.db")
        do {
            let db = try SQLiteDatabase(path: other.path)
            try db.exec("CREATE TABLE notes (x)")
            try db.close()
        }
        XCTAssertThrowsError(try OfflineDatabase(url: other, epoch: 1)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .schemaMismatch)
        }
        // user_version 6 but a column missing.
        let wrong = dir.appendingPathComponent("wrong.db")
        do {
            let db = try SQLiteDatabase(path: wrong.path)
            for statement in OfflineSchema.statements {
                try db.exec(statement.replacingOccurrences(of: "  must_revalidate INTEGER NOT NULL DEFAULT 0,\n",
                                                           with: ""))
            }
            try db.setUserVersion(6)
            try db.close()
        }
        XCTAssertThrowsError(try OfflineDatabase(url: wrong, epoch: 1)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaMismatch)
            XCTAssertTrue("\(error)".contains("table resources has columns"), "\(error)")
        }
        // Not SQLite at all.
        let junk = dir.appendingPathComponent("junk.db")
        try Data("hello, this is not a database".utf8).write(to: junk)
        XCTAssertThrowsError(try OfflineDatabase(url: junk, epoch: 1)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .corrupt)
        }
        XCTAssertEqual(try Data(contentsOf: junk), Data("hello, this is not a database".utf8))
    }

    func testReadOnlyOpenRefusesWrites() throws {
        let url = try makeDatabaseFile()
        let store = try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true))
        XCTAssertEqual(try store.regions(), [])
        XCTAssertThrowsError(try store.insertRegion(definition: Data("{}".utf8), description: nil)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .readOnly)
        }
    }

    func testSQLiteCommandLineReadsTheFile() throws {
        let cli = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let cli else { throw MissingTool("the sqlite3 shell", package: "sqlite3") }
        let url = try makeDatabaseFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cli)
        process.arguments = [url.path, "PRAGMA integrity_check; PRAGMA user_version; SELECT count(*) FROM tiles;"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(output, "ok\n6\n0\n")
    }
}
