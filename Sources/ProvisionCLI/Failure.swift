import Foundation
import ProvisionEngine
import ProvisionModel

/// The error → exit status map: the one place it is decided.
extension ExitCode {
    /// The exit status of a failure of `kind`.
    init(_ kind: ProvisionError.Kind) {
        switch kind {
        case .failure: self = .failure
        case .usage: self = .usage
        case .invalidJob: self = .invalidJob
        case .missingInput: self = .missingInput
        case .upstreamUnavailable: self = .upstreamUnavailable
        case .cannotWrite: self = .cannotWriteStore
        case .partial: self = .partial
        }
    }
}

extension ProvisionError {
    /// The process exit status for this error.
    var exitCode: ExitCode { ExitCode(kind) }

    /// The error as a JSON document for `--json` output (`Jobs/schema/error.schema.json`).
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

/// What a run takes from the environment: the clock (`PROVISION_NOW`, the documented stand-in
/// for end-to-end tests, else the wall clock) and `SOURCE_DATE_EPOCH`.
enum RunEnvironment {
    /// The environment variable that stands in for the clock (Unix seconds).
    static let clockVariable = "PROVISION_NOW"
    /// The environment variable that sets the flush window in milliseconds (default 100).
    static let flushWindowVariable = "PROVISION_FLUSH_WINDOW_MS"

    /// The context of a run; a variable that is not a non-negative integer is a usage error.
    /// (`seconds` reads any of them as a non-negative integer; the flush window's is milliseconds.)
    static func context(_ environment: [String: String]) throws(ProvisionError) -> RunContext {
        func seconds(_ name: String) throws(ProvisionError) -> Int64? {
            guard let text = environment[name] else { return nil }
            guard let value = Int64(text), value >= 0 else {
                throw ProvisionError(.usage, "\(name) must be a non-negative integer (Unix seconds), not '\(text)'")
            }
            return value
        }
        let now = try seconds(clockVariable) ?? Int64(Date().timeIntervalSince1970)
        let flushWindow = try seconds(flushWindowVariable).map { Double($0) / 1000 } ?? 0.1
        return RunContext(environment: environment, now: now, sourceDateEpoch: try seconds("SOURCE_DATE_EPOCH"),
                          flushWindow: flushWindow)
    }
}

/// Checks that an output file (`--report`, `--out`) can be written, before any work is done.
///
/// - Throws: `cannotWrite` (73) naming the path and why (no such directory, not writable, a
///   directory).
func checkWritableOutput(_ path: String, flag: String) throws(ProvisionError) {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
        guard !isDirectory.boolValue else {
            throw ProvisionError(.cannotWrite, "cannot write \(flag) \(path): it is a directory")
        }
        guard access(url.path, W_OK) == 0 else {
            throw ProvisionError(.cannotWrite, "cannot write \(flag) \(path): the file is not writable")
        }
        return
    }
    let directory = url.deletingLastPathComponent()
    guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw ProvisionError(.cannotWrite, "cannot write \(flag) \(path): the directory \(directory.path) does not exist")
    }
    guard access(directory.path, W_OK) == 0 else {
        throw ProvisionError(.cannotWrite, "cannot write \(flag) \(path): the directory \(directory.path) is not writable")
    }
}
