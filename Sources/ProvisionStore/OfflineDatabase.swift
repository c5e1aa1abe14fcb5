import Foundation
import ProvisionModel

/// A MapLibre Native offline database (`offline.db`, schema version 6), read as a `StoreInventory` and
/// written as a `StoreWriter`.
///
/// Opening a new or empty file creates the schema the way MapLibre does: `auto_vacuum =
/// INCREMENTAL` before any table, `journal_mode = DELETE`, `synchronous = FULL`, then the
/// tables and indexes with `user_version = 6` set last, in one transaction. Opening an existing
/// file checks `user_version` and the tables and refuses anything else with a `StoreError`,
/// leaving the file untouched (unlike MapLibre, which deletes a file it cannot use).
///
/// Every time the format needs ("accessed") is the `epoch` given at init, never the wall clock.
/// Not thread-safe: one owner (the writer) uses it at a time.
public final class OfflineDatabase: StoreInventory, ExpiringContent, StoreWriter {
    /// How to open the database.
    public struct Options: Sendable {
        /// Open read-only: no schema creation, no pragmas that write, every write fails.
        public var readOnly: Bool
        /// Create the file when missing (ignored when read-only).
        public var create: Bool
        /// The page size of a file this creates (SQLite's default when nil); an existing file keeps its own.
        public var pageSize: Int?

        /// Creates options; the default is read-write, creating the file when missing.
        public init(readOnly: Bool = false, create: Bool = true, pageSize: Int? = nil) {
            self.readOnly = readOnly
            self.create = create
            self.pageSize = pageSize
        }
    }

    /// The file path.
    public let path: String
    /// The Unix time written to `accessed` on every write.
    public let epoch: Int64
    /// Whether the database was opened read-only.
    public let isReadOnly: Bool
    /// The connection (internal so extensions in this module share it).
    let db: SQLiteDatabase

    /// Opens the offline database at `url`, creating it (with the schema) when new.
    public init(url: URL, epoch: Int64, options: Options = Options()) throws {
        path = url.path
        self.epoch = epoch
        isReadOnly = options.readOnly
        db = try SQLiteDatabase(path: path, options: .init(readOnly: options.readOnly, create: options.create))
        try db.exec("PRAGMA foreign_keys = ON")
        let version = try db.userVersion()
        let tableCount = try db.queryFirst(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ) { $0.int64(0) } ?? 0
        if version == 0 && tableCount == 0 {
            guard !options.readOnly else {
                throw StoreError(.schemaMismatch, "empty database opened read-only; no offline schema to read",
                                 path: path)
            }
            try createSchema(pageSize: options.pageSize)
        } else if version == 0 {
            throw StoreError(.schemaMismatch,
                             "not a MapLibre offline database: it has \(tableCount) tables and user_version 0; "
                                + "the file was left unchanged", path: path)
        } else if version != OfflineSchema.version {
            throw StoreError(
                .unsupportedVersion,
                "user_version is \(version), expected \(OfflineSchema.version) (MapLibre offline database); "
                    + "the file was left unchanged", path: path)
        } else {
            let problems = try schemaProblems()
            if !problems.isEmpty {
                throw StoreError(.schemaMismatch,
                                 "not a MapLibre offline database: " + problems.joined(separator: "; "), path: path)
            }
            if !options.readOnly { try setDurablePragmas() }
        }
    }

    deinit {
        // Best effort: a connection going away; every write was committed or rolled back before.
        try? db.close()
    }

    private func createSchema(pageSize: Int?) throws {
        if let pageSize { try db.exec("PRAGMA page_size = \(pageSize)") }
        try db.exec("PRAGMA auto_vacuum = INCREMENTAL")
        try setDurablePragmas()
        try db.inTransaction {
            for statement in OfflineSchema.statements { try db.exec(statement) }
            try db.setUserVersion(OfflineSchema.version)
        }
    }

    private func setDurablePragmas() throws {
        try db.exec("PRAGMA journal_mode = DELETE")
        try db.exec("PRAGMA synchronous = FULL")
    }

    // MARK: Lifecycle

    /// Trades durability on power loss for speed during a long apply (`synchronous = NORMAL`,
    /// an 8 MiB page cache, in-memory temp storage). Still atomic if the process is killed;
    /// `finish()` restores the defaults. The file format is unchanged.
    public func tuneForBulkWrites() throws {
        try db.exec("PRAGMA synchronous = NORMAL")
        try db.exec("PRAGMA cache_size = -8192")
        try db.exec("PRAGMA temp_store = MEMORY")
    }

    /// Restores the durable pragmas, returns free pages to the file system
    /// (`incremental_vacuum`) and closes: the file is left in rollback-journal mode with no
    /// `-journal` or `-wal` beside it (not even a cold journal a killed run left), as MapLibre
    /// opens it.
    public func finish() throws {
        if !isReadOnly && db.isOpen {
            try setDurablePragmas()
            try db.exec("PRAGMA incremental_vacuum")
            try OfflineDatabase.removeColdJournal(db)
        }
        try close()
    }

