import Foundation
import ProvisionCodecs
import ProvisionModel

/// A job file, loaded and validated, with the digest of its bytes.
struct JobInput {
    var job: Job
    var path: String
    var digest: String

    /// Loads `path`; maps an unreadable file to exit 66 and an invalid one to 65.
    static func load(_ path: String) throws(CLIError) -> JobInput {
        let url = URL(fileURLWithPath: path)
        switch JobLoader.load(from: url, displayName: path) {
        case .unreadable(let where_, let reason):
            throw CLIError(.missingInput, "cannot read job file \(where_): \(reason)")
        case .invalid(let diagnostics):
            throw CLIError(.invalidJob, "\(path) is not a valid job file (\(diagnostics.count) problem\(diagnostics.count == 1 ? "" : "s"))",
                           diagnostics: diagnostics)
        case .success(let job):
            let data = (try? Data(contentsOf: url)) ?? Data()
            return JobInput(job: job, path: path, digest: "sha256:" + SHA256.hex(data))
        }
    }
}
