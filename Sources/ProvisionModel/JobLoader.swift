import Foundation
import ProvisionFoundation

/// The outcome of loading a job file.
public enum JobLoadResult: Equatable, Sendable {
    /// The file is a valid job.
    case success(Job)
    /// The file was read but is not a valid job: every problem found, in document order
    /// (problems inside a GeoJSON file the job refers to name that file).
    case invalid([Diagnostic])
    /// The file could not be read at all (missing, a directory, no permission); the CLI exits 66.
    case unreadable(path: String, reason: String)

    /// The job, when loading succeeded.
    public var job: Job? {
        if case .success(let job) = self { return job }
        return nil
    }

    /// The diagnostics, when the file was invalid; empty otherwise.
    public var diagnostics: [Diagnostic] {
        if case .invalid(let diagnostics) = self { return diagnostics }
        return []
    }
}

/// Reads and validates job files (version 1); see `docs/job-file.md` for the format.
public enum JobLoader {
    /// The largest job file read, in bytes: 16 MiB. A job names regions and style packs and is
    /// a few kilobytes; large shapes belong in `geojson` files. A larger file (or standard input
    /// past it) is refused as invalid without being read whole.
    public static let maxFileBytes = 16 << 20

    /// The command-line argument that stands for standard input.
    public static let standardInputArgument = "-"

    /// How diagnostics name a job read from standard input.
    public static let standardInputName = "<stdin>"

    /// Reads and validates the job file named on the command line: a path, or `-` for standard
    /// input (see `loadStandardInput`). Diagnostics name the file as given (`<stdin>` for `-`).
    public static func load(argument: String) -> JobLoadResult {
        switch read(argument: argument) {
        case .success(let contents): return load(contents)
        case .failure(let failure): return failure.loadResult
        }
    }

    /// The bytes of the job file named on the command line (a path, or `-` for standard input),
    /// for a caller that needs them as well as the job (the CLI digests them): pass the contents
    /// to `load(_:)`. `maxBytes` is the cap (a caller that may be handed a saved plan, which can
    /// be larger than a job, reads with a larger one and checks the job's size itself).
    public static func read(argument: String, maxBytes: Int = maxFileBytes) -> Result<JobFileContents, JobFileReadFailure> {
        if argument == standardInputArgument { return readStandardInput(maxBytes: maxBytes) }
        return read(from: URL(fileURLWithPath: argument), displayName: argument, maxBytes: maxBytes)
    }

    /// The bytes of the job file at `url`, at most `maxFileBytes`; `displayName` (default: the
    /// path as given in `url`) is how diagnostics name it. A pipe, FIFO or `/dev/stdin` is read
    /// to its end like standard input.
    public static func read(from url: URL, displayName: String? = nil,
                            maxBytes: Int = maxFileBytes) -> Result<JobFileContents, JobFileReadFailure> {
        let fileURL = url.standardizedFileURL.absoluteURL
        return JobFileReader.read(from: fileURL, displayName: displayName ?? url.relativePath, maxBytes: maxBytes)
    }

    /// The bytes of standard input to its end, at most `maxFileBytes`; relative paths in the job
    /// resolve against the working directory.
    public static func readStandardInput(displayName: String = standardInputName,
                                         maxBytes: Int = maxFileBytes) -> Result<JobFileContents, JobFileReadFailure> {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return JobFileReader.read(fileDescriptor: 0, displayName: displayName, baseDirectory: cwd, maxBytes: maxBytes)
    }

    /// Reads standard input to its end and validates it as a job (`provision plan -`); relative
    /// paths resolve against the working directory, and diagnostics name the file `<stdin>`.
    public static func loadStandardInput(displayName: String = standardInputName) -> JobLoadResult {
        switch readStandardInput(displayName: displayName) {
        case .success(let contents): return load(contents)
        case .failure(let failure): return failure.loadResult
        }
    }

    /// Validates job-file bytes read by `read(argument:)`, `read(from:)` or `readStandardInput()`;
    /// bytes over `maxFileBytes` (read with a larger cap) are refused as `read` would refuse them.
    public static func load(_ contents: JobFileContents) -> JobLoadResult {
        guard contents.data.count <= maxFileBytes else {
            return .invalid([JobFileReader.tooLarge(contents.displayName, size: "\(grouped(contents.data.count)) bytes",
                                                    maxBytes: maxFileBytes)])
        }
        return parse(data: contents.data, baseDirectory: contents.baseDirectory, displayName: contents.displayName)
    }

    /// Reads the job file at `url` and validates it.
    ///
    /// Relative paths in the file (`store`, `geojson`, mirror directories and `mbtiles:` paths)
    /// are resolved against the file's directory. `displayName` is how diagnostics name the
    /// file (default: the path as given in `url`).
    public static func load(from url: URL, displayName: String? = nil) -> JobLoadResult {
        switch read(from: url, displayName: displayName, maxBytes: maxFileBytes) {
        case .success(let contents): return load(contents)
        case .failure(let failure): return failure.loadResult
        }
    }

    /// Validates job-file bytes; relative paths resolve against `baseDirectory`, and diagnostics
    /// name the file `displayName`.
    ///
    /// A repeated key anywhere in the file is an error (one diagnostic per repetition, at the
    /// member's pointer and line). Bytes that are not a job file at all (another provision
    /// document such as a saved plan, an SQLite database) get one diagnostic saying what they are.
    public static func parse(data: Data, baseDirectory: URL, displayName: String) -> JobLoadResult {
        if let what = NotAJobFile.describeBytes(data) {
            return .invalid([Diagnostic(file: displayName, pointer: "", message: "\(displayName) is \(what), not a job file")])
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(data, duplicateKeys: .reject)
        } catch {
            if error.isDuplicateKey {
                return .invalid(([error] + error.moreDuplicateKeys).map {
                    Diagnostic(file: displayName, pointer: $0.pointer, message: $0.message, line: $0.line, column: $0.column)
                })
            }
            return .invalid([Diagnostic(file: displayName, pointer: "", message: "invalid JSON: \(error.message)",
                                        line: error.line, column: error.column)])
        }
        if let what = NotAJobFile.describe(document) {
            return .invalid([Diagnostic(file: displayName, pointer: "", message: "\(displayName) is \(what), not a job file")])
        }
        return validate(document, baseDirectory: baseDirectory, displayName: displayName)
    }

    /// Validates an already parsed job document.
    public static func validate(_ document: JSONValue, baseDirectory: URL, displayName: String) -> JobLoadResult {
        var validator = JobValidator(baseDirectory: baseDirectory.standardizedFileURL.absoluteURL,
                                     displayName: displayName)
        if let job = validator.validate(document) { return .success(job) }
        let diagnostics = validator.collector.diagnostics
        // The validator returns nil only after reporting; guard against a silent failure anyway.
        return .invalid(diagnostics.isEmpty
            ? [Diagnostic(file: displayName, pointer: "", message: "the job file is not valid")] : diagnostics)
    }
}
