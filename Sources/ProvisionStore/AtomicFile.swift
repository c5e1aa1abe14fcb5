import Foundation
import ProvisionFoundation
import ProvisionModel

/// Writes files atomically and reads them back: the lock file, reports, saved plans.
///
/// A write goes to a temporary file in the same directory, is flushed to disk, renamed over
/// the target and the directory is flushed: a reader sees the old file or the new one, never a
/// torn one, even if the process dies mid-write. (Not a lock: the store's writer lock is
/// `ApplyLease`.)
public enum AtomicFile {
    /// Writes `value.serialized(.prettySorted)` followed by a newline to `url`, atomically.
    public static func write(_ value: JSONValue, to url: URL) throws {
        try write(Data((value.serialized(.prettySorted) + "\n").utf8), to: url)
    }

    /// The JSON of the file at `url` (the lock file), or nil when the file does not exist.
    public static func readJSON(from url: URL) throws -> JSONValue? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw StoreError(.io, "cannot read the file: \(error.localizedDescription)", path: url.path)
        }
        do {
            return try JSONValue.parse(data)
        } catch {
            throw StoreError(.invalidFile, "not valid JSON: \(error)", path: url.path)
        }
    }

    /// Writes `data` to `url` through a temporary file, fsync, rename and a directory fsync.
    /// On any failure the temporary file is removed and `url` keeps its previous content; a full
    /// file system is reported as `.diskFull` naming `url`.
    public static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw posixError("cannot create temporary file", temporary, target: url.path) }
        var closed = false
        defer {
            if !closed { _ = closeDescriptor(fd) }
        }
        do {
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = writeDescriptor(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw posixError("cannot write temporary file", temporary, target: url.path)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw posixError("cannot flush temporary file", temporary, target: url.path) }
            closed = true
            guard closeDescriptor(fd) == 0 else { throw posixError("cannot close temporary file", temporary, target: url.path) }
            guard rename(temporary, url.path) == 0 else { throw posixError("cannot rename into place", url.path) }
        } catch {
            unlink(temporary)
            throw error
        }
        let dirFD = open(directory, O_RDONLY)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            _ = closeDescriptor(dirFD)
        }
    }

    /// The `.io` (or `.diskFull`, naming `target`, the file the user knows) error for `errno`.
    private static func posixError(_ what: String, _ path: String, target: String? = nil) -> StoreError {
        .system(errno, what, path: path, target: target)
    }
}

/// `close(2)`, spelled so it cannot be confused with a method named `close`.
private func closeDescriptor(_ fd: Int32) -> Int32 {
    close(fd)
}

/// `write(2)`.
private func writeDescriptor(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
