import Foundation

/// An operational failure of the store: what went wrong, on which file, and SQLite's own code.
///
/// `description` is one line, suitable for a log or an error message to a user.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The broad category of a store failure.
    public enum Code: String, Equatable, Sendable {
        /// The file could not be opened or created.
        case cannotOpen = "cannot-open"
        /// The file is not an SQLite database, or is damaged.
        case corrupt
        /// The database was written by a newer or unknown program version (`user_version`).
        case unsupportedVersion = "unsupported-version"
        /// The tables are not the ones the format requires.
        case schemaMismatch = "schema-mismatch"
        /// A statement failed (constraint, busy, ...); full disks and I/O errors have their own codes.
        case sqlite
        /// The database is open read-only and a write was attempted.
        case readOnly = "read-only"
        /// A row that must exist does not (e.g. a region id).
        case notFound = "not-found"
        /// A value cannot be stored as given (e.g. a tile request without a tile key).
        case invalidInput = "invalid-input"
        /// zlib failed, or a payload inflates beyond the size limit.
        case compression
        /// A file-system operation failed (lock file, store directory), or SQLite reported an I/O
        /// error (SQLITE_IOERR and its extended codes).
        case io
        /// A file holds text that is not what was expected (e.g. a lock file that is not JSON).
        case invalidFile = "invalid-file"
        /// A write was interrupted (the writer was killed) and its rollback journal is still
        /// beside the file; a read-only connection cannot roll it back. Opening the file
        /// read-write once (`OfflineDatabase.recoverInterruptedWrite`) restores the last commit.
        case hotJournal = "hot-journal"
        /// Another process holds the store's writer lock (`ApplyLease`); the message names it.
        case locked
        /// The file system is full (SQLITE_FULL, ENOSPC, EDQUOT): nothing of the failing write
        /// was kept, every batch committed before it was.
        case diskFull = "disk-full"
    }

    /// The category.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The file concerned, when there is one.
    public var path: String?
    /// SQLite's extended result code, or errno when `underlyingIsErrno`, when there is one.
    public var underlyingCode: Int32?
    /// Whether `underlyingCode` is an errno (file-system calls) rather than an SQLite code.
    public var underlyingIsErrno: Bool

    /// Creates an error; `underlyingIsErrno` defaults to true for `.io` and `.locked`, as before.
    public init(_ code: Code, _ message: String, path: String? = nil, underlyingCode: Int32? = nil,
                underlyingIsErrno: Bool? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlyingCode = underlyingCode
        self.underlyingIsErrno = underlyingIsErrno ?? (code == .io || code == .locked)
    }

    /// The error for a full file system while writing `path`, in words a user can act on.
    public static func diskFull(writing path: String, detail: String, underlyingCode: Int32?,
                                underlyingIsErrno: Bool) -> StoreError {
        StoreError(.diskFull,
                   "the disk is full while writing \(path): free space and run apply again; "
                       + "the store keeps every committed batch (\(detail))",
                   path: path, underlyingCode: underlyingCode, underlyingIsErrno: underlyingIsErrno)
    }

    /// One line: `<path>: <message> (<code>, sqlite <n>)`.
    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += message
        var tags = [code.rawValue]
        if let underlyingCode { tags.append(underlyingIsErrno ? "errno \(underlyingCode)" : "sqlite \(underlyingCode)") }
        text += " (" + tags.joined(separator: ", ") + ")"
        return text
    }

    /// The error for a failed system call on `path` with `errno` `code`: `.diskFull` (naming
    /// `target`, the file the user knows, else `path`) when the file system has no room left,
    /// else `.io`. `detail` says what was being done.
    public static func system(_ code: Int32, _ detail: String, path: String, target: String? = nil) -> StoreError {
        let detail = "\(detail): \(String(cString: strerror(code)))"
        if isDiskFull(errno: code) {
            return .diskFull(writing: target ?? path, detail: detail, underlyingCode: code, underlyingIsErrno: true)
        }
        return StoreError(.io, detail, path: path, underlyingCode: code)
    }

    /// Whether an errno means the file system has no room left (ENOSPC, EDQUOT).
    public static func isDiskFull(errno code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT
    }
}
