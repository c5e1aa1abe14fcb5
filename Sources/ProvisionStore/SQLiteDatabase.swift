import CSQLite
import Foundation
import ProvisionFoundation
import ProvisionModel

/// A value bound to a statement parameter.
public enum SQLiteValue: Equatable, Sendable {
    /// An INTEGER.
    case int(Int64)
    /// A REAL.
    case double(Double)
    /// TEXT from a Swift string.
    case text(String)
    /// TEXT from raw bytes (stored as given, not validated as UTF-8).
    case textBytes(Data)
    /// A BLOB (an empty one stays a zero-length blob, not NULL).
    case blob(Data)
    /// NULL.
    case null
}

/// One SQLite connection: the only type in the project that calls `sqlite3_*`.
///
/// Statements are prepared once and cached by their SQL text. Not thread-safe: use one
/// connection from one thread (or actor) at a time.
public final class SQLiteDatabase {
    /// How to open the file.
    public struct OpenOptions: Sendable {
        /// Open read-only (never creates, never writes).
        public var readOnly: Bool
        /// Create the file when it is missing (ignored when read-only).
        public var create: Bool
        /// Promise that nothing changes the file while it is open (`immutable=1`): no locking at all.
        public var immutable: Bool
        /// How long to wait for a lock held by another connection, in milliseconds.
        public var busyTimeoutMilliseconds: Int32

        /// Creates options; the default is read-write-create with a long busy timeout.
        public init(readOnly: Bool = false, create: Bool = true, immutable: Bool = false,
                    busyTimeoutMilliseconds: Int32 = Int32.max) {
            self.readOnly = readOnly
            self.create = create
            self.immutable = immutable
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        }
    }

    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes a read lock on the first read (for read-only work).
        case deferred = "DEFERRED"
        /// Takes the write lock at once (for work that writes).
        case immediate = "IMMEDIATE"
    }

    /// The file path this connection was opened on.
    public let path: String
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    private var savepointDepth = 0

    /// Opens (and per `options` creates) the database at `path`.
    public init(path: String, options: OpenOptions = OpenOptions()) throws {
        self.path = path
        var flags: Int32 = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.create { flags |= SQLITE_OPEN_CREATE }
        }
        var uri = URL(fileURLWithPath: path).absoluteString
        if options.immutable { uri += "?immutable=1" }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(uri, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(.cannotOpen, message, path: path, underlyingCode: rc)
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, options.busyTimeoutMilliseconds)
        handle = db
    }

    deinit {
        // Best effort: a connection going away; SQLite rolls back anything uncommitted.
        try? close()
    }

    /// Whether the connection is still open.
    public var isOpen: Bool { handle != nil }

    /// Finalizes every cached statement and closes the connection. Closing twice is harmless.
    public func close() throws {
        guard let db = handle else { return }
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else { throw error(rc, db: db) }
        handle = nil
    }

    // MARK: Statements

    /// Runs one or more statements that bind nothing and return no rows of interest.
    public func exec(_ sql: String) throws {
        let db = try connection()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(message)
            throw makeError(rc, text)
        }
    }

    /// The cached prepared statement for `sql`, reset with its bindings cleared.
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let db = try connection()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, db: db, sql: sql) }
        let statement = SQLiteStatement(stmt, database: self)
        statements[sql] = statement
        return statement
    }

    /// Runs a statement to completion with `values` bound in order; returns the changed row count.
    @discardableResult
    public func run(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let statement = try prepare(sql)
        try statement.bind(values)
        while try statement.step() {}
        statement.reset()
        return changes
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ values: [SQLiteValue] = [],
                         _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        let statement = try prepare(sql)
        try statement.bind(values)
        defer { statement.reset() }
        var rows: [T] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    /// The first row of a query mapped, or nil when there is none.
    public func queryFirst<T>(_ sql: String, _ values: [SQLiteValue] = [],
                              _ row: (SQLiteStatement) throws -> T) throws -> T? {
        let statement = try prepare(sql)
        try statement.bind(values)
        defer { statement.reset() }
        return try statement.step() ? try row(statement) : nil
    }

    // MARK: Transactions

    /// Runs `body` in a transaction (a savepoint when one is already open): committed when
    /// `body` returns, rolled back when it throws.
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        let db = try connection()
        if sqlite3_get_autocommit(db) == 0 {
            savepointDepth += 1
            let name = "provision_sp\(savepointDepth)"
            defer { savepointDepth -= 1 }
            try exec("SAVEPOINT \(name)")
            do {
                let result = try body()
                try exec("RELEASE \(name)")
                return result
            } catch {
                // Best effort: the body's error below is what the caller hears.
                try? exec("ROLLBACK TO \(name)")
                try? exec("RELEASE \(name)")
                throw error
            }
        }
        try exec("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            // Best effort: the body's error below is what the caller hears.
            if sqlite3_get_autocommit(db) == 0 { try? exec("ROLLBACK") }
            throw error
        }
    }

    /// Whether a transaction is open.
    public var isInTransaction: Bool {
        guard let db = handle else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    // MARK: Connection facts

    /// `PRAGMA user_version`.
    public func userVersion() throws -> Int {
        Int(try queryFirst("PRAGMA user_version") { $0.int64(0) } ?? 0)
    }

    /// Sets `PRAGMA user_version`.
    public func setUserVersion(_ version: Int) throws {
        try exec("PRAGMA user_version = \(version)")
    }

    /// The row id of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The SQLite library version, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    // MARK: Errors

    func connection() throws -> OpaquePointer {
        guard let db = handle else { throw StoreError(.sqlite, "database is closed", path: path) }
        return db
    }

    func error(_ rc: Int32, db: OpaquePointer?, sql: String? = nil) -> StoreError {
        var message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        if let sql { message += " in \"\(sql.split(separator: "\n").joined(separator: " ").prefix(120))\"" }
        return makeError(rc, message)
    }

    /// SQLITE_READONLY_ROLLBACK: a hot journal found by a read-only connection.
    static let readOnlyRollback: Int32 = SQLITE_READONLY | (3 << 8)

    func makeError(_ rc: Int32, _ message: String) -> StoreError {
        let systemErrno = handle.map { sqlite3_system_errno($0) } ?? 0
        let code: StoreError.Code
        switch rc & 0xff {
        case SQLITE_NOTADB, SQLITE_CORRUPT: code = .corrupt
        case SQLITE_READONLY: code = .readOnly
        case SQLITE_CANTOPEN: code = .cannotOpen
        case SQLITE_FULL: code = .diskFull
        case SQLITE_IOERR: code = StoreError.isDiskFull(errno: systemErrno) ? .diskFull : .io
        default: code = .sqlite
        }
        if rc == SQLiteDatabase.readOnlyRollback {
            return StoreError(.hotJournal,
                              "a write was interrupted (the process was killed) and its journal must be rolled back "
                                  + "before the database can be read; open it read-write once to do that",
                              path: path, underlyingCode: rc)
        }
        if code == .diskFull {
            var detail = message
            if systemErrno != 0 { detail += "; \(String(cString: strerror(systemErrno)))" }
            return .diskFull(writing: path, detail: detail, underlyingCode: rc, underlyingIsErrno: false)
        }
        if code == .io {
            var text = "I/O error while using the database: \(message)"
            if systemErrno != 0 { text += "; \(String(cString: strerror(systemErrno)))" }
            return StoreError(.io, text, path: path, underlyingCode: rc, underlyingIsErrno: false)
        }
        return StoreError(code, message, path: path, underlyingCode: rc)
    }
}

