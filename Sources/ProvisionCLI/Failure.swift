import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel

extension ProvisionError {
    /// The process exit status for this error: its kind (`ExitCode`, decided there only).
    var exitCode: ExitCode { kind }

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
/// - Throws: `cannotWriteStore` (73) naming the path and why (no such directory, not writable, a
///   directory).
func checkWritableOutput(_ path: String, flag: String) throws(ProvisionError) {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
        guard !isDirectory.boolValue else {
            throw ProvisionError(.cannotWriteStore, "cannot write \(flag) \(path): it is a directory")
        }
        guard access(url.path, W_OK) == 0 else {
            throw ProvisionError(.cannotWriteStore, "cannot write \(flag) \(path): the file is not writable")
        }
        return
    }
    let directory = url.deletingLastPathComponent()
    guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw ProvisionError(.cannotWriteStore, "cannot write \(flag) \(path): the directory \(directory.path) does not exist")
    }
    guard access(directory.path, W_OK) == 0 else {
        throw ProvisionError(.cannotWriteStore, "cannot write \(flag) \(path): the directory \(directory.path) is not writable")
    }
}

extension RunEnvironment {
    /// The shard a command line asks for: `--shard I/N` as given, or `--shard auto` read from
    /// the batch engine running this process. Missing or inconsistent values are usage errors
    /// naming the variables.
    static func shard(_ request: ShardRequest?, environment: [String: String]) throws(ProvisionError) -> Shard? {
        guard let request else { return nil }
        guard case .auto(let countOption) = request else {
            if case .fixed(let shard) = request { return shard }
            return nil
        }
        func integer(_ name: String) throws(ProvisionError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw ProvisionError(.usage, "--shard auto: \(name) must be a whole number, not '\(text)'")
            }
            return value
        }
        func checked(_ index: Int, _ count: Int?, from names: String) throws(ProvisionError) -> Shard {
            guard let count else {
                throw ProvisionError(.usage, "--shard auto: \(names) gives the index but nothing gives the count; "
                                     + "pass --shard-count N or set PROVISION_SHARD_COUNT")
            }
            guard count >= 1, index >= 0, index < count else {
                throw ProvisionError(.usage, "--shard auto: \(names) give shard \(index) of \(count), which is not "
                                     + "from 0 to \(count - 1)")
            }
            return Shard(index: index, count: count)
        }
        var count = countOption
        if count == nil { count = try integer("PROVISION_SHARD_COUNT") }
        if let index = try integer("JOB_COMPLETION_INDEX") {
            return try checked(index, count, from: "JOB_COMPLETION_INDEX")
        }
        if let id = try integer("SLURM_ARRAY_TASK_ID") {
            let minimum = try integer("SLURM_ARRAY_TASK_MIN") ?? 0
            let step = max(1, try integer("SLURM_ARRAY_TASK_STEP") ?? 1)  // --array=0-12:2 numbers tasks 0, 2, 4 …
            let tasks = try integer("SLURM_ARRAY_TASK_COUNT")
            if let count, let tasks, count != tasks {
                throw ProvisionError(.usage, "--shard auto: SLURM_ARRAY_TASK_COUNT is \(tasks) but the count given is \(count)")
            }
            guard (id - minimum) % step == 0 else {
                throw ProvisionError(.usage, "--shard auto: SLURM_ARRAY_TASK_ID \(id) is not SLURM_ARRAY_TASK_MIN \(minimum) "
                                     + "plus a multiple of SLURM_ARRAY_TASK_STEP \(step)")
            }
            return try checked((id - minimum) / step, tasks ?? count,
                               from: "(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP and SLURM_ARRAY_TASK_COUNT")
        }
        if let node = try integer("CI_NODE_INDEX") {
            let total = try integer("CI_NODE_TOTAL")
            if let count, let total, count != total {
                throw ProvisionError(.usage, "--shard auto: CI_NODE_TOTAL is \(total) but the count given is \(count)")
            }
            return try checked(node - 1, total ?? count, from: "CI_NODE_INDEX (1-based) and CI_NODE_TOTAL")
        }
        throw ProvisionError(.usage, "--shard auto found no batch engine: set JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), "
                             + "SLURM_ARRAY_TASK_ID (a Slurm array job) or CI_NODE_INDEX and CI_NODE_TOTAL (GitLab parallel), "
                             + "or give --shard I/N")
    }
}
