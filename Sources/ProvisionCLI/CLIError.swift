import Foundation
import ProvisionModel

/// An operational failure of a command: what the user sees, and the exit status it maps to.
struct CLIError: Error {
    var exitCode: ExitCode
    var message: String
    /// Input problems, reported one per line (and in JSON).
    var diagnostics: [Diagnostic] = []
    /// The underlying error, shown with --verbose.
    var cause: String?

    init(_ exitCode: ExitCode, _ message: String, diagnostics: [Diagnostic] = [], cause: String? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.diagnostics = diagnostics
        self.cause = cause
    }

    /// The error as a JSON document for `--json` output.
    var json: JSONValue {
        [
            "schemaVersion": 1,
            "kind": "error",
            "exitCode": .int(Int(exitCode.rawValue)),
            "message": .string(message),
            "diagnostics": .array(diagnostics.map(diagnosticJSON)),
        ]
    }
}

/// A diagnostic as JSON.
func diagnosticJSON(_ d: Diagnostic) -> JSONValue {
    [
        "file": .string(d.file),
        "pointer": .string(d.pointer),
        "message": .string(d.message),
        "line": d.line.map { .int($0) } ?? .null,
        "column": d.column.map { .int($0) } ?? .null,
    ]
}
