import Foundation
import XCTest

/// What one run of a process left behind.
struct ProcessResult {
    /// The exit status.
    var status: Int32
    /// Everything written on stdout.
    var stdout: String
    /// Everything written on stderr.
    var stderr: String

    /// stdout and stderr together, for searching and failure messages.
    var combined: String { stdout + stderr }
}

/// Runs external programs (the built `provision`, `sqlite3`) with captured output and a timeout.
enum ProvisionProcess {
    /// The directory SwiftPM puts products in, next to the test bundle.
    static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
        #else
        return Bundle.main.bundleURL
        #endif
    }

    /// The built `provision` executable: `PROVISION_BINARY` when set, else the one beside the tests.
    static func binary(file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        if let override = ProcessInfo.processInfo.environment["PROVISION_BINARY"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let candidate = productsDirectory.appendingPathComponent("provision")
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            XCTFail("""
                the provision executable is missing at \(candidate.path); build it first \
                (swift build --product provision, with the same --scratch-path and configuration as the tests) \
                or set PROVISION_BINARY
                """, file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return candidate
    }

    /// The environment the child gets: ours, minus anything that would change its behaviour
    /// (proxies, tokens, a fixed epoch, CA files), plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.lowercased().hasSuffix("_proxy") || key == "MAPBOX_ACCESS_TOKEN"
            || key == "SOURCE_DATE_EPOCH" || key == "PROVISION_NOW" || key == "TEST_KEY"
            || ["CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"].contains(key) {
            env[key] = nil
        }
        env["NO_COLOR"] = "1"
        return env.merging(extra) { _, new in new }
    }

    /// Runs `provision arguments…` in `directory`; fails the test on a timeout.
    static func provision(_ arguments: [String], in directory: URL, environment extra: [String: String] = [:],
                          timeout: TimeInterval = 30, stdin: URL? = nil,
                          file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try run(binary(file: file, line: line), arguments, in: directory, environment: environment(extra),
                timeout: timeout, stdin: stdin, file: file, line: line)
    }

    /// Runs `executable` with `arguments`; stdout and stderr go to temporary files (no pipe can fill up).
    static func run(_ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String],
                    timeout: TimeInterval, stdin: URL? = nil, file: StaticString = #filePath,
                    line: UInt = #line) throws -> ProcessResult {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("provision-e2e-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = environment
        process.standardInput = try stdin.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            _ = finished.wait(timeout: .now() + 5)
            XCTFail("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish in \(timeout) s",
                    file: file, line: line)
        }
        try outHandle.close()
        try errHandle.close()
        let stdout = String(decoding: (try? Data(contentsOf: outURL)) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
        return ProcessResult(status: process.isRunning ? -1 : process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// The first executable called `name` on PATH.
    static func onPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
