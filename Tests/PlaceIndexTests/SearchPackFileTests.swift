import Foundation
import PlaceIndex
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest

/// The search pack file: the documented SQL as other SQLites run it, reproducible bytes, and input
/// the index must not trust.
final class SearchPackFileTests: XCTestCase {
    func run(_ executable: String, _ arguments: [String], stdin: String = "") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(executable): \(String(decoding: err, as: UTF8.self))")
        return String(decoding: out, as: UTF8.self)
    }

    func sqliteShell() throws -> String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(directory)/sqlite3"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        XCTFail("the sqlite3 shell is not installed: run .ci/setup")
        throw CocoaError(.fileNoSuchFile)
    }

    /// A value as an SQL literal for the shell's `.parameter set`.
    func literal(_ value: SQLiteValue) -> String {
        switch value {
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .text(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        default: return "NULL"
        }
    }

    func testTheDocumentedSQLAnswersAlikeInSwiftPythonAndTheSQLiteShell() throws {
        let built = try build()
        let python = try XCTUnwrap(Oracles.python, Oracles.missing)
        let shell = try sqliteShell()
        let cases: [(String, LngLat?, BoundingBox)] = [
            ("hameentie", nil, .world), ("kallio", nil, .world), ("kal", nil, .world), ("r-kioski", LngLat(lng: 24.97, lat: 60.19), .world),
            ("rantatie", LngLat(lng: 24.90, lat: 60.18), BoundingBox(west: 24.89, south: 60.17, east: 24.93, north: 60.20)),
            ("sornaisten r", nil, .world), ("Töölö", nil, .world), ("puisto", LngLat(lng: 24.95, lat: 60.16), .world),
        ]
        for (query, near, box) in cases {
            let swift = try PlaceIndexDatabase.search(built.url, query: query, near: near, box: box, limit: 5).map { String($0.id) }
            XCTAssertFalse(swift.isEmpty, query)
            let withoutRTree = try PlaceIndexDatabase.search(built.url, query: query, near: near, box: box, limit: 5, rtree: false)
            XCTAssertEqual(withoutRTree.map { String($0.id) }, swift, "without the R*Tree, \(query)")
            let parameters = PlaceIndexDatabase.parameters(query: query, near: near, box: box, limit: 5)
            var json: [String: Any] = [:]
            for (name, value) in parameters {
                switch value {
                case .int(let i): json[String(name.dropFirst())] = i
                case .double(let d): json[String(name.dropFirst())] = d
                case .text(let s): json[String(name.dropFirst())] = s
                default: json[String(name.dropFirst())] = NSNull()
                }
            }
            let script = """
                import json, sqlite3, sys
                db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
                for row in db.execute(sys.argv[2], json.loads(sys.argv[3])):
                    print(row[0])
                """
            let pythonIDs = try run(python.path, ["-c", script, built.url.path, PlaceIndexDatabase.searchSQL,
                                                  String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)])
                .split(separator: "\n").map(String.init)
            XCTAssertEqual(pythonIDs, swift, "python's sqlite3, \(query)")
            var commands = ".parameter init\n"
            for name in parameters.keys.sorted() { commands += ".parameter set \(name) \(literal(parameters[name]!))\n" }
            commands += PlaceIndexDatabase.searchSQL + ";\n"
            let shellIDs = try run(shell, ["-readonly", built.url.path], stdin: commands)
                .split(separator: "\n").map { String($0.split(separator: "|")[0]) }
            XCTAssertEqual(shellIDs, swift, "the sqlite3 shell, \(query)")
        }
    }

    func testTheDocsHoldTheSQLTheAppRuns() throws {
        let docs = try String(contentsOf: Oracles.repositoryRoot.appendingPathComponent("docs/search-packs.md"), encoding: .utf8)
        XCTAssertTrue(docs.contains(PlaceIndexDatabase.searchSQL), "docs/search-packs.md quotes searchSQL verbatim")
        XCTAssertTrue(docs.contains(PlaceIndexDatabase.schemaSQL), "docs/search-packs.md quotes schemaSQL verbatim")
        XCTAssertTrue(docs.contains(PlaceIndexDatabase.searchSQLWithoutRTree), "and the query without the R*Tree")
        XCTAssertNotEqual(PlaceIndexDatabase.searchSQLWithoutRTree, PlaceIndexDatabase.searchSQL)
        XCTAssertFalse(PlaceIndexDatabase.searchSQLWithoutRTree.contains("rtree"))
    }

    func testTheFileIsByteForByteTheSameWhateverTheTileOrder() throws {
        let tiles = TestWorld.encodedTiles()
        var shuffled = tiles
        var generator = SplitMix(seed: 23)
        shuffled.shuffle(using: &generator)
        XCTAssertNotEqual(shuffled.map(\.0), tiles.map(\.0))
        let a = try build(tiles), b = try build(shuffled.reversed())
        XCTAssertEqual(a.entries, b.entries)
        XCTAssertEqual(try Data(contentsOf: a.url), try Data(contentsOf: b.url))
        let names = try FileManager.default.contentsOfDirectory(atPath: a.url.deletingLastPathComponent().path)
        XCTAssertEqual(names, ["helsinki.db"], "no temporary file left")
        let db = try SQLiteDatabase(path: a.url.path, options: .init(readOnly: true, create: false))
        let metadata = Dictionary(uniqueKeysWithValues: try db.query("SELECT name, value FROM metadata") { ($0.text(0), $0.text(1)) })
        XCTAssertEqual(metadata["schema_version"], "1")
        XCTAssertEqual(metadata["build_time"], "2026-12-04T12:00:00Z")
        XCTAssertEqual(metadata["sources"], "[\"https://tiles.example/omt.json\"]")
        XCTAssertEqual(metadata["entries"], String(a.entries.count))
        XCTAssertEqual(try db.queryFirst("PRAGMA page_size") { $0.int64(0) }, 4096)
        XCTAssertEqual(try db.queryFirst("PRAGMA integrity_check") { $0.text(0) }, "ok")
    }

    func testAFailedWriteKeepsThePreviousFile() throws {
        let built = try build()
        let before = try Data(contentsOf: built.url)
        var broken = built.entries
        broken[5].regions = ["a", "a"]   // twice in one region: the write fails part-way
        XCTAssertThrowsError(try PlaceIndexDatabase.write(broken, metadata: PlaceIndexTests.metadata, to: built.url))
        XCTAssertEqual(try Data(contentsOf: built.url), before)
        let names = try FileManager.default.contentsOfDirectory(atPath: built.url.deletingLastPathComponent().path)
        XCTAssertEqual(names, ["helsinki.db"])
    }

    func testAnAuditFindsADamagedPack() throws {
        let built = try build()
        XCTAssertEqual(PlaceIndexDatabase.problems(built.url), [])
        let original = try Data(contentsOf: built.url)
        // Overwrite the middle of the file: pages of the tables, the FTS index or the R*Tree.
        var damaged = original
        for offset in stride(from: damaged.count / 3, to: damaged.count / 3 + 8192, by: 1) { damaged[offset] = 0x5a }
        try damaged.write(to: built.url)
        XCTAssertFalse(PlaceIndexDatabase.problems(built.url).isEmpty, "damage in the middle")
        // A name changed in place, same length: SQLite's own check passes; the FTS index no longer agrees.
        try original.write(to: built.url)
        let db = try SQLiteDatabase(path: built.url.path)
        try db.run("UPDATE names SET name = 'Hxmeentie' WHERE name = 'Hämeentie'")
        try db.close()
        XCTAssertEqual(PlaceIndexDatabase.problems(built.url), ["1 names differ from the FTS index's"])
        // Places and R*Tree out of step.
        try original.write(to: built.url)
        let db2 = try SQLiteDatabase(path: built.url.path)
        try db2.run("DELETE FROM places_rtree WHERE id = 3")
        try db2.close()
        XCTAssertEqual(PlaceIndexDatabase.problems(built.url).count, 2, "counts and the R*Tree")
        try Data("not a database".utf8).write(to: built.url)
        XCTAssertFalse(PlaceIndexDatabase.problems(built.url).isEmpty)
        try FileManager.default.removeItem(at: built.url)
        XCTAssertTrue(PlaceIndexDatabase.problems(built.url).first?.hasPrefix("cannot open") ?? false)
    }

    // MARK: Schemas

    func testSchemasAreToldApartByTheirVectorLayers() throws {
        XCTAssertEqual(try PlaceSchema.detect(vectorLayerIDs: ["water", "landcover", "place", "poi", "transportation",
                                                               "transportation_name", "water_name", "park", "building"],
                                              source: "omt").name, "openmaptiles")
        XCTAssertEqual(try PlaceSchema.detect(vectorLayerIDs: ["road", "place_label", "poi_label", "natural_label", "water",
                                                               "airport_label", "building"], source: "streets").name,
                       "mapbox-streets-v8")
        XCTAssertThrowsError(try PlaceSchema.detect(vectorLayerIDs: ["place", "roads", "buildings"], source: "protomaps")) {
            XCTAssertEqual($0 as? PlaceIndexError, .unknownSchema(source: "protomaps", vectorLayers: ["buildings", "place", "roads"]))
            XCTAssertTrue("\($0)".contains("source protomaps"))
        }
        let custom = try PlaceSchema.detect(vectorLayerIDs: ["places", "roads", "pois"], source: "protomaps",
                                            mapping: ["places": LayerRule(kind: .place, classKey: "kind"),
                                                      "roads": LayerRule(kind: .street, classKey: "kind")])
        XCTAssertEqual(custom.name, "custom")
        XCTAssertThrowsError(try PlaceSchema.detect(vectorLayerIDs: ["places"], source: "protomaps",
                                                    mapping: ["labels": LayerRule(kind: .place)])) {
            XCTAssertEqual($0 as? PlaceIndexError, .emptyMapping(source: "protomaps", layers: ["labels"], vectorLayers: ["places"]))
        }
    }

    func testMapboxStreetsAndCustomSchemasReadTheirOwnLayers() throws {
        let features = [
            TestFeature(layer: "road", properties: ["name": .string("Hämeentie"), "class": .string("primary"), "type": .string("primary")],
                        geometry: .line([TestWorld.p(24.905, 60.160), TestWorld.p(24.975, 60.195)])),
            TestFeature(layer: "place_label", properties: ["name": .string("Kallio"), "name_en": .string("Kallio"),
                                                           "class": .string("settlement_subdivision"), "symbolrank": .int(12)],
                        geometry: .point(TestWorld.p(24.9497, 60.1841))),
        ]
        let tiles = TestWorld.tiles.map { ($0, VectorTileEncoder.encode($0, features: features)) }
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .mapboxStreetsV8))
        for (tile, data) in tiles { try builder.add(tile: tile, data: data) }
        let (entries, report) = try builder.finish()
        XCTAssertEqual(entries.map(\.names), [["Kallio"], ["Hämeentie"]])
        XCTAssertEqual(entries.map(\.rank), [12, 3])
        XCTAssertEqual(entries.map(\.subclass), ["", "primary"])
        XCTAssertEqual(report.missingLayers, ["airport_label", "natural_label", "poi_label", "transit_stop_label"])

        let custom = PlaceSchema(name: "custom", layers: ["road": LayerRule(kind: .street)])
        let mapped = PlaceIndexBuilder(options: PlaceIndexOptions(schema: custom, nameFields: ["name"]))
        for (tile, data) in tiles { try mapped.add(tile: tile, data: data) }
        XCTAssertEqual(try mapped.finish().entries.map(\.names), [["Hämeentie"]])
    }

    // MARK: Bad input

    func testBadInputIsSkippedAndCounted() throws {
        let bad = [
            TestFeature(layer: "poi", properties: ["name": .string("Bell\u{07}Tower\u{0}"), "class": .string("tower")],
                        geometry: .point(TestWorld.p(24.9421, 60.1687))),
            TestFeature(layer: "poi", properties: ["name": .string(String(repeating: "Spam ", count: 100)), "class": .string("shop")],
                        geometry: .point(TestWorld.p(24.9422, 60.1688))),
            // LineTo before any MoveTo.
            TestFeature(layer: "transportation_name", properties: ["name": .string("Broken Road"), "class": .string("minor")],
                        geometry: .raw(type: 2, commands: [VectorTileEncoder.command(2, 1), 4, 4])),
            // A ring of two points.
            TestFeature(layer: "park", properties: ["name": .string("Flat Park"), "class": .string("park")],
                        geometry: .raw(type: 3, commands: [VectorTileEncoder.command(1, 1), 10, 10, VectorTileEncoder.command(2, 1), 4, 0,
                                                           VectorTileEncoder.command(7, 1)])),
            // A count past the end.
            TestFeature(layer: "poi", properties: ["name": .string("Nowhere"), "class": .string("shop")],
                        geometry: .raw(type: 1, commands: [VectorTileEncoder.command(1, 3), 10, 10])),
        ]
        let tile = WebMercator.tile(containing: TestWorld.p(24.9420, 60.1686), zoom: 14)
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles))
        try builder.add(tile: tile, data: VectorTileEncoder.encode(tile, features: bad + [TestWorld.features[6]]))
        try builder.add(tile: TileID(z: 14, x: tile.x + 1, y: tile.y), data: Data([0x1a, 0xff, 0x01]))
        let (entries, report) = try builder.finish()
        XCTAssertEqual(entries.map(\.names), [["Bell Tower"], ["Stockmann"]])
        XCTAssertEqual(report.namesWithControlCharacters, 1)
        XCTAssertEqual(report.namesTooLong, 1)
        XCTAssertEqual(report.brokenGeometry, 3)
        XCTAssertEqual(report.malformedTiles, ["14/\(tile.x + 1)/\(tile.y)"])
        XCTAssertEqual(report.tiles, 2)
        XCTAssertEqual(report.missingLayers, ["aerodrome_label", "mountain_peak", "place", "water_name", "waterway"])
    }
}

/// A seeded generator, so a shuffled order is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