    /// Rolls back the journal of a write that was interrupted (a killed apply), so the file
    /// holds its last committed state and read-only connections can read it again; also removes
    /// a journal a writer killed before it wrote the journal header left (SQLite ignores such a
    /// "cold" journal but never deletes it).
    ///
    /// Returns true when a journal was there and is gone. Call it holding the `StoreLock`: it
    /// waits up to 10 s for another writer's transaction and then throws.
    @discardableResult
    public static func recoverInterruptedWrite(at url: URL) throws -> Bool {
        let journal = url.path + "-journal"
        guard FileManager.default.fileExists(atPath: journal) else { return false }
        let db = try SQLiteDatabase(path: url.path, options: .init(create: false, busyTimeoutMilliseconds: 10_000))
        // Best effort: the journal was played back by the read; closing has nothing left to keep.
        defer { try? db.close() }
        // The first read takes a shared lock, and SQLite plays a hot journal back there.
        _ = try db.queryFirst("SELECT count(*) FROM sqlite_master") { $0.int64(0) }
        try removeColdJournal(db)
        try db.close()
        return !FileManager.default.fileExists(atPath: journal)
    }

    /// Deletes a journal that is not hot the way SQLite deletes its own: a write transaction
    /// (which truncates and reuses the file) rolled back (which deletes it in DELETE mode).
    static func removeColdJournal(_ db: SQLiteDatabase) throws {
        guard FileManager.default.fileExists(atPath: db.path + "-journal") else { return }
        let version = try db.userVersion()
        try db.exec("BEGIN IMMEDIATE")
        do {
            try db.setUserVersion(version)
        } catch {
            // Best effort: the error below is what the caller hears; SQLite rolls back on close anyway.
            try? db.exec("ROLLBACK")
            throw error
        }
        try db.exec("ROLLBACK")
    }

    /// Closes the connection (idempotent).
    public func close() throws {
        try db.close()
    }

    /// Rebuilds the file (`VACUUM`) so it holds no free pages; rows keep their ids.
    public func vacuum() throws {
        try db.exec("VACUUM")
    }

    // MARK: Checks

    /// `PRAGMA integrity_check` and `PRAGMA foreign_key_check` findings; empty means sound.
    public func integrityCheck() throws -> [String] {
        var problems = try db.query("PRAGMA integrity_check") { $0.text(0) }.filter { $0 != "ok" }
        problems += try db.query("PRAGMA foreign_key_check") { row in
            "foreign key violation: \(row.text(0)) row \(row.int64(1)) references missing \(row.text(2))"
        }
        return problems
    }

    /// How the file's tables differ from schema version 6 (empty when they match).
    public func schemaProblems() throws -> [String] {
        try OfflineDatabase.schemaProblems(in: db)
    }

    static func schemaProblems(in db: SQLiteDatabase) throws -> [String] {
        var problems: [String] = []
        for table in OfflineSchema.tables {
            let columns = try db.query("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)",
                                       [.text(table.name)]) { row in
                OfflineSchema.Column(row.text(0), row.text(1).uppercased(), notNull: row.int64(2) != 0,
                                     defaultValue: row.optionalText(3), primaryKey: Int(row.int64(4)))
            }
            if columns.isEmpty {
                problems.append("table \(table.name) is missing")
            } else if columns != table.columns {
                problems.append("table \(table.name) has columns (\(columns.map(\.description).joined(separator: ", ")))"
                                    + ", expected (\(table.columns.map(\.description).joined(separator: ", ")))")
            }
        }
        let uniques: [(String, [String])] = [
            ("resources", ["url"]), ("tiles", ["url_template", "pixel_ratio", "z", "x", "y"]),
            ("region_resources", ["region_id", "resource_id"]), ("region_tiles", ["region_id", "tile_id"]),
        ]
        for (table, columns) in uniques where try !uniqueConstraints(of: table, in: db).contains(columns) {
            problems.append("table \(table) lacks UNIQUE (\(columns.joined(separator: ", ")))")
        }
        let cascades = [("region_resources", "regions"), ("region_tiles", "regions")]
        for (table, parent) in cascades {
            let onDelete = try db.queryFirst(
                "SELECT on_delete FROM pragma_foreign_key_list(?1) WHERE \"table\" = ?2 AND \"from\" = 'region_id'",
                [.text(table), .text(parent)]) { $0.text(0) }
            if onDelete != "CASCADE" {
                problems.append("table \(table) lacks region_id REFERENCES \(parent)(id) ON DELETE CASCADE")
            }
        }
        return problems
    }

    private static func uniqueConstraints(of table: String, in db: SQLiteDatabase) throws -> [[String]] {
        let names = try db.query("SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1", [.text(table)]) {
            $0.text(0)
        }
        return try names.map { name in
            try db.query("SELECT name FROM pragma_index_info(?1) ORDER BY seqno", [.text(name)]) { $0.text(0) }
        }
    }
}
