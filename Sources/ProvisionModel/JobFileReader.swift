import Foundation
import ProvisionFoundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a job file, read within `JobLoader.maxFileBytes`, and how to name and resolve it.
public struct JobFileContents: Equatable, Sendable {
    /// How diagnostics name the file: the path as given, or `<stdin>`.
    public var displayName: String
    /// The directory relative paths in the file resolve against: the file's directory, or the
    /// working directory for standard input.
    public var baseDirectory: URL
    /// The file's bytes (the CLI digests them for the plan and the lock).
    public var data: Data

    /// Contents named `displayName`, resolving relative paths against `baseDirectory`.
    public init(displayName: String, baseDirectory: URL, data: Data) {
        self.displayName = displayName
        self.baseDirectory = baseDirectory
        self.data = data
    }
}

/// Why a job file's bytes could not be had.
public enum JobFileReadFailure: Error, Equatable, Sendable {
    /// Missing, a directory, no permission, an I/O error: the CLI exits 66.
    case unreadable(path: String, reason: String)
    /// Larger than `JobLoader.maxFileBytes`: refused as an invalid job (65) without reading it whole.
    case tooLarge(Diagnostic)

    /// The same failure as the result of loading.
    public var loadResult: JobLoadResult {
        switch self {
        case .unreadable(let path, let reason): return .unreadable(path: path, reason: reason)
        case .tooLarge(let diagnostic): return .invalid([diagnostic])
        }
    }
}

/// Reads a job file with plain `open(2)`/`read(2)`, at most a cap plus one byte.
///
/// Why not `Data(contentsOf:)`: it reads any size whole (a 50 MB file cost 926 MB of memory
/// before the first diagnostic), and on Linux it refuses `/dev/stdin` and pipes with a
/// misleading permission error. A regular file's size is checked with `fstat` before any
/// read; a pipe, FIFO or terminal is read to end of input, stopping one byte past the cap.
enum JobFileReader {
    /// Reads the file at `url`; `displayName` names it in diagnostics.
    static func read(from url: URL, displayName: String, maxBytes: Int) -> Result<JobFileContents, JobFileReadFailure> {
        let path = url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.unreadable(path: path, reason: describe(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(path: path, reason: describe(errno))) }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR { return .failure(.unreadable(path: path, reason: "is a directory, not a job file")) }
        if type == S_IFREG, info.st_size > Int64(maxBytes) {
            return .failure(.tooLarge(tooLarge(displayName, size: "\(grouped(Int(info.st_size))) bytes", maxBytes: maxBytes)))
        }
        return readAll(fd, path: path, displayName: displayName, maxBytes: maxBytes).map {
            JobFileContents(displayName: displayName, baseDirectory: url.deletingLastPathComponent(), data: $0)
        }
    }

    /// Reads `fd` (standard input, a pipe) to its end; relative paths resolve against `baseDirectory`.
    static func read(fileDescriptor fd: Int32, displayName: String, baseDirectory: URL,
                     maxBytes: Int) -> Result<JobFileContents, JobFileReadFailure> {
        readAll(fd, path: displayName, displayName: displayName, maxBytes: maxBytes).map {
            JobFileContents(displayName: displayName, baseDirectory: baseDirectory, data: $0)
        }
    }

    /// Every byte of `fd` up to `maxBytes`; one more byte is refused as too large.
    private static func readAll(_ fd: Int32, path: String, displayName: String,
                                maxBytes: Int) -> Result<Data, JobFileReadFailure> {
        var data = Data()
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let wanted = min(chunk, maxBytes + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(path: path, reason: describe(errno)))
            }
            if count == 0 { return .success(data) }
            data.append(contentsOf: buffer[0..<count])
            if data.count > maxBytes {
                return .failure(.tooLarge(tooLarge(displayName, size: "more than \(grouped(maxBytes)) bytes", maxBytes: maxBytes)))
            }
        }
    }

    /// The diagnostic of a job file over the cap.
    static func tooLarge(_ displayName: String, size: String, maxBytes: Int) -> Diagnostic {
        Diagnostic(file: displayName, pointer: "",
                   message: "\(displayName) is \(size), over the cap of \(capText(maxBytes)) on job files; "
                       + "a job file names regions and style packs and is far smaller: put large shapes in a "
                       + "\"geojson\" file instead")
    }

    /// `16 MiB (16,777,216 bytes)`, or just the bytes for a cap that is not a whole number of MiB.
    static func capText(_ maxBytes: Int) -> String {
        maxBytes % (1 << 20) == 0 ? "\(maxBytes >> 20) MiB (\(grouped(maxBytes)) bytes)" : "\(grouped(maxBytes)) bytes"
    }

    /// The text of an errno value as `strerror` gives it, lowercased to follow a colon
    /// (`no such file or directory`, `permission denied`).
    static func describe(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

/// `read(2)`, named apart from `JobFileReader.read`.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}
