import Foundation
import ProvisionCodecs
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Valhalla itself, from PyPI `pyvalhalla` 3.9.1 in the venv `.ci/setup` installs at `.valhalla/`
/// (Python 3.12), driven by `Tests/Fixtures/valhalla/valhalla_town.py`: the test town's graph built
/// with `valhalla_build_tiles`, extracts cut with `valhalla_build_extract`, routes asked of
/// `valhalla.Actor` in a child process.
public enum ValhallaFixture {
    /// The fixture script, relative to the repository.
    public static let script = "Tests/Fixtures/valhalla/valhalla_town.py"

    /// The venv's python: `PROVISION_VALHALLA/bin/python3` when that variable is set, else
    /// `.valhalla/bin/python3` of the repository; nil when it is not there.
    public static var python: URL? {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["PROVISION_VALHALLA"].map { URL(fileURLWithPath: $0) }
            ?? Oracles.repositoryRoot.appendingPathComponent(".valhalla")
        let python = venv.appendingPathComponent("bin/python3")
        return FileManager.default.isExecutableFile(atPath: python.path) ? python : nil
    }

    /// Why Valhalla is unavailable, for a test's failure message.
    public static let missing = MissingTool("Valhalla (PyPI pyvalhalla 3.9.1 in the venv .valhalla/)",
                                            package: "a Python 3.12 venv with .ci/valhalla.txt")

    /// The failure when Debian's `osmium` (which writes the town's .osm.pbf) is not on the PATH.
    static func osmiumCheck() throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/osmium")
        }
        if !found { throw MissingTool("osmium", package: "osmium-tool") }
    }

    /// The built test town.
    public struct Town: Sendable {
        /// The directory holding the OSM input, the config and the tile tree.
        public var directory: URL
        /// The tile tree `valhalla_build_tiles` wrote (`mjolnir.tile_dir`).
        public var tileDirectory: URL
        /// How long the build took (osmium, config, tiles), as the script measured it when it built.
        public var buildSeconds: Double
    }

    /// The test town's graph, built once per script version and cached in the temporary directory
    /// (`provision-valhalla-fixtures/town-<digest>`), renamed into place whole so a concurrent run
    /// never reads half a tree. `changeset` (the OSM input's, which Valhalla takes as the dataset id)
    /// makes another build of the same town.
    public static func town(changeset: Int = 4242) throws -> Town {
        let root = Oracles.repositoryRoot
        var key = try Data(contentsOf: root.appendingPathComponent(script))
        key.append((try? Data(contentsOf: root.appendingPathComponent(".ci/valhalla.txt"))) ?? Data())
        key.append(Data("changeset \(changeset)".utf8))
        let digest = SHA256.hex(key).prefix(24)
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("provision-valhalla-fixtures")
        let directory = cache.appendingPathComponent("town-\(digest)")
        if !FileManager.default.fileExists(atPath: directory.appendingPathComponent("build.json").path) {
            try osmiumCheck()
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            let partial = cache.appendingPathComponent("town-\(digest).\(UUID().uuidString).partial")
            defer { try? FileManager.default.removeItem(at: partial) }
            _ = try run(["build", partial.path, "--changeset", String(changeset)])
            if rename(partial.path, directory.path) != 0, !FileManager.default.fileExists(atPath: directory.path) {
                throw Oracles.Failure(description: "cannot rename \(partial.path) to \(directory.path)")
            }
        }
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("build.json")))
        let seconds = (summary as? [String: Any])?["seconds"] as? Double ?? -1
        return Town(directory: directory, tileDirectory: directory.appendingPathComponent("tiles"), buildSeconds: seconds)
    }

    /// Runs `valhalla_build_extract` on the town's tile tree, writing `output`; with `bbox`
    /// (`"W,S,E,N"`) only the tiles it selects.
    public static func buildExtract(town: Town, output: URL, bbox: String? = nil) throws {
        _ = try run(["extract", town.directory.path, output.path] + (bbox.map { ["--bbox", $0] } ?? []))
    }

    /// Asks `valhalla.Actor` for each route request (JSON objects; another `action` such as
    /// `locate` answers its own requests), configured on `tileDirectory`
    /// or on `tileExtract` alone (no `tile_dir`); returns each answer as a JSON object (the Actor's
    /// answer, or `{"error": text}` when it refused).
    public static func route(_ requests: [[String: Any]], tileDirectory: URL? = nil, tileExtract: URL? = nil,
                             action: String = "route") throws -> [[String: Any]] {
        var arguments = ["route", "--action", action]
        if let tileDirectory { arguments += ["--tile-dir", tileDirectory.path] }
        if let tileExtract { arguments += ["--tile-extract", tileExtract.path] }
        let input = try JSONSerialization.data(withJSONObject: requests)
        let output = try run(arguments, stdin: input)
        guard let answers = try JSONSerialization.jsonObject(with: output) as? [[String: Any]] else {
            throw Oracles.Failure(description: "\(ValhallaFixture.script) route printed no JSON list")
        }
        return answers
    }

    /// The shapely oracle of graph covers (`graph_cover_oracle.py`): for polygons (each a list of
    /// rings of [lng, lat]) on a grid of `tileSize` degrees, the tile indexes they meet with half-open
    /// cells, and those shapely's closed `intersects` takes (as `valhalla_build_extract` does).
    public static func coverOracle(tileSize: Double, cases: [[[[[Double]]]]]) throws
        -> [(halfOpen: [Int], closed: [Int], isValid: Bool)] {
        let input = try JSONSerialization.data(withJSONObject: [
            "tileSize": tileSize, "cases": cases.map { ["polygons": $0] },
        ])
        let output = try run(["Tests/Fixtures/valhalla/graph_cover_oracle.py"], stdin: input, script: nil)
        guard let answers = try JSONSerialization.jsonObject(with: output) as? [[String: [Int]]] else {
            throw Oracles.Failure(description: "graph_cover_oracle.py printed no JSON list")
        }
        return answers.map { ($0["halfOpen"] ?? [], $0["closed"] ?? [], $0["valid"] == [1]) }
    }

    /// Runs `script` (the town script unless nil: then `arguments[0]` is the script) with `arguments`
    /// in the venv, `stdin` on its standard input; returns stdout.
    public static func run(_ arguments: [String], stdin: Data = Data(), script: String? = ValhallaFixture.script) throws -> Data {
        guard let python else { throw missing }
        let process = Process()
        process.executableURL = python
        let scriptPath = script ?? arguments[0], rest = script == nil ? Array(arguments.dropFirst()) : arguments
        process.arguments = [Oracles.repositoryRoot.appendingPathComponent(scriptPath).path] + rest
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("valhalla-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("stdin"), out = scratch.appendingPathComponent("stdout"),
            err = scratch.appendingPathComponent("stderr")
        try stdin.write(to: input)
        try Data().write(to: out)
        try Data().write(to: err)
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            throw Oracles.Failure(description: "\(scriptPath) \(rest.joined(separator: " ")) exited \(process.terminationStatus):\n\(text)")
        }
        return try Data(contentsOf: out)
    }
}
