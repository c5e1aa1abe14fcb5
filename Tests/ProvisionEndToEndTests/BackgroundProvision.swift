import Foundation
import ProvisionTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `provision` process running in the background, to be signalled or killed mid-run.
/// stdout and stderr go to temporary files (no pipe can fill up).
final class BackgroundProvision {
    /// The child process.
    let process = Process()
    private let scratch: URL
    private let outURL: URL
    private let errURL: URL
    private let outHandle: FileHandle
    private let errHandle: FileHandle
    private let finished = DispatchSemaphore(value: 0)
    private var collected: ProcessResult?
    /// Whether the child ended by an uncaught signal (rather than by calling exit), once `wait` returned.
    private(set) var endedBySignal = false

    /// Starts `provision arguments…` in `directory`.
    init(_ arguments: [String], in directory: URL, environment extra: [String: String] = [:],
         file: StaticString = #filePath, line: UInt = #line) throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("provision-e2e-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outURL = scratch.appendingPathComponent("stdout")
        errURL = scratch.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        outHandle = try FileHandle(forWritingTo: outURL)
        errHandle = try FileHandle(forWritingTo: errURL)
        process.executableURL = try ProvisionProcess.binary(file: file, line: line)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProvisionProcess.environment(extra)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.terminationHandler = { [finished] _ in finished.signal() }
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: scratch)
    }

    /// The child's pid.
    var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (SIGINT, SIGTERM, SIGKILL…) to the child.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// What stderr holds so far.
    var stderrSoFar: String { String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self) }

    /// Waits until `condition` holds, checking it whenever `server` logs a request (and at least
    /// every 50 ms, for conditions on the child's files); false when `timeout` passed first or the process ended
    /// first. `timeout` only bounds a test that would otherwise hang.
    func waitUntil(timeout: TimeInterval, watching server: LoopbackHTTPServer, _ condition: () -> Bool) -> Bool {
        let changed = DispatchSemaphore(value: 0)
        server.onEachRequest { changed.signal() }
        defer { server.onEachRequest(nil) }
        let deadline = DispatchTime.now() + timeout
        while !condition() {
            if !process.isRunning { return condition() }
            // Woken by the next request; a condition on the child's files (which it commits
            // without a request) is checked again after at most 50 ms.
            if changed.wait(timeout: min(deadline, .now() + 0.05)) == .timedOut, DispatchTime.now() >= deadline {
                return condition()
            }
        }
        return true
    }

    /// Waits for the child to end (killing it after `timeout`, failing the test) and returns what it left.
    @discardableResult
    func wait(timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) -> ProcessResult {
        if let collected { return collected }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = finished.wait(timeout: .now() + 5)
            XCTFail("provision \(process.arguments?.joined(separator: " ") ?? "") did not finish in \(timeout) s",
                    file: file, line: line)
        }
        try? outHandle.close()
        try? errHandle.close()
        let stdout = String(decoding: (try? Data(contentsOf: outURL)) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
        // A child killed by a signal reports the signal number with reason .uncaughtSignal.
        let status: Int32 = process.isRunning ? -1
            : (process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus)
        endedBySignal = !process.isRunning && process.terminationReason == .uncaughtSignal
        let result = ProcessResult(status: status, stdout: stdout, stderr: stderr)
        collected = result
        return result
    }
}
