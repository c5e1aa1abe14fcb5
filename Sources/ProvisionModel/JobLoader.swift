import Foundation

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
    /// Reads the job file at `url` and validates it.
    ///
    /// Relative paths in the file (`store`, `geojson`, mirror directories and `mbtiles:` paths)
    /// are resolved against the file's directory. `displayName` is how diagnostics name the
    /// file (default: the path as given in `url`).
    public static func load(from url: URL, displayName: String? = nil) -> JobLoadResult {
        let fileURL = url.standardizedFileURL.absoluteURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: fileURL.path, isDirectory: &isDirectory) else {
            return .unreadable(path: fileURL.path, reason: "no such file")
        }
        if isDirectory.boolValue {
            return .unreadable(path: fileURL.path, reason: "is a directory, not a job file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch {
            return .unreadable(path: fileURL.path, reason: "cannot be read: \(error.localizedDescription)")
        }
        return parse(data: data, baseDirectory: fileURL.deletingLastPathComponent(),
                     displayName: displayName ?? url.relativePath)
    }

    /// Validates job-file bytes; relative paths resolve against `baseDirectory`, and diagnostics
    /// name the file `displayName`.
    public static func parse(data: Data, baseDirectory: URL, displayName: String) -> JobLoadResult {
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            return .invalid([Diagnostic(file: displayName, pointer: "", message: "invalid JSON: \(error.message)",
                                        line: error.line, column: error.column)])
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
