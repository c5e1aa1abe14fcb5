import Foundation
import ProvisionFoundation
import ProvisionModel

/// One writer per store: an exclusive `flock(2)` on `<store>/.provision.lock-owner`.
///
/// Why `flock` and not a pid file: the kernel drops the lock when its holder dies (even by
/// SIGKILL), so the lock itself is the truth and a file left by a killed process is simply
/// taken over. The JSON in the file (pid, host, start time) only names the holder in the
/// message another process gets. Locks on separate open file descriptions conflict, so two
/// `ApplyLease`s in one process exclude each other too. The descriptor is close-on-exec, so
/// child processes never inherit the lock.
///
/// Not for network file systems, where `flock` may be local to one machine.
public final class ApplyLease {
    /// Who holds (or held) a store lock, as written in the owner file.
    public struct Holder: Equatable, Sendable, CustomStringConvertible {
        /// The holder's process id.
        public var pid: Int32
        /// The holder's host name.
        public var host: String
        /// When the holder took the lock, ISO 8601 UTC (wall clock: not store content).
        public var startedAt: String

        /// Creates a holder record.
        public init(pid: Int32, host: String, startedAt: String) {
            self.pid = pid
            self.host = host
            self.startedAt = startedAt
        }

        /// `pid 123 on host example, started 2024-01-01T00:00:00Z`.
        public var description: String { "pid \(pid) on host \(host), started \(startedAt)" }

        /// The owner file's JSON: `{"host":…,"pid":…,"startedAt":…}`.
        public var json: JSONValue {
            ["pid": .int(Int(pid)), "host": .string(host), "startedAt": .string(startedAt)]
        }

        /// Parses the owner file's JSON; nil when it is empty or not a holder record.
        public init?(json data: Data) {
            // An owner file that is not a holder record names no holder (it only makes messages clearer).
            guard let value = try? JSONValue.parse(data), let pid = value["pid"]?.intValue,
                  let host = value["host"]?.stringValue, let startedAt = value["startedAt"]?.stringValue,
                  let pid32 = Int32(exactly: pid) else { return nil }
            self.init(pid: pid32, host: host, startedAt: startedAt)
        }
    }

    /// The owner file's name inside the store directory.
    public static let fileName = ".provision.lock-owner"

    /// The owner file.
    public let url: URL
    /// This process's record, as written to the owner file.
    public let holder: Holder
    /// The record left by an earlier holder that no longer holds the lock (a killed apply),
    /// nil when the file was absent or empty.
    public let previousHolder: Holder?
    private var descriptor: Int32

    /// Whether the lock is still held by this instance.
    public var isHeld: Bool { descriptor >= 0 }

    private init(url: URL, holder: Holder, previousHolder: Holder?, descriptor: Int32) {
        self.url = url
        self.holder = holder
        self.previousHolder = previousHolder
        self.descriptor = descriptor
    }

    deinit {
        release()
    }

    /// Takes the store's writer lock without waiting.
    ///
    /// Throws `.locked` naming the holder when another process (or another `ApplyLease`) holds
    /// it, `.io` or `.diskFull` when the owner file cannot be created or written.
    public static func acquire(directory: URL, startedAt: Date = Date()) throws -> ApplyLease {
        let url = directory.appendingPathComponent(fileName)
        let path = url.path
        // Retry when the file we locked was unlinked by a releasing holder in between.
        for _ in 0..<100 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw posixError("cannot create the store lock file", path) }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                let current = readAll(fd).flatMap(Holder.init(json:))
                _ = closeFD(fd)
                guard code == EWOULDBLOCK || code == EAGAIN else {
                    errno = code
                    throw posixError("cannot lock the store lock file", path)
                }
                throw lockedError(directory: directory, holder: current, path: path)
            }
            guard sameFile(fd, path) else {
                _ = closeFD(fd)
                continue
            }
            let previous = readAll(fd).flatMap(Holder.init(json:))
            let holder = Holder(pid: getpid(), host: hostName(), startedAt: iso8601(startedAt))
            do {
                try writeAll(fd, Data(holder.json.serialized(.canonical).utf8), path: path)
            } catch {
                unlink(path)
                _ = closeFD(fd)
                throw error
            }
            return ApplyLease(url: url, holder: holder, previousHolder: previous, descriptor: fd)
        }
        throw StoreError(.io, "the store lock file keeps being replaced while locking it", path: path)
    }

    /// The holder named in the owner file, or nil when there is none or it is unreadable.
    /// The lock may or may not be held: only `acquire` can tell.
    public static func recordedHolder(directory: URL) -> Holder? {
        // The owner file only names the holder in messages: unreadable, it names none.
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(fileName)) else { return nil }
        return Holder(json: data)
    }

    /// Deletes the owner file and unlocks. Releasing twice is harmless.
    public func release() {
        guard descriptor >= 0 else { return }
        // Unlink while still holding the lock, so no one can lock the file being removed
        // without noticing (`acquire` checks that the path still names the locked file).
        unlink(url.path)
        _ = closeFD(descriptor)
        descriptor = -1
    }

    // MARK: Helpers

    private static func lockedError(directory: URL, holder: Holder?, path: String) -> StoreError {
        let who = holder.map { "by \($0)" } ?? "by another process (it has not written its pid yet)"
        return StoreError(.locked,
                          "the store \(directory.path) is in use \(who): one apply at a time per store; "
                              + "wait for it to finish or stop it, then run again",
                          path: path)
    }

    private static func sameFile(_ fd: Int32, _ path: String) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(fd, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    private static func readAll(_ fd: Int32) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
            offset += off_t(count)
            if data.count > 65_536 { break }
        }
        return data.isEmpty ? nil : data
    }

    private static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        guard ftruncate(fd, 0) == 0 else { throw posixError("cannot truncate the store lock file", path) }
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = pwrite(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, off_t(offset))
                if written < 0 {
                    if errno == EINTR { continue }
                    throw posixError("cannot write the store lock file", path)
                }
                offset += written
            }
        }
    }

    private static func posixError(_ what: String, _ path: String) -> StoreError {
        .system(errno, what, path: path)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// `close(2)`, spelled so it cannot be confused with a method.
private func closeFD(_ fd: Int32) -> Int32 {
    close(fd)
}
