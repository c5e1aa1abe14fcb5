import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports

/// `provision audit`: what a store holds and whether it is whole.
struct AuditCommand {
    let arguments: AuditArguments
    let view: CommandView
    let context: RunContext

    func run() throws(ProvisionError) -> ExitCode {
        try arguments.coverage.checkWritable()
        var run = AuditRun(store: arguments.store, verify: arguments.verify, manifest: arguments.manifest,
                           context: context, progress: view.progress)
        run.trustedKey = try arguments.trustedKey.map { path throws(ProvisionError) in
            try LockSignature.trustedKey(path: path, flag: "--trusted-key")
        }
        run.coverage = arguments.coverage.requests
        run.outputs = arguments.coverage.outputs
        let (document, maps) = try run.audit()
        try arguments.coverage.write(maps, progress: view.progress)
        view.show { $0.audit(document) }
        guard document.isOK else {
            // The NDJSON stream of a failing command ends with an `error` event (the text modes
            // have the document's own list of problems on stdout).
            let problems = document.problems
            let shown = problems.prefix(3).joined(separator: "; ")
            let more = problems.count > 3 ? "; … and \(grouped(problems.count - 3)) more" : ""
            view.progress.closingError(ProvisionError(.failure, "the store at \(document.store) is not whole "
                                                      + "(\(plural(problems.count, "problem"))): \(shown)\(more)"))
            return .failure
        }
        return .success
    }
}
