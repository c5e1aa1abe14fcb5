import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// The independent readers export tests check archives with: the Python oracles `.ci/run` installs
/// at `.oracles` (`.ci/oracles.txt`: the `pmtiles` and `mapli` packages from PyPI; see
/// `ProvisionTestSupport.Oracles`), GDAL's `ogrinfo` and the `sqlite3` shell; scripts in
/// `Tests/Fixtures/export/`.
enum ExportOracles {
    /// `Tests/Fixtures/export`.
    static let scripts = Demo.repositoryRoot.appendingPathComponent("Tests/Fixtures/export")

    /// The oracles' Python; a missing one fails the test (it is part of the test's setup, not optional).
    static func python() throws -> URL {
        guard let python = Oracles.python else {
            XCTFail(Oracles.missing)
            throw Oracles.Failure(description: Oracles.missing)
        }
        return python
    }

    /// Runs `script` with `arguments` and parses the JSON line it prints.
    static func run(_ script: String, _ arguments: [String], environment: [String: String] = [:], wrapper: [String] = [],
                    timeout: TimeInterval = 120, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let python = try python()
        let command = wrapper + [python.path, scripts.appendingPathComponent(script).path] + arguments
        let executable = URL(fileURLWithPath: command[0].hasPrefix("/") ? command[0] : ProvisionProcess.onPath(command[0])?.path ?? command[0])
        let result = try ProvisionProcess.run(
            executable, Array(command.dropFirst()), in: FileManager.default.temporaryDirectory,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }, timeout: timeout,
            file: file, line: line)
        guard result.status == 0 else {
            XCTFail("\(script) failed (\(result.status)): \(result.stderr.suffix(2000))", file: file, line: line)
            throw CocoaError(.fileReadCorruptFile)
        }
        return try parseJSON(result.stdout, file: file, line: line)
    }

    /// Compares an archive with the store tile by tile (`check_archive.py`).
    static func check(_ kind: String, _ archive: URL, store: URL, template: String, regions: [Int] = [],
                      file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        var arguments = [kind, archive.path, store.appendingPathComponent("offline.db").path, template]
        if !regions.isEmpty { arguments += ["--regions", regions.map(String.init).joined(separator: ",")] }
        return try run("check_archive.py", arguments, file: file, line: line)
    }

    /// `ogrinfo` (GDAL); fails when GDAL is not installed.
    static func ogrinfo(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        guard let ogrinfo = ProvisionProcess.onPath("ogrinfo") else {
            throw MissingTool("GDAL's ogrinfo", package: "gdal-bin")
        }
        let result = try ProvisionProcess.run(ogrinfo, arguments, in: FileManager.default.temporaryDirectory,
                                              environment: ProcessInfo.processInfo.environment, timeout: 60, file: file, line: line)
        XCTAssertEqual(result.status, 0, "ogrinfo \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result.stdout
    }
}
