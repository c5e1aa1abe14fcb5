import Foundation

extension AtomicFile {
    /// Moves the finished file `source` over `destination` atomically: flushes `source`,
    /// renames it into place and flushes the directory, so a kill leaves either the old file or
    /// the new one, never a mix.
    public static func replace(_ destination: URL, with source: URL) throws {
        let fd = open(source.path, O_RDONLY)
        guard fd >= 0 else {
            throw StoreError(.io, "cannot open \(source.lastPathComponent) to move it into place: \(String(cString: strerror(errno)))",
                             path: source.path, underlyingCode: errno)
        }
        let synced = fsync(fd)
        let code = errno
        _ = Foundation.close(fd)
        guard synced == 0 else {
            throw StoreError(.io, "cannot flush \(source.lastPathComponent): \(String(cString: strerror(code)))",
                             path: source.path, underlyingCode: code)
        }
        guard rename(source.path, destination.path) == 0 else {
            throw StoreError(.io, "cannot move \(source.lastPathComponent) into place: \(String(cString: strerror(errno)))",
                             path: destination.path, underlyingCode: errno)
        }
        let directory = open(destination.deletingLastPathComponent().path, O_RDONLY)
        if directory >= 0 {
            _ = fsync(directory)
            _ = Foundation.close(directory)
        }
    }
}
