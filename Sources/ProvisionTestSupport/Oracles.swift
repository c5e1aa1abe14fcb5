import Foundation
import ProvisionCodecs
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Python test oracles from PyPI (`.ci/oracles.txt`: the `pmtiles` package, `mercantile`, `shapely`,
/// `supermercado`) in the venv `.ci/run` installs at `.oracles/` of the repository, and the
/// scripts under `Tests/Fixtures/` that drive them.
public enum Oracles {
    /// The repository this file is in.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's python: `PROVISION_ORACLES/bin/python3` when that variable is set, else
    /// `.oracles/bin/python3` of the repository; nil when it is not there (run `.ci/run`).
    public static var python: URL? {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["PROVISION_ORACLES"].map { URL(fileURLWithPath: $0) }
            ?? repositoryRoot.appendingPathComponent(".oracles")
        let python = venv.appendingPathComponent("bin/python3")
        return FileManager.default.isExecutableFile(atPath: python.path) ? python : nil
    }

    /// Why the oracles are unavailable, for a test's skip message.
    public static let missing = "the Python test oracles are not installed: run .ci/run (or python3 -m venv .oracles && "
        + ".oracles/bin/pip install -r .ci/oracles.txt)"

    /// The failure of an oracle run, with what it printed on stderr.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Runs `script` (a path under the repository) with `arguments` in the venv; returns stdout.
    public static func run(_ script: String, _ arguments: [String]) throws -> Data {
        guard let python else { throw Failure(description: missing) }
        let process = Process()
        process.executableURL = python
        process.arguments = [repositoryRoot.appendingPathComponent(script).path] + arguments
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("stdout"), err = scratch.appendingPathComponent("stderr")
        try Data().write(to: out)
        try Data().write(to: err)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            throw Failure(description: "\(script) \(arguments.joined(separator: " ")) exited \(process.terminationStatus):\n\(text)")
        }
        return try Data(contentsOf: out)
    }
}

/// World PMTiles archives written by the `pmtiles` package's writer
/// (`Tests/Fixtures/pmtiles/pmtiles_oracle.py make`), cached in the temporary directory under a
/// digest of the script, its arguments and the oracle list, so a test run makes each once.
public enum PMTilesFixture {
    /// The oracle script, relative to the repository.
    public static let script = "Tests/Fixtures/pmtiles/pmtiles_oracle.py"

    /// The archive of zooms 0…`maxZoom` with tile compression `compression` (`gzip` or `none`);
    /// `variant` changes every tile but the shared ones (a new version of the same archive).
    public static func world(maxZoom: Int = 7, compression: String = "gzip", variant: String = "") throws -> URL {
        let arguments = ["--maxzoom", String(maxZoom), "--compression", compression, "--variant", variant]
        let root = Oracles.repositoryRoot
        var key = try Data(contentsOf: root.appendingPathComponent(script))
        key.append((try? Data(contentsOf: root.appendingPathComponent(".ci/oracles.txt"))) ?? Data())
        key.append(Data(arguments.joined(separator: "\u{0}").utf8))
        let digest = SHA256.hex(key).prefix(24)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("provision-pmtiles-fixtures")
        let archive = directory.appendingPathComponent("world-\(digest).pmtiles")
        if FileManager.default.fileExists(atPath: archive.path) { return archive }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let partial = directory.appendingPathComponent("world-\(digest).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: partial) }
        _ = try Oracles.run(script, ["make", partial.path] + arguments)
        // Renamed into place whole, so a concurrent run never reads a half-written archive.
        if rename(partial.path, archive.path) != 0 { throw Oracles.Failure(description: "cannot rename \(partial.path)") }
        return archive
    }

    /// The oracle's `expect`: for a region (`--bbox W,S,E,N` or `--polygon FILE`) and zoom range,
    /// the tiles `pmtiles extract` cuts, "z/x/y" → SHA-256 hex of the bytes (gzip undone), or nil
    /// for a tile of the cover the archive does not have.
    public static func expected(archive: URL, region: [String], minZoom: Int, maxZoom: Int) throws -> [String: String?] {
        let data = try Oracles.run(script, ["expect", archive.path] + region
                                   + ["--minzoom", String(minZoom), "--maxzoom", String(maxZoom)])
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Oracles.Failure(description: "the oracle printed no JSON object")
        }
        return object.mapValues { $0 as? String }
    }
}
