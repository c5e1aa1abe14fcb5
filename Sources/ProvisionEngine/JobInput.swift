import Foundation
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

    /// Loads `path`: an unreadable file is `missingInput`, an invalid one `invalidJob` with
    /// every problem as a diagnostic.
    public static func load(_ path: String) throws(ProvisionError) -> JobInput {
        let url = URL(fileURLWithPath: path)
        switch JobLoader.load(from: url, displayName: path) {
        case .unreadable(let where_, let reason):
            throw ProvisionError(.missingInput, "cannot read job file \(where_): \(reason)")
        case .invalid(let diagnostics):
            let count = diagnostics.count == 1 ? "1 problem" : "\(diagnostics.count) problems"
            throw ProvisionError(.invalidJob, "\(path) is not a valid job file (\(count))", diagnostics: diagnostics)
        case .success(let job):
            let data = (try? Data(contentsOf: url)) ?? Data()
            return JobInput(job: job, path: path, digest: "sha256:" + SHA256.hex(data))
        }
    }
}
