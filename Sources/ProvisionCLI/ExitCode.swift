/// Process exit statuses: sysexits and Terraform's `-detailed-exitcode`. Decided here only.
public enum ExitCode: Int32, Sendable {
    /// Success; for plan, no changes.
    case success = 0
    /// Anything not covered below.
    case failure = 1
    /// `plan --detailed-exitcode`: changes present.
    case changesPresent = 2
    /// Bad command-line usage.
    case usage = 64
    /// The job file is invalid.
    case invalidJob = 65
    /// An input file or store is missing.
    case missingInput = 66
    /// Upstream (an origin) is unavailable.
    case upstreamUnavailable = 69
    /// The store cannot be written.
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
