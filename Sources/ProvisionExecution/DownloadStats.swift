import Foundation
import ProvisionModel

/// What a download did: counts, bytes, the first failures and failure counts by reason.
public struct DownloadStats: Equatable, Sendable {
    /// One failed request.
    public struct Failure: Equatable, Sendable {
        /// The canonical URL, with secret query values redacted (`URLSecrets.redact`).
        public var url: String
        /// What it should have been.
        public var kind: ResourceKind
        /// Why it failed (after retries).
        public var failure: FetchFailure

        /// Creates a failure record.
        public init(url: String, kind: ResourceKind, failure: FetchFailure) {
            self.url = url
            self.kind = kind
            self.failure = failure
        }
    }

    /// Requests pulled from the work list.
    public var requested = 0
    /// Requests whose verified bodies reached the sink.
    public var succeeded = 0
    /// Requests that failed after their retries.
    public var failed = 0
    /// The first failures, in completion order (at most `Downloader.Configuration.maxRecordedFailures`).
    public var failures: [Failure] = []
    /// Failure counts by `DownloadStats.reason(of:)`: `http-503`, `not-found`, `invalid-body`, `unusable-document`, `transport`, `unsupported`,
    /// `abandoned`.
    public var failureCounts: [String: Int] = [:]
    /// Tiles the origin did not have, recorded empty under `missingTiles: "skip"` (counted in `succeeded`).
    public var missingTiles = 0
    /// The fatal failure (a refused key or token, `FetchFailure.refused`) that stopped the run early, or nil when it ran to the end.
    public var stoppedBy: Failure?
    /// Payload bytes of the successful requests.
    public var bytes: Int64 = 0
    /// Retries made by the fetcher during the download.
    public var retries = 0
    /// Wall time of the download, in seconds.
    public var duration: TimeInterval = 0
    /// The most batches that ever waited for the writer at once.
    public var peakQueuedBatches = 0

    /// Creates empty statistics.
    public init() {}

    /// Whether a fatal failure stopped the run before every request was pulled.
    public var stoppedEarly: Bool { stoppedBy != nil }

    /// A one-line explanation of an early stop, naming the likely cause, the URL redacted; nil when
    /// the run was not stopped.
    public var stopMessage: String? {
        stoppedBy.map { "download stopped early: \($0.url): \($0.failure)" }
    }

    /// The key a failure is counted under.
    public static func reason(of failure: FetchFailure) -> String {
        switch failure {
        case .status(let code), .refused(let code): return "http-\(code)"
        case .notFound: return "not-found"
        case .invalidBody: return "invalid-body"
        case .unusableDocument: return "unusable-document"
        case .transport: return "transport"
        case .unsupported: return "unsupported"
        case .abandoned: return "abandoned"
        case .tls: return "tls"
        case .redirects: return "too-many-redirects"
        case .changed: return "origin-changed"
        }
    }
}

/// A snapshot of download progress, reported after every result.
public struct DownloadProgress: Equatable, Sendable {
    /// Requests pulled from the work list so far.
    public var requested: Int
    /// Requests finished, successfully or not.
    public var completed: Int
    /// Requests that succeeded.
    public var succeeded: Int
    /// Requests that failed after their retries.
    public var failed: Int
    /// Payload bytes received.
    public var bytes: Int64

    /// Creates a snapshot.
    public init(requested: Int, completed: Int, succeeded: Int, failed: Int, bytes: Int64) {
        self.requested = requested
        self.completed = completed
        self.succeeded = succeeded
        self.failed = failed
        self.bytes = bytes
    }
}
