import Foundation
import ProvisionStore

/// A file an export writes, buffered, beside its destination under a temporary name; `commit`
/// flushes it and renames it into place, `discard` removes it.
///
/// Why a temporary name in the destination's directory: a rename within one file system is
/// atomic, so a reader (or a killed export) sees the previous file or the finished one, never a
/// torn one, and a failed export leaves nothing behind.
final class ExportFile {
    /// Where the file goes once committed.
    let destination: URL
    /// The temporary file being written.
    let temporary: URL
    private var descriptor: Int32
    private var buffer = Data()
    /// Bytes written so far (buffered ones included).
    private(set) var length: UInt64 = 0
    private static let bufferSize = 1 << 20

    /// Creates the temporary file for `destination` (`.NAME.SUFFIX-PID` beside it).
    init(destination: URL, suffix: String = "tmp") throws {
        self.destination = destination
        temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(suffix)-\(getpid())")
        descriptor = open(temporary.path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw Self.error("cannot create", temporary, target: destination) }
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if descriptor >= 0 {
            _ = close(descriptor)
            unlink(temporary.path)
        }
    }

    /// Appends `bytes`.
    func write(_ bytes: Data) throws {
        length += UInt64(bytes.count)
        if buffer.count + bytes.count > Self.bufferSize {
            try flushBuffer()
            if bytes.count >= Self.bufferSize { return try writeAll(bytes) }
        }
        buffer.append(bytes)
    }

    /// Appends the whole content of `other` (whose buffer is flushed first).
    func append(contentsOf other: ExportFile) throws {
        try other.flushBuffer()
        try flushBuffer()
        var offset: off_t = 0
        var chunk = [UInt8](repeating: 0, count: 4 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(other.descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot read", other.temporary, target: destination)
            }
            if count == 0 { break }
            try chunk.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            offset += off_t(count)
            length += UInt64(count)
        }
    }

    /// Flushes the file to disk and renames it over `destination`.
    func commit() throws {
        try flushBuffer()
        guard fsync(descriptor) == 0 else { throw Self.error("cannot flush", temporary, target: destination) }
        let fd = descriptor
        descriptor = -1
        guard close(fd) == 0 else {
            unlink(temporary.path)
            throw Self.error("cannot close", temporary, target: destination)
        }
        do {
            try AtomicFile.replace(destination, with: temporary)
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    /// Closes and removes the temporary file (idempotent).
    func discard() {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
        descriptor = -1
        unlink(temporary.path)
    }

    private func flushBuffer() throws {
        guard !buffer.isEmpty else { return }
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: Data) throws {
        try bytes.withUnsafeBytes { try writeAll($0) }
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < raw.count {
            let written = Foundation.write(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot write", temporary, target: destination)
            }
            offset += written
        }
    }

    /// The error for `errno` after `what` on `path`: `.diskFull` naming the destination, else `.io`.
    static func error(_ what: String, _ path: URL, target: URL) -> StoreError {
        let code = errno
        let detail = "\(what) \(path.lastPathComponent): \(String(cString: strerror(code)))"
        if StoreError.isDiskFull(errno: code) {
            return StoreError(.diskFull, "the disk is full while writing \(target.path) (\(detail))", path: target.path,
                              underlyingCode: code, underlyingIsErrno: true)
        }
        return StoreError(.io, detail, path: target.path, underlyingCode: code)
    }
}
