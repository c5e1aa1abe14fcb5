import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes: stdout for results, stderr for progress and logs.
public final class Console: Sendable {
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    private let columns: @Sendable () -> Int?
    /// Whether stderr is a terminal (`--progress auto` draws a live bar only there).
    public let stderrIsTerminal: Bool

    /// A console on the process's stdout and stderr.
    public convenience init() {
        let out = FileHandle.standardOutput, err = FileHandle.standardError
        self.init(out: { out.write(Data($0.utf8)) }, err: { err.write(Data($0.utf8)) },
                  stderrIsTerminal: isatty(2) == 1, columns: Console.terminalColumns)
    }

    /// A console writing through `out` and `err` (tests capture them). Each call writes one
    /// whole text: callers serialise their own writes (`ProgressReporter` does under its lock).
    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
                stderrIsTerminal: Bool = false, columns: @escaping @Sendable () -> Int? = { nil }) {
        writeOut = out
        writeErr = err
        self.stderrIsTerminal = stderrIsTerminal
        self.columns = columns
    }

    /// Writes a result to stdout.
    public func out(_ text: String) { writeOut(text) }

    /// Writes a log line or progress to stderr.
    public func err(_ text: String) { writeErr(text) }

    /// The width of the terminal on stderr now (`TIOCGWINSZ`), nil when it is not a terminal.
    public var stderrColumns: Int? { columns() }

    @Sendable private static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

