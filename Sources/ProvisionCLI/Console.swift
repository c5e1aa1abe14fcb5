import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes: stdout for results, stderr for progress and logs.
public final class Console: @unchecked Sendable {
    private let lock = NSLock()
    private let outHandle: FileHandle
    private let errHandle: FileHandle
    /// Whether stderr is a terminal (a live progress bar is drawn only there).
    public let stderrIsTerminal: Bool

    /// A console on the process's stdout and stderr.
    public init() {
        outHandle = FileHandle.standardOutput
        errHandle = FileHandle.standardError
        stderrIsTerminal = isatty(2) == 1
    }

    /// Writes a result to stdout.
    public func out(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        outHandle.write(Data(text.utf8))
    }

    /// Writes a log line or progress to stderr.
    public func err(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        errHandle.write(Data(text.utf8))
    }
}
