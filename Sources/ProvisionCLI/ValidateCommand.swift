import Foundation
import ProvisionModel

/// `provision validate JOB…`: reports every problem of every job file.
struct ValidateCommand {
    let jobs: [String]
    let options: CommonOptions
    let console: Console

    func run() throws(CLIError) -> ExitCode {
        var worst = ExitCode.success
        var files: [JSONValue] = []
        var text = ""
        for path in jobs {
            switch JobLoader.load(from: URL(fileURLWithPath: path), displayName: path) {
            case .success(let job):
                text += "\(path): valid (\(job.regions.count) regions, \(job.stylePacks.count) style packs)\n"
                files.append(["file": .string(path), "valid": true, "problems": []])
            case .invalid(let diagnostics):
                if worst == .success { worst = .invalidJob }
                text += "\(path): \(diagnostics.count) problem\(diagnostics.count == 1 ? "" : "s")\n"
                text += diagnostics.map { "  \($0)\n" }.joined()
                files.append(["file": .string(path), "valid": false, "problems": .array(diagnostics.map(diagnosticJSON))])
            case .unreadable(let where_, let reason):
                worst = .missingInput
                text += "\(path): cannot read \(where_): \(reason)\n"
                files.append(["file": .string(path), "valid": false, "unreadable": .string(reason), "problems": []])
            }
        }
        if options.format == .json {
            let doc: JSONValue = ["schemaVersion": 1, "kind": "validation", "valid": .bool(worst == .success),
                                  "files": .array(files)]
            console.out(doc.serialized(.prettySorted) + "\n")
        } else if worst == .success {
            if options.progress != .none { console.out(text) }
        } else {
            console.err(text)
        }
        return worst
    }
}
