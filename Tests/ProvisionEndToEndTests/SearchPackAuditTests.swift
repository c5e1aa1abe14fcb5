import Foundation
import ProvisionFoundation
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest

/// Issue 23, points 3 and 6: `audit` checks the search packs the lock records (and names the files
/// it does not), `audit --verify --manifest` rebuilds them from the stored tiles and compares,
/// `plan --repair` and `apply --repair` rebuild a damaged pack to the bytes of a fresh build, and
/// bad input (missing layers, control characters, absurd names, broken geometry) is named and counted.
final class SearchPackAuditTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
    /// The demo's `places` and `roads` layers mapped (its schema is neither OpenMapTiles nor Mapbox's).
    private let mapping: JSONValue = ["places": ["kind": "place", "rank": "rank"], "roads": ["kind": "street"]]

    private var pack: URL { ws.store.appendingPathComponent("search/places.db") }

    /// London and Paris feeding the pack "places" from the demo MBTiles.
    private func writeDemoJob(names: [String]? = nil, to name: String = "job.json") throws -> String {
        var pack: [(String, JSONValue)] = [("id", "places"), ("sources", ["streets"]), ("layers", mapping)]
        if let names { pack.append(("names", .array(names.map { .string($0) }))) }
        let regions = [Demo.london, Demo.paris].map { $0.region(extra: [("searchPacks", ["places"])]) }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles)) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["searchPacks"] = .array([.object(JSONObject(pack))])
        return try ws.write(.object(job), to: name).path
    }

    /// `audit --json ARGUMENTS… --store STORE`: the exit status and the document, checked against its schema.
    private func audit(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws -> (Int32, JSONValue) {
        let result = try ProvisionProcess.provision(["audit", "--json", "--store", ws.store.path] + arguments, in: ws.root,
                                                    environment: epoch, file: file, line: line)
        let document = try parseJSON(result.stdout, file: file, line: line)
        XCTAssertEqual(try SchemaSubset(named: "audit.schema.json").problems(document), [], file: file, line: line)
        return (result.status, document)
    }

    /// The first search pack of an audit, plan or report document.
    private func firstPack(_ document: JSONValue) -> JSONValue? { document["searchPacks"]?.arrayValue?.first }

    private func problems(_ document: JSONValue) -> [String] {
        document["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    func testAuditChecksThePacksTheLockRecords() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let (status, document) = try audit()
        XCTAssertEqual(status, 0, problems(document).joined(separator: "\n"))
        let entry = try XCTUnwrap(document["searchPacks"]?.arrayValue?.first)
        XCTAssertEqual(entry["id"], "places")
        XCTAssertEqual(entry["whole"], true)
        XCTAssertEqual(entry["fileChecked"], true)
        XCTAssertEqual(entry["tilesChecked"], false)
        XCTAssertTrue(document["checked"]?.arrayValue?.contains("searchPacks") ?? false)
        XCTAssertEqual(document["notChecked"]?.arrayValue?.first { $0["check"] == "searchPackTiles" }?["reason"],
                       "audit --verify --manifest JOB rebuilds them from the stored tiles")

        // With the job, every pack is rebuilt from the stored tiles outside the store and compared.
        let (verified, rebuilt) = try audit("--verify", "--manifest", job)
        XCTAssertEqual(verified, 0, problems(rebuilt).joined(separator: "\n"))
        XCTAssertEqual(firstPack(rebuilt)?["tilesChecked"], true)
        XCTAssertTrue(rebuilt["checked"]?.arrayValue?.contains("searchPackTiles") ?? false)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: pack.deletingLastPathComponent().path), ["places.db"],
                       "the rebuild is written outside the store")
        let text = try ws.provision("audit", "--store", ws.store.path, "--verify", "--manifest", job, environment: epoch)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("✓ places: search/places.db, "), text.stdout)
        XCTAssertTrue(text.stdout.contains("equal to a rebuild from its tiles"), text.stdout)

        // A store without search packs says nothing of them.
        let plain = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "plain.json").path
        try ws.provision("apply", "--quiet", "--store", "plain", plain, environment: epoch).expect(0)
        let other = try ws.provision("audit", "--json", "--store", ws.root.appendingPathComponent("plain").path)
        other.expect(0)
        let otherDocument = try parseJSON(other.stdout)
        XCTAssertEqual(otherDocument["searchPacks"], .array([]))
        XCTAssertFalse(otherDocument["checked"]?.arrayValue?.contains("searchPacks") ?? true)
    }

    func testADamagedPackIsNamedAndRepairRebuildsItToTheFreshBytes() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let fresh = try Data(contentsOf: pack)
        // A valid pack of other tiles: the same job with other name fields, in another store.
        let renamed = try writeDemoJob(names: ["name"], to: "renamed.json")
        try ws.provision("apply", "--quiet", "--store", "other", renamed, environment: epoch).expect(0)
        let otherPack = try Data(contentsOf: ws.root.appendingPathComponent("other/search/places.db"))
        XCTAssertNotEqual(otherPack, fresh)

        let damages: [(String, () throws -> Void, String)] = [
            ("truncated", { try fresh.prefix(fresh.count / 2).write(to: self.pack) }, "SHA-256"),
            ("bytes overwritten", {
                var bytes = fresh
                bytes.replaceSubrange(4096..<4196, with: Data(repeating: 0xA5, count: 100))
                try bytes.write(to: self.pack)
            }, "SHA-256"),
            ("another valid pack", { try otherPack.write(to: self.pack) }, "it is not the file the apply wrote"),
            ("an SQLite file that is not a search pack", {
                try FileManager.default.removeItem(at: self.pack)
                try SQLiteShell(database: self.pack).rows("CREATE TABLE metadata (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
                                                          writing: true)
            }, "not a search pack"),
            ("deleted", { try FileManager.default.removeItem(at: self.pack) }, "the file is missing"),
        ]
        for (what, damage, expected) in damages {
            try damage()
            let (status, document) = try audit()
            XCTAssertEqual(status, 1, what)
            XCTAssertEqual(document["ok"], false, what)
            XCTAssertEqual(document["whole"], false, what)
            XCTAssertEqual(firstPack(document)?["whole"], false, what)
            let named = problems(document).filter { $0.hasPrefix("search pack places (search/places.db): ") }
            XCTAssertTrue(named.contains { $0.contains(expected) }, "\(what): \(problems(document))")
            let text = try ws.provision("audit", "--store", ws.store.path)
            text.expect(1, what)
            XCTAssertTrue(text.stdout.contains("✗ places: search/places.db"), text.stdout)

            // The tiles did not change, yet the plan rebuilds the pack, and the repair writes the fresh bytes.
            let planned = try ws.provision("plan", "--repair", "--json", job, environment: epoch)
            planned.expect(0, what)
            XCTAssertEqual(firstPack(try parseJSON(planned.stdout))?["action"], "build", what)
            try ws.provision("apply", "--repair", "--quiet", job, environment: epoch).expect(0, what)
            XCTAssertEqual(try Data(contentsOf: pack), fresh, "\(what): the repaired pack is a fresh build's bytes")
            let (after, repaired) = try audit("--verify", "--manifest", job)
            XCTAssertEqual(after, 0, "\(what): \(problems(repaired))")
            XCTAssertEqual(firstPack(repaired)?["whole"], true, what)
        }

        // A plain apply rebuilds a damaged pack too: it never keeps a file the lock did not record.
        try Data("not a search pack".utf8).write(to: pack)
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: pack), fresh)
    }

    func testRepairRebuildsADamagedPackEvenWhenTheLockRecordsItsDigest() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let fresh = try Data(contentsOf: pack)
        // A name changed behind the FTS index's back, and the lock made to record the damaged file.
        try SQLiteShell(database: pack).rows("UPDATE names SET name = 'Nowhere' WHERE id = 1", writing: true)
        guard case .object(var lock) = try readJSON(ws.lock), case .array(var packs)? = lock["searchPacks"],
              case .object(var record)? = packs.first else { return XCTFail("no search pack in the lock") }
        record["digest"] = .string("sha256:" + ws.sha256(pack))
        record["bytes"] = .int(try Data(contentsOf: pack).count)
        packs[0] = .object(record)
        lock["searchPacks"] = .array(packs)
        try JSONValue.object(lock).data(.prettySorted).write(to: ws.lock)

        let (status, document) = try audit()
        XCTAssertEqual(status, 1)
        XCTAssertTrue(problems(document).contains("search pack places (search/places.db): 1 names differ from the FTS index's"),
                      "\(problems(document))")
        XCTAssertEqual(firstPack(try parseJSON(try ws.provision("plan", "--json", job, environment: epoch).stdout))?["action"],
                       "keep", "without --repair the digest vouches for the file")
        let planned = try parseJSON(try ws.provision("plan", "--repair", "--json", job, environment: epoch).stdout)
        XCTAssertEqual(firstPack(planned)?["action"], "build")
        XCTAssertEqual(firstPack(planned)?["reason"]?.stringValue?.hasPrefix("file damaged: "), true, "\(planned)")
        try ws.provision("apply", "--repair", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: pack), fresh)
        XCTAssertEqual(try audit().0, 0)
    }

    func testAPackFileTheLockDoesNotKnowIsNamed() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        try FileManager.default.copyItem(at: pack, to: ws.store.appendingPathComponent("search/stray.db"))
        let (status, document) = try audit()
        XCTAssertEqual(status, 1)
        XCTAssertEqual(document["unknownSearchPackFiles"], ["search/stray.db"])
        XCTAssertTrue(problems(document).contains { $0.hasPrefix("search/stray.db is in the store's search/ but the lock records no pack of it") },
                      "\(problems(document))")
        XCTAssertEqual(firstPack(document)?["whole"], true, "the recorded pack is still whole")
    }

    func testVerifyNamesAPackWhoseTilesChangedSinceItWasBuilt() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        // One stored tile of London at z14 changed behind the lock's back: the pack no longer comes from these tiles.
        // Two z14 tiles of different content swap bytes: the store's totals stay the lock's.
        try ws.sqlite.rows("""
            CREATE TEMP TABLE a AS SELECT id, data FROM tiles WHERE z = 14 ORDER BY id LIMIT 1;
            CREATE TEMP TABLE s AS SELECT id, data FROM a UNION ALL
              SELECT * FROM (SELECT id, data FROM tiles WHERE z = 14 AND data != (SELECT data FROM a) ORDER BY id LIMIT 1);
            UPDATE tiles SET data = (SELECT data FROM s WHERE s.id != tiles.id) WHERE id IN (SELECT id FROM s);
            """, writing: true)
        let (plain, unverified) = try audit()
        XCTAssertEqual(plain, 0, "the file itself is the one the lock records: \(problems(unverified))")
        let (status, document) = try audit("--verify", "--manifest", job)
        XCTAssertEqual(status, 1)
        XCTAssertEqual(firstPack(document)?["tilesChecked"], true)
        XCTAssertTrue(problems(document).contains("search pack places (search/places.db): the stored tiles it is built from "
                                                  + "changed since it was built; 'apply' builds it again"), "\(problems(document))")
    }

    func testAFailedBuildLeavesThePreviousFile() throws {
        let job = try writeDemoJob()
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        let before = try Data(contentsOf: pack)
        // Stored z14 tiles whose compressed bytes are damaged (their sizes, so the store's totals, unchanged):
        // the next build stops at the first.
        try ws.sqlite.rows("UPDATE tiles SET data = CAST(substr(data, 1, 10) || randomblob(20) || substr(data, 31) AS BLOB) "
                           + "WHERE z = 14", writing: true)
        let renamed = try writeDemoJob(names: ["name"], to: "renamed.json")
        let failed = try ws.provision("apply", "--quiet", renamed, environment: epoch)
        failed.expect(73, "a pack that cannot be built fails the apply")
        XCTAssertTrue(failed.stderr.contains("cannot build search pack 'places'"), failed.stderr)
        XCTAssertEqual(try Data(contentsOf: pack), before, "the previous file is left whole")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: pack.deletingLastPathComponent().path), ["places.db"],
                       "no temporary file is left")
        XCTAssertEqual(try readJSON(ws.lock)["searchPacks"], nil, "the lock records no pack it could not build")
    }

    // MARK: Bad input

    /// The test world's z14 tile holding (24.95, 60.17), and a position `dx`, `dy` (in tile widths) from its centre.
    private let badTile = WebMercator.tile(containing: LngLat(lng: 24.95, lat: 60.17), zoom: 14)
    private func inBadTile(_ dx: Double, _ dy: Double) -> LngLat {
        LngLat(lng: WebMercator.lng(tileX: Double(badTile.x) + 0.5 + dx, zoom: 14),
               lat: WebMercator.lat(tileY: Double(badTile.y) + 0.5 + dy, zoom: 14))
    }

    /// Serves the test world's tiles (without its peak and airport, plus bad features in one tile)
    /// and a TileJSON whose layers lack `mountain_peak` and `aerodrome_label`; returns the TileJSON's URL.
    private func serveBadWorld() throws -> String {
        let directory = ws.root.appendingPathComponent("world")
        let good = TestWorld.tileFeatures.filter { !["mountain_peak", "aerodrome_label"].contains($0.layer) }
        let bad = [
            TestWorld.poi("Kauppa\u{7}halli\u{1F}", "shop", inBadTile(0, 0), rank: 5),
            TestWorld.poi(String(repeating: "Pitkä nimi ", count: 30), "shop", inBadTile(0.2, 0), rank: 5),
            // A LineTo before any MoveTo.
            TestFeature(layer: "poi", properties: ["name": .string("Rikki"), "class": .string("shop")],
                        geometry: .raw(type: 1, commands: [VectorTileEncoder.command(2, 1), 10, 10]), minZoom: 14),
        ]
        for tile in TestWorld.tiles {
            let url = directory.appendingPathComponent("\(tile.z)/\(tile.x)/\(tile.y).pbf")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try VectorTileEncoder.encode(tile, features: good + (tile == badTile ? bad : [])).write(to: url)
        }
        let layers = ["place", "poi", "transportation_name", "water_name", "waterway", "park"]
        let tileJSON: JSONValue = [
            "tilejson": "3.0.0", "tiles": [.string(ws.server.baseURL + "/world/{z}/{x}/{y}.pbf")], "minzoom": 12, "maxzoom": 14,
            "vector_layers": .array(layers.map { ["id": .string($0)] }),
        ]
        try tileJSON.data(.prettySorted).write(to: directory.appendingPathComponent("tiles.json"))
        ws.server.serveDirectory(directory, at: "/world/")
        return ws.server.baseURL + "/world/tiles.json"
    }

    func testBadInputIsNamedAndCounted() throws {
        let tileJSON = try serveBadWorld()
        let area = TestWorld.area
        let job: JSONValue = [
            "version": 1, "name": "bad-input", "store": "store",
            "regions": [[
                "id": "helsinki", "name": "Helsinki", "bbox": [.double(area.west), .double(area.south), .double(area.east), .double(area.north)],
                "zoom": [12, 14], "tilesets": [.string(tileJSON)], "searchPacks": ["places"],
            ]],
            "searchPacks": [["id": "places", "sources": [.string(tileJSON)]]],
        ]
        let path = try ws.write(job, to: "bad.json").path

        // The plan names the source and the layers its TileJSON lacks.
        let planned = try ws.provision("plan", "--json", path, environment: epoch)
        planned.expect(0)
        let notes = try parseJSON(planned.stdout)["notes"]?.arrayValue ?? []
        let note = try XCTUnwrap(notes.first { $0["subject"] == "search pack 'places'" }, "\(notes)")
        XCTAssertEqual(note["message"]?.stringValue, "source \(tileJSON) has no layers aerodrome_label and mountain_peak of its "
                       + "openmaptiles schema (its vector layers: park, place, poi, transportation_name, water_name, waterway), "
                       + "so the index holds none of those layers' features")

        // The apply skips or cleans what is bad, counts it in the report and says so.
        let report = ws.root.appendingPathComponent("report.json")
        let applied = try ws.provision("apply", "--report", report.path, path, environment: epoch)
        applied.expect(0)
        let document = try readJSON(report)
        XCTAssertEqual(document["schemaVersion"], 4)
        XCTAssertEqual(try SchemaSubset(named: "report.schema.json").problems(document), [])
        let entry = try XCTUnwrap(document["searchPacks"]?.arrayValue?.first)
        XCTAssertEqual(entry["built"], true)
        let input = try XCTUnwrap(entry["input"])
        XCTAssertEqual(input["brokenGeometry"], 1)
        XCTAssertEqual(input["namesWithControlCharacters"], 1)
        XCTAssertEqual(input["namesTooLong"], 1)
        XCTAssertEqual(input["malformedTiles"], 0)
        // Tiles with content: the test world's empty tiles (a corner without features) are stored but not read.
        XCTAssertGreaterThan(input["tilesRead"]?.intValue ?? 0, 30)
        XCTAssertLessThanOrEqual(input["tilesRead"]?.intValue ?? 0, entry["tiles"]?.intValue ?? 0)
        let missing = try XCTUnwrap(input["missingLayers"]?.arrayValue)
        XCTAssertEqual(missing.map { $0["source"] }, [.string(tileJSON)])
        XCTAssertEqual(missing.map { $0["layers"] }, [["aerodrome_label", "mountain_peak"]])
        XCTAssertTrue(applied.stdout.contains("Search pack places: skipped 1 feature with broken geometry; skipped 1 name longer "
                                              + "than the index takes; cleaned 1 name of control characters; no tile of "
                                              + "\(tileJSON) holds layers aerodrome_label and mountain_peak."), applied.stdout)

        // What was cleaned is indexed cleaned; what was skipped is not there.
        let shell = SQLiteShell(database: pack)
        XCTAssertEqual(try shell.rows("SELECT name FROM names WHERE name LIKE 'Kauppa%'"), [["Kauppa halli"]])
        XCTAssertEqual(try shell.int("SELECT count(*) FROM names WHERE name LIKE 'Pitkä%' OR name = 'Rikki'"), 0)
        XCTAssertEqual(PlaceIndexDatabase.problems(pack), [])

        // A second apply keeps the pack: its report says so, with nothing counted.
        try ws.provision("apply", "--report", report.path, path, environment: epoch).expect(0)
        XCTAssertEqual(firstPack(try readJSON(report))?["built"], false)
        XCTAssertEqual(firstPack(try readJSON(report))?["input"], .null)
    }
}
