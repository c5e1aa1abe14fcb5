import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel

/// A job file, loaded and validated, with the digest of its bytes.
public struct JobInput: Sendable {
    public var job: Job
    /// The path as given (`-` for standard input).
    public var path: String
    /// `sha256:` over the file's bytes.
    public var digest: String

    public init(job: Job, path: String, digest: String) {
        self.job = job
        self.path = path
        self.digest = digest
    }

    /// Loads `path` (`-`: standard input): an unreadable file is `missingInput`, an invalid or
    /// oversized one `invalidJob` with every problem as a diagnostic.
    public static func load(_ path: String) throws(ProvisionError) -> JobInput {
        switch JobLoader.read(argument: path) {
        case .success(let contents): return try load(contents, path: path)
        case .failure(let failure): throw error(failure, path: path)
        }
    }

    /// The error for a job file that could not be read: missing input, or too large (invalid).
    public static func error(_ failure: JobFileReadFailure, path: String) -> ProvisionError {
        switch failure {
        case .unreadable(let where_, let reason): return ProvisionError(.missingInput, "cannot read job file \(where_): \(reason)")
        case .tooLarge(let diagnostic): return invalid([diagnostic], path: path)
        }
    }

    /// Validates bytes already read (`JobLoader.read`).
    public static func load(_ contents: JobFileContents, path: String) throws(ProvisionError) -> JobInput {
        switch JobLoader.load(contents) {
        case .unreadable(let where_, let reason):
            throw error(.unreadable(path: where_, reason: reason), path: path)
        case .invalid(let diagnostics):
            throw invalid(diagnostics, path: path)
        case .success(let job):
            return JobInput(job: job, path: path, digest: "sha256:" + SHA256.hex(contents.data))
        }
    }

    /// An invalid job: one sentence about the whole file (a saved plan, too large) is the
    /// message itself; else the problems are counted and listed. A job whose every problem is an
    /// origin that does not exist (`Diagnostic.isMissingFile`) is missing input (66).
    private static func invalid(_ diagnostics: [Diagnostic], path: String) -> ProvisionError {
        let name = path == JobLoader.standardInputArgument ? JobLoader.standardInputName : path
        if !diagnostics.isEmpty, diagnostics.allSatisfy(\.isMissingFile) {
            let what = diagnostics.count == 1 ? diagnostics[0].message : plural(diagnostics.count, "origin") + " not found"
            return ProvisionError(.missingInput, "\(name) names \(diagnostics.count == 1 ? "an origin" : "origins") "
                                  + "that cannot be found: \(what)", diagnostics: diagnostics)
        }
        if diagnostics.count == 1, diagnostics[0].pointer.isEmpty, diagnostics[0].message.hasPrefix(name) {
            return ProvisionError(.invalidJob, diagnostics[0].message, diagnostics: diagnostics)
        }
        return ProvisionError(.invalidJob, "\(name) is not a valid job file (\(plural(diagnostics.count, "problem")))",
                              diagnostics: diagnostics)
    }
}