/// A prepared statement owned (and cached) by a `SQLiteDatabase`.
public final class SQLiteStatement {
    private var stmt: OpaquePointer?
    private unowned let database: SQLiteDatabase

    init(_ stmt: OpaquePointer, database: SQLiteDatabase) {
        self.stmt = stmt
        self.database = database
    }

    func finalize() {
        sqlite3_finalize(stmt)
        stmt = nil
    }

    /// Resets the statement and clears its bindings.
    public func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Binds `values` to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .int(let v): rc = sqlite3_bind_int64(stmt, index, v)
        case .double(let v): rc = sqlite3_bind_double(stmt, index, v)
        case .null: rc = sqlite3_bind_null(stmt, index)
        case .text(let s):
            var s = s
            rc = s.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: index) }
        case .textBytes(let data):
            guard data.count <= Int32.max else { throw tooBig(data.count) }
            rc = data.withUnsafeBytes { bindText($0, at: index) }
        case .blob(let data):
            guard data.count <= Int32.max else { throw tooBig(data.count) }
            rc = data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, raw.count > 0 else {
                    return provision_sqlite3_bind_empty_blob(stmt, index)
                }
                return provision_sqlite3_bind_blob_transient(stmt, index, base, Int32(raw.count))
            }
        }
        guard rc == SQLITE_OK else { throw database.error(rc, db: sqlite3_db_handle(stmt)) }
    }

    /// Binds `data` (NULL when nil) to parameter `index` without copying it, runs `body` (which
    /// steps the statement) and binds NULL again, so the statement never keeps a pointer into
    /// bytes that may be freed.
    ///
    /// Why: a bound blob is otherwise copied by SQLite before it copies it again into its pages;
    /// an apply or merge binds every tile body once, gigabytes in all.
    public func withBlob<T>(_ data: Data?, at index: Int32, _ body: () throws -> T) throws -> T {
        guard let data, !data.isEmpty else {
            try bind(data.map { .blob($0) } ?? .null, at: index)
            return try body()
        }
        guard data.count <= Int32.max else { throw tooBig(data.count) }
        return try data.withUnsafeBytes { raw in
            // A nil destructor is SQLITE_STATIC: SQLite reads the bytes where they are.
            let rc = sqlite3_bind_blob(stmt, index, raw.baseAddress, Int32(raw.count), nil)
            guard rc == SQLITE_OK else { throw database.error(rc, db: sqlite3_db_handle(stmt)) }
            defer { sqlite3_bind_null(stmt, index) }
            return try body()
        }
    }

    private func bindText(_ raw: UnsafeRawBufferPointer, at index: Int32) -> Int32 {
        guard let base = raw.baseAddress, raw.count > 0 else {
            // A NULL pointer would bind NULL; an empty string must stay an empty TEXT.
            return provision_sqlite3_bind_text_transient(stmt, index, "", 0)
        }
        return provision_sqlite3_bind_text_transient(
            stmt, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count))
    }

    private func tooBig(_ count: Int) -> StoreError {
        StoreError(.invalidInput, "value of \(grouped(count)) bytes exceeds SQLite's 2 GiB bind limit", path: database.path)
    }

    /// Steps once: true when a row is available, false when done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, db: sqlite3_db_handle(stmt), sql: sqlite3_sql(stmt).map { String(cString: $0) })
            sqlite3_reset(stmt)
            throw error
        }
    }

    /// Whether column `i` (0-based) of the current row is NULL.
    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(stmt, i) == SQLITE_NULL }

    /// Column `i` as an integer (0 for NULL).
    public func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }

    /// Column `i` as an integer, nil for NULL.
    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }

    /// Column `i` as a double.
    public func double(_ i: Int32) -> Double { sqlite3_column_double(stmt, i) }

    /// Column `i` as text ("" for NULL).
    public func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, i) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }

    /// Column `i` as text, nil for NULL.
    public func optionalText(_ i: Int32) -> String? { isNull(i) ? nil : text(i) }

    /// Column `i` as text: `previous` when it holds the same bytes (no new string is made, for a
    /// column that repeats row after row), else a new string, which `previous` becomes.
    public func text(_ i: Int32, reusing previous: inout String) -> String {
        let count = Int(sqlite3_column_bytes(stmt, i))
        guard let p = sqlite3_column_text(stmt, i) else {
            previous = ""
            return previous
        }
        let bytes = UnsafeBufferPointer(start: p, count: count)
        if !previous.utf8.elementsEqual(bytes) { previous = String(decoding: bytes, as: UTF8.self) }
        return previous
    }

    /// Runs `body` with the bytes of column `i` (empty for NULL) where SQLite holds them, valid
    /// only during the call: for reading a blob without copying it.
    public func withBytes<T>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        guard let p = sqlite3_column_blob(stmt, i) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, i))))
    }

    /// Column `i` as bytes (empty for NULL); works for TEXT and BLOB columns alike.
    public func data(_ i: Int32) -> Data {
        guard let p = sqlite3_column_blob(stmt, i) else { return Data() }
        return Data(bytes: p, count: Int(sqlite3_column_bytes(stmt, i)))
    }

    /// Column `i` as bytes, nil for NULL.
    public func optionalData(_ i: Int32) -> Data? { isNull(i) ? nil : data(i) }

    /// Column `i` as the value it is stored as (TEXT kept as its bytes).
    public func value(_ i: Int32) -> SQLiteValue {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER: return .int(int64(i))
        case SQLITE_FLOAT: return .double(double(i))
        case SQLITE_TEXT: return .textBytes(data(i))
        case SQLITE_BLOB: return .blob(data(i))
        default: return .null
        }
    }

    /// SQLite's storage class name of column `i`: "integer", "real", "text", "blob" or "null".
    public func typeName(_ i: Int32) -> String {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER: return "integer"
        case SQLITE_FLOAT: return "real"
        case SQLITE_TEXT: return "text"
        case SQLITE_BLOB: return "blob"
        default: return "null"
        }
    }
}
