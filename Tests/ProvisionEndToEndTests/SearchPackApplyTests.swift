import Foundation
import ProvisionCodecs
import ProvisionFoundation
import ProvisionStore
import ProvisionTestSupport
import XCTest

/// Issue 23: a job's search pack built by `apply` from the stored demo tiles into
/// `search/<pack>.db`, recorded in the lock, kept while its inputs are unchanged and rebuilt when
/// they change or the file goes; `plan` says which.
final class SearchPackApplyTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]

    /// The demo's schema (land, water, roads, places) is neither OpenMapTiles nor Mapbox Streets:
    /// its `places` layer is mapped.
    private let mapping: JSONValue = ["places": ["kind": "place", "rank": "rank"], "roads": ["kind": "street"]]

    private var pack: URL { ws.store.appendingPathComponent("search/places.db") }

    /// London and Paris (both feeding the pack "places") from the MBTiles origin.
    private func writeJob(names: [String]? = nil, layers: JSONValue? = nil, to name: String = "job.json") throws -> String {
        var pack: [(String, JSONValue)] = [("id", "places"), ("sources", ["streets"])]
        if let names { pack.append(("names", .array(names.map { .string($0) }))) }
        if let layers { pack.append(("layers", layers)) }
        let regions = [Demo.london, Demo.paris].map { $0.region(extra: [("searchPacks", ["places"])]) }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles)) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["searchPacks"] = .array([.object(JSONObject(pack))])
        return try ws.write(.object(job), to: name).path
    }

    /// The plan's search pack entry (`plan --json`).
    private func plannedPack(_ job: String) throws -> JSONValue? {
        let result = try ws.provision("plan", "--json", job, environment: epoch)
        result.expect(0)
        return try parseJSON(result.stdout)["searchPacks"]?.arrayValue?.first
    }

    /// The ids and names of the places the documented query (`PlaceIndexDatabase.searchSQL`)
    /// finds for `query`, run by Python's sqlite3 from the oracles' venv.
    private func pythonSearch(_ query: String) throws -> [String] {
        guard let python = Oracles.python else { throw Oracles.Failure(description: Oracles.missing) }
        let parameters = PlaceIndexDatabase.parameters(query: query, near: nil, limit: 10)
        var named: [String: Any] = [:]
        for (key, value) in parameters {
            let name = String(key.dropFirst())
            switch value {
            case .int(let n): named[name] = n
            case .double(let d): named[name] = d
            case .text(let t): named[name] = t
            default: named[name] = NSNull()
            }
        }
        let arguments = try JSONSerialization.data(withJSONObject: ["sql": PlaceIndexDatabase.searchSQL, "db": pack.path,
                                                                    "params": named])
        let script = """
            import json, sqlite3, sys
            a = json.loads(sys.argv[1])
            db = sqlite3.connect("file:" + a["db"] + "?mode=ro", uri=True)
            for row in db.execute(a["sql"], a["params"]): print(row[1])
            """
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", script, String(decoding: arguments, as: UTF8.self)]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "python sqlite3 query")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testApplyBuildsASearchPackAppsCanQuery() throws {
        let job = try writeJob(layers: mapping)
        XCTAssertEqual(try plannedPack(job)?["action"], "build")
        let applied = try ws.provision("apply", job, environment: epoch)
        applied.expect(0)
        XCTAssertTrue(applied.combined.contains("Search pack places: "), applied.combined)
        XCTAssertEqual(PlaceIndexDatabase.problems(pack), [])
        XCTAssertEqual(try pythonSearch("london").first, "London")
        XCTAssertEqual(try pythonSearch("ile saint").first, "Île Saint-Louis", "diacritics folded")
        XCTAssertEqual(try PlaceIndexDatabase.search(pack, query: "Bastille").first?.name, "Bastille")
        // Each place lies in its region; New York's tiles are not in the store.
        let shell = SQLiteShell(database: pack)
        XCTAssertEqual(try shell.rows("SELECT r.region FROM places p JOIN place_regions r ON r.place_id = p.id WHERE p.name = 'London'"),
                       [["london"]])
        XCTAssertEqual(try shell.int("SELECT count(*) FROM places WHERE name = 'Brooklyn'"), 0)
        XCTAssertEqual(try shell.scalar("SELECT value FROM metadata WHERE name = 'build_time'"), "2023-11-14T22:13:20Z")
        let record = try XCTUnwrap(try readJSON(ws.lock)["searchPacks"]?.arrayValue?.first)
        XCTAssertEqual(try readJSON(ws.lock)["schemaVersion"], 7)
        XCTAssertEqual(record["file"], "search/places.db")
        XCTAssertEqual(record["digest"]?.stringValue, "sha256:" + ws.sha256(pack))
        XCTAssertEqual(record["entries"]?.intValue, try shell.int("SELECT count(*) FROM places"))
        print("search pack of London and Paris: \(record["entries"]?.intValue ?? 0) entries from "
              + "\(record["tiles"]?.intValue ?? 0) tiles, \(record["bytes"]?.intValue ?? 0) bytes")
    }

    func testAPackIsKeptUntilItsNamesChangeOrItsFileGoes() throws {
        let job = try writeJob(layers: mapping)
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let first = try Data(contentsOf: pack)
        let dayAgo = Date(timeIntervalSinceNow: -86_400)
        try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: pack.path)
        let mtime = try FileManager.default.attributesOfItem(atPath: pack.path)[.modificationDate] as? Date

        // Nothing changed: the plan keeps it, has no changes, and the apply leaves the file alone.
        XCTAssertEqual(try plannedPack(job)?["action"], "keep")
        try ws.provision("plan", "--detailed-exitcode", job, environment: epoch).expect(0, "no changes")
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: pack), first)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: pack.path)[.modificationDate] as? Date, mtime,
                       "not rewritten")

        // Other name fields: rebuilt, and counted as a change.
        let renamed = try writeJob(names: ["name"], layers: mapping, to: "renamed.json")
        let planned = try XCTUnwrap(try plannedPack(renamed))
        XCTAssertEqual(planned["action"], "build")
        XCTAssertEqual(planned["reason"], "settings changed")
        try ws.provision("plan", "--detailed-exitcode", renamed, environment: epoch).expect(2, "a rebuild is a change")
        let text = try ws.provision("plan", renamed, environment: epoch)
        XCTAssertTrue(text.stdout.contains("search pack places: build (settings changed), search/places.db from streets/streets"),
                      text.stdout)
        try ws.provision("apply", "--quiet", renamed, environment: epoch).expect(0)
        XCTAssertNotEqual(try Data(contentsOf: pack), first)
        XCTAssertEqual(try SQLiteShell(database: pack).scalar("SELECT value FROM metadata WHERE name = 'name_fields'"), "[\"name\"]")
        XCTAssertEqual(PlaceIndexDatabase.problems(pack), [])

        // The file deleted: the plan rebuilds it, the apply writes it again.
        try FileManager.default.removeItem(at: pack)
        XCTAssertEqual(try plannedPack(renamed)?["reason"], "file missing")
        try ws.provision("apply", "--quiet", renamed, environment: epoch).expect(0)
        XCTAssertEqual(PlaceIndexDatabase.problems(pack), [])
        // A file changed behind the lock's back is rebuilt too.
        try Data("not a search pack".utf8).write(to: pack)
        XCTAssertEqual(try plannedPack(renamed)?["reason"], "file changed since it was built")
    }

    func testTwoAppliesFromScratchWriteTheSameBytes() throws {
        let job = try writeJob(layers: mapping)
        var digests: [String] = []
        for store in ["a", "b"] {
            try ws.provision("apply", "--quiet", "--store", store, job, environment: epoch).expect(0, store)
            digests.append(ws.sha256(ws.root.appendingPathComponent("\(store)/search/places.db")))
        }
        XCTAssertNotEqual(digests[0], "absent")
        XCTAssertEqual(digests[0], digests[1])
    }

    func testAnUnknownSchemaWithoutAMappingFailsThePlanNamingTheSource() throws {
        let job = try writeJob()
        for command in ["plan", "apply"] {
            let result = try ws.provision(command, job, environment: epoch)
            result.expect(65, command)
            XCTAssertTrue(result.stderr.contains("source streets/streets: its vector layers (land, places, roads, water) are "
                                                 + "neither OpenMapTiles nor Mapbox Streets v8"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "a failed plan writes nothing")
    }
}
