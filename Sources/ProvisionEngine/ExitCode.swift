/// Process exit statuses: sysexits and Terraform's `-detailed-exitcode`. Decided here only: a
/// `ProvisionError`'s kind is one of these (never `success` or `changesPresent`), so an error
/// kind and its exit status are one value and no map between two enums can drift.
public enum ExitCode: Int32, Sendable {
    /// Success; for plan, no changes.
    case success = 0
    /// Anything not covered below.
    case failure = 1
    /// `plan --detailed-exitcode`: changes present.
    case changesPresent = 2
    /// Bad command-line usage: options, a missing key or token in the environment.
    case usage = 64
    /// The job file, a document it leads to, or the plan is invalid or over the limits.
    case invalidJob = 65
    /// An input file or store is missing or unreadable.
    case missingInput = 66
    /// Upstream (an origin) is unavailable or refused the credentials.
    case upstreamUnavailable = 69
    /// The store, or an output file, cannot be written.
    case cannotWriteStore = 73
    /// Apply finished partially; retry later.
    case partial = 75
    /// Stopped by SIGINT (128 + 2) after committing what was verified.
    case interrupted = 130
    /// Stopped by SIGTERM (128 + 15) after committing what was verified.
    case terminated = 143

    /// The status's name, for JSON (`usage`, `invalidJob` …).
    public var name: String {
        switch self {
        case .success: return "success"
        case .failure: return "failure"
        case .changesPresent: return "changesPresent"
        case .usage: return "usage"
        case .invalidJob: return "invalidJob"
        case .missingInput: return "missingInput"
        case .upstreamUnavailable: return "upstreamUnavailable"
        case .cannotWriteStore: return "cannotWriteStore"
        case .partial: return "partial"
        case .interrupted: return "interrupted"
        case .terminated: return "terminated"
        }
    }
}
