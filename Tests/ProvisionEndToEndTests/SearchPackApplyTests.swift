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

    /// `export --format bundle` carries the pack, checked against the lock first, and its README
    /// gives the query; an archive export leaves it out; a damaged or missing pack is refused (65).
    func testABundleCarriesThePackAndADamagedPackIsRefused() throws {
        try ws.provision("apply", "--quiet", try writeJob(layers: mapping), environment: epoch).expect(0)
        let record = try XCTUnwrap(try readJSON(ws.lock)["searchPacks"]?.arrayValue?.first)
        let bundle = ws.root.appendingPathComponent("bundle")
        let json = try ws.provision("export", "--store", ws.store.path, "--format", "bundle", "--out", bundle.path, "--json")
        json.expect(0)
        let report = try parseJSON(json.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(report), [], json.stdout)
        XCTAssertEqual(report["schemaVersion"], 3)
        let carried = try XCTUnwrap(report["bundle"]?["searchPacks"]?.arrayValue)
        XCTAssertEqual(carried.count, 1)
        XCTAssertEqual(carried.first?["path"], "search/places.db")
        XCTAssertEqual(carried.first?["pack"], "places")
        XCTAssertEqual(carried.first?["entries"], record["entries"])
        XCTAssertEqual(carried.first?["bytes"], record["bytes"])
        XCTAssertTrue(try Data(contentsOf: bundle.appendingPathComponent("search/places.db")) == Data(contentsOf: pack))
        let readme = try String(contentsOf: bundle.appendingPathComponent("README.txt"), encoding: .utf8)
        for phrase in ["- search/places.db: search pack 'places', ", "Searching places (search/PACK.db)",
                       "    WHERE names_fts MATCH :match\n", "the section \"provision search\" of provision's README"] {
            XCTAssertTrue(readme.contains(phrase), "README.txt lacks \(phrase)")
        }
        let text = try ws.provision("export", "--store", ws.store.path, "--format", "bundle", "--out", bundle.path)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains(", 1 search pack (search/places.db, "), text.stdout)

        let archive = ws.root.appendingPathComponent("archives")
        let pmtiles = try ws.provision("export", "--store", ws.store.path, "--format", "pmtiles", "--out", archive.path + "/", "--json")
        pmtiles.expect(0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: archive.path), ["streets.pmtiles"], "no pack in archives")

        // A pack changed since it was built, or gone: refused naming it, nothing written.
        let refused = ws.root.appendingPathComponent("refused")
        try Data("not a search pack".utf8).write(to: pack)
        let damaged = try ws.provision("export", "--store", ws.store.path, "--format", "bundle", "--out", refused.path)
        damaged.expect(65, "a damaged pack")
        XCTAssertTrue(damaged.stderr.contains("search pack 'places': search/places.db in the store at ")
                      && damaged.stderr.contains("is damaged"), damaged.stderr)
        try FileManager.default.removeItem(at: pack)
        let missing = try ws.provision("export", "--store", ws.store.path, "--format", "bundle", "--out", refused.path)
        missing.expect(65, "a missing pack")
        XCTAssertTrue(missing.stderr.contains("search pack 'places': search/places.db cannot be read"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: refused.path), "nothing written")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.hasPrefix(".") }, [])
    }

    /// Every file and directory of a bundle, the copied search pack and the directories included,
    /// is flushed to disk before the bundle is renamed into place (strace): a power loss after
    /// the export leaves the whole bundle or none, never one with an empty pack.
    func testEveryFileOfABundleIsFlushedBeforeTheBundleIsRenamedIntoPlace() throws {
        try ws.provision("apply", "--quiet", try writeJob(layers: mapping), environment: epoch).expect(0)
        let bundle = ws.root.appendingPathComponent("bundle")
        for run in ["new", "replacing the previous bundle"] {
            let (result, trace) = try FlushTrace.run(ws, ["export", "--store", ws.store.path, "--format", "bundle",
                                                          "--out", bundle.path, "--quiet"])
            result.expect(0, run)
            XCTAssertTrue(try Data(contentsOf: bundle.appendingPathComponent("search/places.db")) == Data(contentsOf: pack), run)
            XCTAssertEqual(trace.unflushed(in: bundle), [], run)
        }
    }

    /// A shard's apply says it builds no pack and its lock records what the merge builds (valid
    /// against lock.schema.json); the merge builds the pack the single apply builds, byte for byte.
    func testShardsLeaveThePackToTheMerge() throws {
        let job = try writeJob(layers: mapping)
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let planned = try ws.provision("plan", job, "--shard", "0/2", "--store", "shard0", environment: epoch)
        planned.expect(0)
        XCTAssertTrue(planned.stdout.contains("note: search packs: a shard holds only its share of the tiles, so its apply builds "
                                              + "no search pack; 'provision merge' builds search/places.db once"), planned.stdout)
        let schema = try SchemaSubset(named: "lock.schema.json")
        for index in 0..<2 {
            let store = ws.root.appendingPathComponent("shard\(index)")
            let applied = try ws.provision("apply", job, "--shard", "\(index)/2", "--store", store.path, environment: epoch)
            applied.expect(0)
            XCTAssertTrue(applied.stdout.contains("Search pack places: not built by a shard, which holds only its share of the "
                                                  + "tiles; 'provision merge' builds it once."), applied.stdout)
            let lock = try readJSON(store.appendingPathComponent("provision.lock.json"))
            XCTAssertEqual(schema.problems(lock), [], "shard \(index)'s lock")
            XCTAssertNil(lock["searchPacks"])
            XCTAssertEqual(lock["shard"]?["searchPacks"]?["packs"]?.arrayValue?.first?["id"], "places")
            XCTAssertFalse(FileManager.default.fileExists(atPath: store.appendingPathComponent("search/places.db").path))
        }
        let merged = ws.root.appendingPathComponent("merged")
        let result = try ws.provision("merge", "shard1", "shard0", "--store", merged.path)
        result.expect(0)
        XCTAssertTrue(result.stdout.contains("Search pack places: search/places.db, "), result.stdout)
        XCTAssertEqual(schema.problems(try readJSON(merged.appendingPathComponent("provision.lock.json"))), [])
        for file in ["offline.db", "provision.lock.json", "search/places.db"] {
            XCTAssertTrue(try Data(contentsOf: merged.appendingPathComponent(file)) == Data(contentsOf: ws.store.appendingPathComponent(file)),
                          "\(file) equals the single apply's")
        }
    }

    /// The rows of the coverage page's search pack table, each its cells' text.
    private func packRows(_ page: String) throws -> [[String]] {
        let root = try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent(page)))
        let table = try XCTUnwrap(root.elements("table").first { $0.elements("caption").first?.allText.hasPrefix("Search packs") == true },
                                  "\(page) has a search pack table")
        return table.elements("tr").map { $0.elements("td").map(\.allText) }.filter { !$0.isEmpty }
    }

    /// The coverage pages of plan and audit count each pack's places per region and draw them as
    /// dots on the views of the zooms that show them.
    func testTheCoveragePagesShowThePacksPlaces() throws {
        let job = try writeJob(layers: mapping)
        try ws.provision("plan", job, "--html", "before.html", "--quiet", environment: epoch).expect(0)
        XCTAssertEqual(try packRows("before.html").first, ["places", "search/places.db", "to build (new); no file yet", "all", "—", "—"])
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)

        let shell = SQLiteShell(database: pack)
        let entries = try shell.int("SELECT count(*) FROM places")
        var expected = [["places", "search/places.db", "kept", "all", grouped(entries), grouped(entries)]]
        for region in ["london", "paris"] {
            let places = try shell.int("SELECT count(*) FROM place_regions WHERE region = '\(region)'")
            XCTAssertGreaterThan(places, 0, region)
            expected.append(["places", "search/places.db", "kept", region, grouped(places), ""])
        }
        try ws.provision("plan", job, "--html", "plan.html", "--quiet", environment: epoch).expect(0)
        XCTAssertEqual(try packRows("plan.html"), expected)
        try ws.provision("audit", "--store", ws.store.path, "--html", "audit.html", "--quiet").expect(0)
        XCTAssertEqual(try packRows("audit.html"), expected.map { row in row.enumerated().map { $0 == 2 ? "in the lock" : $1 } })

        // Each view draws the places its zoom shows, once (insets reuse the overview's drawing).
        let root = try MarkupElement.parse(Data(contentsOf: ws.root.appendingPathComponent("plan.html")))
        var drawn = 0
        for svg in root.elements("svg") {
            guard let zoom = svg.attributes["data-zoom"].flatMap(Int.init) else { continue }
            let dots = svg.elements("path").filter { $0.attributes["data-search-pack"] == "places" }
            let shown = try shell.int("SELECT count(*) FROM places WHERE minzoom <= \(zoom) AND maxzoom >= \(zoom)")
            XCTAssertEqual(dots.count, shown > 0 ? 1 : 0, "z\(zoom)")
            XCTAssertEqual(dots.first?.attributes["data-places"].flatMap(Int.init) ?? 0, shown, "z\(zoom)")
            drawn += shown
        }
        XCTAssertGreaterThan(drawn, 0)
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
