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
        /// A statement failed (constraint, I/O, busy, full disk, ...).
        case sqlite
        /// The database is open read-only and a write was attempted.
        case readOnly = "read-only"
        /// A row that must exist does not (e.g. a region id).
        case notFound = "not-found"
        /// A value cannot be stored as given (e.g. a tile request without a tile key).
        case invalidInput = "invalid-input"
        /// zlib failed, or a payload inflates beyond the size limit.
        case compression
        /// A file-system operation failed (lock file, store directory).
        case io
        /// A file holds text that is not what was expected (e.g. a lock file that is not JSON).
        case invalidFile = "invalid-file"
    }

    /// The category.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The file concerned, when there is one.
    public var path: String?
    /// SQLite's extended result code (or errno for `.io`), when there is one.
    public var underlyingCode: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String, path: String? = nil, underlyingCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlyingCode = underlyingCode
    }

    /// One line: `<path>: <message> (<code>, sqlite <n>)`.
    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += message
        var tags = [code.rawValue]
        if let underlyingCode { tags.append(code == .io ? "errno \(underlyingCode)" : "sqlite \(underlyingCode)") }
        text += " (" + tags.joined(separator: ", ") + ")"
        return text
    }
}
