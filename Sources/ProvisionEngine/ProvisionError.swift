import Foundation
import ProvisionCodecs
import ProvisionCoverage
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore

/// An operational failure of a command: what kind it is (its exit status), what the user sees,
/// and what caused it.
public struct ProvisionError: Error, Sendable {
    /// What kind of failure: its exit status (never `success` or `changesPresent`).
    public var kind: ExitCode
    /// One sentence (or a few lines), naming the file, path or URL concerned.
    public var message: String
    /// Input problems, one per line (and in JSON), each with its file and JSON pointer.
    public var diagnostics: [Diagnostic] = []
    /// The underlying error, kept as a value so its own causes stay reachable (`causeLines`);
    /// shown with --verbose. (`Error` refines `Sendable`, so the value crosses threads.)
    public var cause: (any Error)?

    public init(_ kind: ExitCode, _ message: String, diagnostics: [Diagnostic] = [], cause: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.diagnostics = diagnostics
        self.cause = cause
    }

    /// An error that says for itself what failure it is (an unusable document, an origin
    /// archive that cannot be opened, an invalid plan).
    init(_ error: some UserFacingError) {
        self = error.standalone ?? ProvisionError(.failure, error.summary, cause: error)
    }

    /// A failure while doing `context` (`cannot open the store at X`), of `kind`, unless the
    /// error says for itself what failure it is: another apply holds the store or the disk is
    /// full (`cannotWriteStore` whatever `kind` the caller gives), an unusable document, a zoom
    /// a coverage picture has no tiles at, a plan over the limits.
    public init(store error: any Error, context: String, kind: ExitCode = .cannotWriteStore) {
        if let standalone = userFacing(error)?.standalone {
            self = standalone
        } else {
            self.init(kind, "\(context): \(describe(error))", cause: error)
        }
    }

    /// The store's error inside `error`, when it is one (a few callers decide by its code).
    public static func storeFailure(_ error: any Error) -> StoreError? {
        userFacing(error)?.storeFailure
    }

    /// The `caused by:` lines of --verbose: the chain of underlying errors, outermost first, one
    /// line each, every URL's secrets hidden as in every other output (at most 8 links).
    public func causeLines(redactedBy secrets: URLSecrets = URLSecrets()) -> [String] {
        var lines: [String] = []
        var next = cause
        while let error = next, lines.count < 8 {
            let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            lines.append(secrets.redact(text))
            next = userFacing(error)?.underlying
        }
        return lines
    }
}

extension ProvisionError: CustomStringConvertible {
    /// The message: what a `caused by:` line shows of an error that wraps another.
    public var description: String { message }
}

/// A one-line description of an error, for messages: a sentence for a damaged database, the
/// path for a store error.
public func describe(_ error: any Error) -> String {
    userFacing(error)?.summary ?? String(describing: error)
}

// MARK: - What each underlying error means to the user

/// An underlying error that says how a command's failure presents it. Every error type the
/// engine turns into a `ProvisionError` conforms below, in this file.
///
/// Why: what an error means to the user (its exit status and its words) is decided here once,
/// by one protocol, instead of by casts scattered where errors are caught.
protocol UserFacingError: Error {
    /// The failure this error is whatever the command was doing, or nil when the caller's
    /// context and kind decide.
    var standalone: ProvisionError? { get }
    /// The words for a message, after the caller's context (`cannot read the store at X: …`).
    var summary: String { get }
    /// The store's error, when this is one.
    var storeFailure: StoreError? { get }
    /// The error underneath this one, for the `caused by:` chain.
    var underlying: (any Error)? { get }
}

extension UserFacingError {
    var standalone: ProvisionError? { nil }
    var summary: String { String(describing: self) }
    var storeFailure: StoreError? { nil }
    var underlying: (any Error)? { nil }
}

/// The one place an error is asked whether it says what it means.
private func userFacing(_ error: any Error) -> (any UserFacingError)? {
    error as? any UserFacingError
}

extension ProvisionError: UserFacingError {
    var standalone: ProvisionError? { self }
    var summary: String { message }
    var underlying: (any Error)? { cause }
}

extension StoreError: UserFacingError {
    /// Another apply holds the store, or the disk is full: the store's own message already says
    /// what to do.
    var standalone: ProvisionError? {
        [.locked, .diskFull].contains(code) ? ProvisionError(.cannotWriteStore, message, cause: self) : nil
    }

    /// A sentence for a damaged database; else the message with the path, once.
    var summary: String {
        if code == .corrupt {
            return "offline.db is damaged (SQLite reports: \(message.components(separatedBy: " in \"").first ?? message)); "
                + "run 'provision apply --repair' to rebuild it from what can still be read and fresh downloads"
        }
        guard let path, !message.contains(path) else { return message }
        return "\(message) (\(path))"
    }

    var storeFailure: StoreError? { self }
}

extension DocumentProblem: UserFacingError {
    var summary: String { description }
}

extension DocumentError: UserFacingError {
    /// Credentials are usage (64), an unusable document an invalid job (65), an unreachable one
    /// upstream (69).
    var standalone: ProvisionError? {
        let kind: ExitCode
        switch self.kind {
        case .credentials: kind = .usage
        case .unusable: kind = .invalidJob
        case .unavailable: kind = .upstreamUnavailable
        }
        return ProvisionError(kind, message, diagnostics: diagnostics)
    }
}

extension ArchiveOpenError: UserFacingError {
    /// An origin archive that cannot be opened: missing (66), not a usable archive (65), or a
    /// server that cannot serve it (69).
    var standalone: ProvisionError? {
        let kind: ExitCode
        switch self.kind {
        case .missing: kind = .missingInput
        case .invalid: kind = .invalidJob
        case .unavailable: kind = .upstreamUnavailable
        }
        return ProvisionError(kind, "cannot open an origin archive: \(message)")
    }
}

extension PlanError: UserFacingError {
    /// A plan over the job's limits, or naming a style pack not resolved: an invalid job (65).
    var standalone: ProvisionError? { ProvisionError(.invalidJob, description) }
}

extension SearchPackError: UserFacingError {
    /// A search pack the job's settings cannot build (no vector source, an unknown schema): 65.
    var standalone: ProvisionError? { ProvisionError(.invalidJob, description) }
}

extension RoutingPackError: UserFacingError {
    /// A routing pack that cannot be written as asked (tiles of two builds): 65.
    var standalone: ProvisionError? { ProvisionError(.invalidJob, description) }
}

extension CoverageError: UserFacingError {
    /// A coverage picture asked for at a zoom it has no tiles at: usage (64).
    var standalone: ProvisionError? { ProvisionError(.usage, description) }
}

extension Ed25519.KeyError: UserFacingError {
    /// A key file that is no usable Ed25519 key says why in words that never quote the key; the
    /// caller names the option and the file, and decides it is usage (64).
    var summary: String { description }
}
