import Foundation
import PlaceIndex
import ProvisionFoundation
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest

/// `provision search`: the store's search packs asked as an app asks them, from the built binary.
final class SearchCommandTests: WorkspaceTestCase {
    /// Two regions of the test world: the west (Töölö, a Rantatie, an R-kioski) and the east.
    static let regions = [
        PlaceRegion(id: "west", area: .bbox(BoundingBox(west: 24.89, south: 60.15, east: 24.935, north: 60.20))),
        PlaceRegion(id: "east", area: .bbox(BoundingBox(west: 24.935, south: 60.15, east: 24.99, north: 60.20))),
    ]

    /// A second pack over the same tiles: names that interleave with the first pack's in the ranking.
    static let suburbFeatures = [
        TestWorld.place("Kallionlahti", "suburb", TestWorld.p(24.9100, 60.1610), rank: 10, minZoom: 13),
        TestWorld.poi("Kallio-kioski", "shop", TestWorld.p(24.9510, 60.1850), rank: 20),
        TestWorld.poi("Hämeenkiosk", "shop", TestWorld.p(24.9450, 60.1750), rank: 20),
    ]

    /// Writes `search/<pack>.db` into the workspace's store from the test world's tiles.
    @discardableResult
    func writePack(_ pack: String, features: [TestFeature] = TestWorld.tileFeatures) throws -> URL {
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles, regions: Self.regions))
        for (tile, data) in TestWorld.encodedTiles(features) { try builder.add(tile: tile, data: data) }
        let (entries, _) = try builder.finish()
        let url = ws.store.appendingPathComponent("search/\(pack).db")
        try PlaceIndexDatabase.write(entries, metadata: PlaceIndexMetadata(
            pack: pack, sources: ["https://tiles.example/omt.json"], attribution: "© OpenStreetMap contributors",
            buildTime: "2026-12-04T12:00:00Z", tileSchema: "openmaptiles", nameFields: PlaceIndexOptions.defaultNameFields), to: url)
        return url
    }

    /// `provision search --store STORE --json ARGUMENTS…`, exit 0, the document checked against its schema.
    func search(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let result = try run(["search", "--store", ws.store.path, "--json"] + arguments, file: file, line: line)
        result.expect(0, "search \(arguments)", file: file, line: line)
        let document = try parseJSON(result.stdout, file: file, line: line)
        let schema = try SchemaSubset(named: "search.schema.json")
        XCTAssertEqual(schema.problems(document), [], file: file, line: line)
        for result in document["results"]?.arrayValue ?? [] {
            XCTAssertEqual(schema.problems(result, definition: "result"), [], result.serialized(), file: file, line: line)
        }
        return document
    }

    /// A path in the workspace.
    func url(_ name: String) -> URL { ws.root.appendingPathComponent(name) }

    /// `provision ARGUMENTS…` in the workspace.
    func run(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try ProvisionProcess.provision(arguments, in: ws.root, file: file, line: line)
    }

    func names(_ document: JSONValue) -> [String] {
        document["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    func testDiacriticsPrefixesAndTheTextTable() throws {
        try writePack("helsinki")
        let folded = try search("hameentie")
        XCTAssertEqual(names(folded).first, "Hämeentie")
        XCTAssertEqual(folded["results"]?.arrayValue?.first?["exact"], .bool(true))
        XCTAssertEqual(folded["results"]?.arrayValue?.first?["kind"], "street")
        XCTAssertEqual(folded["results"]?.arrayValue?.first?["class"], "primary")
        XCTAssertEqual(folded["results"]?.arrayValue?.first?["pack"], "helsinki")
        XCTAssertEqual(folded["results"]?.arrayValue?.first?["distanceMeters"], .null, "no --near, no distance")
        XCTAssertEqual(folded["query"], "hameentie")
        XCTAssertEqual(folded["packs"], ["helsinki"])

        let prefix = try search("kal")
        XCTAssertEqual(Set(names(prefix)), ["Kallio", "Kalliola"], "every word a prefix")
        XCTAssertEqual(try search("sornaisten r").arrayNames, ["Sörnäisten rantatie"])
        XCTAssertEqual(names(try search("töö", "--limit", "1")).count, 1)

        let text = try ws.provision("search", "--store", ws.store.path, "--near", "24.94,60.17", "hameentie")
        text.expect(0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("1 place for \"hameentie\" in 1 search pack of ") == true, text.stdout)
        XCTAssertEqual(lines.dropFirst().first?.split(separator: " ", omittingEmptySubsequences: true),
                       ["name", "kind/class", "lon,", "lat", "distance", "regions", "pack"], text.stdout)
        XCTAssertTrue(lines.last?.hasPrefix("Hämeentie  street/primary  ") == true, text.stdout)
        let cells = lines.last?.split(separator: " ").map(String.init) ?? []
        XCTAssertEqual(cells.suffix(4), ["667", "m", "east", "helsinki"], "distance, regions, pack: \(text.stdout)")

        let none = try ws.provision("search", "--store", ws.store.path, "zzzz")
        none.expect(0)
        XCTAssertTrue(none.stdout.hasPrefix("No place matches \"zzzz\" in 1 search pack of "), none.stdout)
    }

    func testNearOrdersEqualPlacesByDistanceAndRegionFilters() throws {
        try writePack("helsinki")
        // The two R-kioski kiosks are alike in everything but where they are.
        let southWest = try search("r-kioski", "--near", "24.93,60.16")
        let northEast = try search("r-kioski", "--near", "24.97,60.19")
        func positions(_ d: JSONValue) -> [Double] { d["results"]?.arrayValue?.compactMap { $0["lon"]?.doubleValue } ?? [] }
        XCTAssertEqual(names(southWest), ["R-kioski", "R-kioski"])
        XCTAssertLessThan(positions(southWest)[0], positions(southWest)[1])
        XCTAssertEqual(positions(northEast), positions(southWest).reversed())
        let distances = southWest["results"]?.arrayValue?.compactMap { $0["distanceMeters"]?.doubleValue } ?? []
        XCTAssertEqual(distances.count, 2)
        XCTAssertLessThan(distances[0], 10, "the kiosk at the point asked about")
        XCTAssertEqual(distances[1], 4_004, accuracy: 20, "about 4 km to the other")
        XCTAssertEqual(southWest["near"], ["lat": 60.16, "lon": 24.93])

        let west = try search("rantatie", "--region", "west")
        XCTAssertEqual(names(west), ["Rantatie"], "the western Rantatie only")
        XCTAssertEqual(west["results"]?.arrayValue?.first?["regions"], ["west"])
        XCTAssertEqual(west["region"], "west")
        let east = try search("rantatie", "--region", "east")
        XCTAssertEqual(names(east), ["Rantatie", "Sörnäisten rantatie"])
        XCTAssertEqual(names(try search("rantatie", "--region", "nowhere")), [])
        XCTAssertEqual(names(try search("rantatie")).count, 3)
    }

    func testEveryPackIsSearchedAndTheAnswersMergeInOneRanking() throws {
        try writePack("helsinki")
        try writePack("suburbs", features: Self.suburbFeatures)
        let merged = try search("kallio")
        XCTAssertEqual(merged["packs"], ["helsinki", "suburbs"])
        let pairs = merged["results"]?.arrayValue?.compactMap { r in r["name"]?.stringValue.map { "\($0) (\(r["pack"]?.stringValue ?? ""))" } }
        // Exact first; then one-word names by zoom (Kalliola from 12, Kallionlahti from 13); then two words.
        XCTAssertEqual(pairs, ["Kallio (helsinki)", "Kalliola (helsinki)", "Kallionlahti (suburbs)", "Kallio-kioski (suburbs)"])
        XCTAssertEqual(names(try search("kallio", "--limit", "2")), ["Kallio", "Kalliola"])
        XCTAssertEqual(names(try search("hame")).prefix(2), ["Hämeentie", "Hämeenkiosk"])
    }

    func testMissingPacksDamagedPacksAndBadQueries() throws {
        let absent = try ws.provision("search", "--store", url("nowhere").path, "kallio")
        absent.expect(66)
        XCTAssertTrue(absent.stderr.contains("no store at \(url("nowhere").path)"), absent.stderr)

        try FileManager.default.createDirectory(at: ws.store, withIntermediateDirectories: true)
        let noDirectory = try ws.provision("search", "--store", ws.store.path, "kallio", "--json")
        noDirectory.expect(66)
        XCTAssertTrue(noDirectory.stdout.contains("the store at \(ws.store.path) has no search packs: search/ is missing"), noDirectory.stdout)
        XCTAssertEqual(try SchemaSubset(named: "error.schema.json").problems(try parseJSON(noDirectory.stdout)), [])

        try FileManager.default.createDirectory(at: ws.store.appendingPathComponent("search"), withIntermediateDirectories: true)
        let empty = try ws.provision("search", "--store", ws.store.path, "kallio")
        empty.expect(66)
        XCTAssertTrue(empty.stderr.contains("search/ holds no <pack>.db file"), empty.stderr)

        let good = try writePack("helsinki")
        let original = try Data(contentsOf: good)
        let damages: [(String, Data, String)] = [
            ("not SQLite", Data("just some text, not a database".utf8), "damaged or not an SQLite database"),
            ("cut short", original.prefix(original.count / 3), "damaged or not an SQLite database"),
            ("another SQLite file", try Self.otherDatabase(url("other.db")), "not a search pack"),
        ]
        for (what, bytes, reason) in damages {
            let broken = ws.store.appendingPathComponent("search/broken.db")
            try bytes.write(to: broken)
            for query in ["kallio", "hameentie"] {
                let result = try ws.provision("search", "--store", ws.store.path, query)
                result.expect(65, what)
                XCTAssertTrue(result.stderr.contains("cannot search the pack \(broken.path): "), "\(what): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(reason), "\(what): \(result.stderr)")
                XCTAssertFalse(result.stderr.contains("offline.db"), "\(what): \(result.stderr)")
            }
        }

        for query in ["?!", "...", " - "] {
            let usage = try ws.provision("search", "--store", ws.store.path, query)
            usage.expect(64, query)
            XCTAssertTrue(usage.stderr.contains("has no letter or digit to search for"), usage.stderr)
        }
        for (option, value) in [("--limit", "0"), ("--limit", "1001"), ("--limit", "ten"), ("--near", "24.9"), ("--near", "200,60"),
                                ("--near", "24.9,91")] {
            try ws.provision("search", "--store", ws.store.path, "kallio", option, value).expect(64, "\(option) \(value)")
        }
        try ws.provision("search", "--store", ws.store.path, "kallio", "--format", "markdown").expect(64)
    }

    /// The SQL docs/search-packs.md gives apps, run as written by Python's sqlite3 and the sqlite3
    /// shell, answers what `provision search` answers, in the same order.
    func testTheDocumentedSQLAnswersAsProvisionSearchDoes() throws {
        let pack = try writePack("helsinki")
        let python = try XCTUnwrap(Oracles.python, Oracles.missing)
        let sql = try Self.documentedSQL()
        XCTAssertTrue(sql.contains("names_fts MATCH :match") && sql.contains("places_rtree"), sql)
        let readme = try String(contentsOf: Demo.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("```sql\n" + sql + "\n```"), "README.md quotes the query of docs/search-packs.md verbatim")
        // (query, :match, :phrase, :tokens, near, region)
        let cases: [(String, String, String, Int, LngLat?, String?)] = [
            ("hameentie", "hameentie*", "\"hameentie\"", 1, nil, nil),
            ("Kal", "kal*", "\"kal\"", 1, nil, nil),
            ("r-kioski", "r* kioski*", "\"r kioski\"", 2, LngLat(lng: 24.97, lat: 60.19), nil),
            ("rantatie", "rantatie*", "\"rantatie\"", 1, LngLat(lng: 24.90, lat: 60.18), nil),
            ("rantatie", "rantatie*", "\"rantatie\"", 1, nil, "east"),
            ("puisto", "puisto*", "\"puisto\"", 1, LngLat(lng: 24.95, lat: 60.16), nil),
            ("Töölö", "töölö*", "\"töölö\"", 1, nil, "west"),
        ]
        for (query, match, phrase, tokens, near, region) in cases {
            var arguments = [query]
            if let near { arguments += ["--near", "\(near.lng),\(near.lat)"] }
            if let region { arguments += ["--region", region] }
            let document = try run(["search", "--store", ws.store.path, "--json"] + arguments)
            document.expect(0, query)
            let provisionIDs = try parseJSON(document.stdout)["results"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
            XCTAssertFalse(provisionIDs.isEmpty, query)

            let center = near ?? LngLat(lng: 0, lat: 0)
            let parameters: [(String, Any)] = [
                ("match", match), ("phrase", phrase), ("tokens", tokens), ("lon", center.lng), ("lat", center.lat),
                ("lon_scale", cos(center.lat * .pi / 180)), ("west", -180.0), ("south", -90.0), ("east", 180.0), ("north", 90.0),
                ("region", region ?? NSNull()), ("limit", 10),
            ]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: Dictionary(uniqueKeysWithValues: parameters)),
                              as: UTF8.self)
            let script = """
                import json, sqlite3, sys
                db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
                for row in db.execute(sys.argv[2], json.loads(sys.argv[3])):
                    print(row[0])
                """
            let oracle = try ProvisionProcess.run(python, ["-c", script, pack.path, sql, json], in: ws.root,
                                                  environment: ProcessInfo.processInfo.environment, timeout: 30)
            XCTAssertEqual(oracle.status, 0, oracle.stderr)
            let pythonIDs = oracle.stdout.split(separator: "\n").compactMap { Int($0) }
            XCTAssertEqual(pythonIDs, provisionIDs, "python's sqlite3, \(arguments)")

            var commands = ".parameter init\n"
            for (name, value) in parameters {
                let literal: String
                switch value {
                case let text as String: literal = "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
                case is NSNull: literal = "NULL"
                default: literal = "\(value)"
                }
                commands += ".parameter set :\(name) \(literal)\n"
            }
            let script2 = url("query-\(UUID().uuidString).sql")
            try Data((commands + sql + ";\n").utf8).write(to: script2)
            let shell = try ProvisionProcess.run(try SQLiteShell.executable(), ["-readonly", "-batch", pack.path],
                                                 in: ws.root, environment: ProcessInfo.processInfo.environment, timeout: 30,
                                                 stdin: script2)
            XCTAssertEqual(shell.status, 0, shell.stderr)
            let shellIDs = shell.stdout.split(separator: "\n").compactMap { Int($0.split(separator: "|")[0]) }
            XCTAssertEqual(shellIDs, provisionIDs, "the sqlite3 shell, \(arguments)")
        }
    }

    // MARK: Helpers

    /// The first SQL block of docs/search-packs.md's "The query an app runs".
    static func documentedSQL() throws -> String {
        let docs = try String(contentsOf: Demo.repositoryRoot.appendingPathComponent("docs/search-packs.md"), encoding: .utf8)
        let section = try XCTUnwrap(docs.range(of: "## The query an app runs"))
        let open = try XCTUnwrap(docs.range(of: "```sql\n", range: section.upperBound..<docs.endIndex))
        let close = try XCTUnwrap(docs.range(of: "\n```", range: open.upperBound..<docs.endIndex))
        return String(docs[open.upperBound..<close.lowerBound])
    }

    /// An SQLite file with a `metadata` table that is not a search pack's.
    static func otherDatabase(_ url: URL) throws -> Data {
        let db = try SQLiteDatabase(path: url.path)
        try db.exec("CREATE TABLE metadata (name TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO metadata VALUES ('format', 'pbf')")
        try db.close()
        return try Data(contentsOf: url)
    }
}

private extension JSONValue {
    /// The names of a search document's results.
    var arrayNames: [String] { self["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [] }
}
