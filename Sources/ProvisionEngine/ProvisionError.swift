import Foundation
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionStore

/// An operational failure of a command: what kind it is (the command line maps each kind to its
/// exit status), what the user sees, and what caused it.
public struct ProvisionError: Error, Sendable {
    /// What kind of failure, in the terms of the exit statuses.
    public enum Kind: Sendable, Equatable {
        /// Anything not covered below.
        case failure
        /// Bad usage: options, a missing key or token in the environment.
        case usage
        /// The job file, a document it leads to, or the plan is invalid or over the limits.
        case invalidJob
        /// An input file is missing or unreadable.
        case missingInput
        /// An origin is unavailable or refused the credentials.
        case upstreamUnavailable
        /// The store, or an output file, cannot be written.
        case cannotWrite
        /// The apply finished partially.
        case partial
        /// SIGINT stopped the apply after it committed what arrived (130).
        case interrupted
        /// SIGTERM stopped the apply after it committed what arrived (143).
        case terminated
    }

    public var kind: Kind
    /// One sentence (or a few lines), naming the file, path or URL concerned.
    public var message: String
    /// Input problems, one per line (and in JSON), each with its file and JSON pointer.
    public var diagnostics: [Diagnostic] = []
    /// The underlying error, shown with --verbose.
    public var cause: String?

    public init(_ kind: Kind, _ message: String, diagnostics: [Diagnostic] = [], cause: String? = nil) {
        self.kind = kind
        self.message = message
        self.diagnostics = diagnostics
        self.cause = cause
    }

    /// A document error as the user must hear it.
    init(_ error: DocumentError) {
        let kind: Kind
        switch error.kind {
        case .credentials: kind = .usage
        case .unusable: kind = .invalidJob
        case .unavailable: kind = .upstreamUnavailable
        }
        self.init(kind, error.message, diagnostics: error.diagnostics)
    }

    /// An origin archive that cannot be opened: missing (66), not a usable archive (65), or a
    /// server that cannot serve it (69).
    init(_ error: ArchiveOpenError) {
        let kind: Kind
        switch error.kind {
        case .missing: kind = .missingInput
        case .invalid: kind = .invalidJob
        case .unavailable: kind = .upstreamUnavailable
        }
        self.init(kind, "cannot open an origin archive: \(error.message)")
    }

    /// A store failure, with `context` (`cannot open the store at X`) unless the store's own
    /// message already says what to do: another apply holds the store, or the disk is full,
    /// which are `cannotWrite` whatever `kind` the caller gives (a read failure is `failure`).
    public init(store error: Error, context: String, kind: Kind = .cannotWrite) {
        if let store = error as? StoreError, [.locked, .diskFull].contains(store.code) {
            self.init(.cannotWrite, store.message, cause: String(describing: store))
        } else {
            self.init(kind, "\(context): \(describe(error))", cause: String(describing: error))
        }
    }
}

/// A one-line description of an error, for messages: a sentence for a damaged database, the
/// path for a store error.
public func describe(_ error: Error) -> String {
    if let store = error as? StoreError, store.code == .corrupt {
        return "offline.db is damaged (SQLite reports: \(store.message.components(separatedBy: " in \"").first ?? store.message)); "
            + "run 'provision apply --repair' to rebuild it from what can still be read and fresh downloads"
    }
    if let store = error as? StoreError {
        guard let path = store.path, !store.message.contains(path) else { return store.message }
        return "\(store.message) (\(path))"
    }
    if let planning = error as? PlanningError { return planning.description }
    return String(describing: error)
}
