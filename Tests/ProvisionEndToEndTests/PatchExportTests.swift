import Foundation
import ProvisionCodecs
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// `provision export --format patch`: proven with the merge itself. A device copy of the old
/// store merged with the patch holds what it holds merged with the whole new store, by MapLibre's
/// rules run twice: an implementation of `merge_sideloaded.sql` by Python's sqlite3
/// (`Tests/Fixtures/sideload/merge_sideloaded.py`) and provision's own (`provision merge`).
final class PatchExportTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    private static let v1Time = ["SOURCE_DATE_EPOCH": "1700000000"]
    private static let v2Time = ["SOURCE_DATE_EPOCH": "1700086400"]
    private static let oracle = "Tests/Fixtures/sideload/merge_sideloaded.py"
    /// Upstream bytes the jobs read: a copy of the demo documents and its tile tree.
    private var upstream: URL { ws.root.appendingPathComponent("upstream") }
    private let cities = [Demo.newYork, Demo.london, Demo.paris]
    /// Job files written so far: each gets a file of its own.
    private var jobsWritten = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        try ws.copyUpstream()
    }

    private func url(_ name: String) -> URL { ws.root.appendingPathComponent(name) }

    /// Jobs/cities.json (or another demo job, `base`) with its origins mapped to the upstream copy;
    /// `name` and `zoom` changed when given, then `edit` applied.
    private func citiesJob(name: String? = nil, londonZoom: [Int]? = nil, base: String = "cities",
                           edit: (inout JSONObject) -> Void = { _ in }) throws -> String {
        guard case .object(var job) = try readJSON(Demo.repositoryRoot.appendingPathComponent("Jobs/\(base).json")) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        job["store"] = "store"
        job["origins"] = .object(JSONObject([(Demo.canonicalTiles, .string(upstream.appendingPathComponent("tiles").path)),
                                             (Demo.canonicalBase, .string(upstream.path))]))
        if let name { job["name"] = .string(name) }
        if let londonZoom, case .array(var regions) = job["regions"] ?? .null {
            for i in regions.indices where regions[i]["id"] == "london" {
                if case .object(var region) = regions[i] {
                    region["zoom"] = .array(londonZoom.map { .int($0) })
                    regions[i] = .object(region)
                }
            }
            job["regions"] = .array(regions)
        }
        edit(&job)
        jobsWritten += 1
        return try ws.write(.object(job), to: "\(name ?? base)-\(jobsWritten).json").path
    }

    private func apply(_ job: String, store: String, time: [String: String]) throws {
        try ws.provision("apply", "--quiet", "--store", url(store).path, job, environment: time).expect(0)
    }

    /// Replaces the upstream bytes of `tile` with those of another tile.
    private func change(_ tile: TileAddress, to other: TileAddress) throws {
        let tiles = upstream.appendingPathComponent("tiles")
        let bytes = try Data(contentsOf: tiles.appendingPathComponent("\(other.z)/\(other.x)/\(other.y).pbf"))
        try bytes.write(to: tiles.appendingPathComponent("\(tile.z)/\(tile.x)/\(tile.y).pbf"))
    }

    private func changeStyle() throws {
        let styleURL = upstream.appendingPathComponent("styles/streets.json")
        let style = try String(contentsOf: styleURL, encoding: .utf8)
        try style.replacingOccurrences(of: "\"Demo Streets\"", with: "\"Demo Streets v2\"").write(to: styleURL, atomically: true, encoding: .utf8)
    }

    @discardableResult
    private func exportPatch(store: String = "v2", since: String = "v1", out: String = "patch.db", status: Int32 = 0,
                             file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let result = try ws.provision("export", "--format", "patch", "--store", url(store).path, "--since", url(since).path,
                                      "--out", url(out).path, "--json", file: file, line: line)
        result.expect(status, file: file, line: line)
        return result
    }

    /// Every tile, resource and region link of a database, by key and bytes, as the oracle dumps it.
    private func dump(_ database: URL) throws -> JSONValue {
        try JSONValue.parse(Oracles.run(Self.oracle, ["dump", database.path]))
    }

    /// Merges `side` into a copy of the store `old` with the Python oracle and with `provision
    /// merge`; returns the rows both hold, which must be equal, and what the oracle's merge counted
    /// (regions added, tiles and resources written).
    private func merged(_ side: URL, into old: String, as name: String,
                        file: StaticString = #filePath, line: UInt = #line) throws -> (rows: JSONValue, counts: JSONValue) {
        let fm = FileManager.default
        let device = url("\(name).db")
        try fm.copyItem(at: url(old).appendingPathComponent("offline.db"), to: device)
        let counts = try JSONValue.parse(Oracles.run(Self.oracle, ["merge", device.path, side.path]))
        let ours = url("\(name)-store")
        try fm.copyItem(at: url(old), to: ours)
        try ws.provision("merge", side.path, "--store", ours.path, "--quiet", file: file, line: line).expect(0, file: file, line: line)
        let oracle = try dump(device)
        XCTAssertEqual(oracle, try dump(ours.appendingPathComponent("offline.db")),
                       "MapLibre's merge rules and provision merge agree", file: file, line: line)
        return (oracle, counts)
    }

    /// Asserts OLD + PATCH and OLD + NEW hold the same rows and links under both merges.
    private func assertPatchMergesLikeTheStore(file: StaticString = #filePath, line: UInt = #line) throws {
        let viaPatch = try merged(url("patch.db"), into: "v1", as: "device-patch", file: file, line: line).rows
        let viaStore = try merged(url("v2/offline.db"), into: "v1", as: "device-store", file: file, line: line).rows
        XCTAssertEqual(viaPatch, viaStore, "the patch brings what the whole store brings", file: file, line: line)
        XCTAssertFalse(viaPatch["tiles"]?.arrayValue?.isEmpty ?? true, file: file, line: line)
    }

    private func patchReport(_ result: ProcessResult) throws -> JSONValue {
        let document = try parseJSON(result.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(document), [])
        return try XCTUnwrap(document["patch"])
    }

    func testTheDemoJobWithOneTileAndTheStyleChangedPatchesExactlyThoseRows() throws {
        let job = try citiesJob()
        try apply(job, store: "v1", time: Self.v1Time)
        let tile = Demo.london.tiles.filter { $0.z == 14 }.sorted()[0]
        try change(tile, to: Demo.paris.tiles.filter { $0.z == 14 }.sorted()[0])
        try changeStyle()
        try apply(job, store: "v2", time: Self.v2Time)

        let report = try patchReport(try exportPatch())
        XCTAssertEqual(report["tiles"], 1)
        XCTAssertEqual(report["resources"], 1)
        XCTAssertEqual(report["regions"], 3)
        XCTAssertEqual(report["newRegions"], [])
        XCTAssertEqual(report["dropped"], [])
        let bytes = try XCTUnwrap(report["bytes"]?.intValue), full = try XCTUnwrap(report["fullBytes"]?.intValue)
        XCTAssertEqual(bytes, try Data(contentsOf: url("patch.db")).count)
        XCTAssertEqual(full, try Data(contentsOf: url("v2/offline.db")).count)
        print("patch size, demo job, one tile and the style changed: \(bytes) bytes against \(full)")

        let patch = SQLiteShell(database: url("patch.db"))
        XCTAssertEqual(try patch.int("PRAGMA user_version"), 6)
        XCTAssertEqual(try patch.rows("SELECT z, x, y FROM tiles"), [["\(tile.z)", "\(tile.x)", "\(tile.y)"]])
        XCTAssertEqual(try patch.scalar("SELECT url FROM resources"), Demo.styleURL)
        XCTAssertEqual(try patch.int("SELECT count(*) FROM region_tiles"), 1, "links only for the rows the patch holds")
        XCTAssertEqual(try patch.int("SELECT count(*) FROM region_resources"), 3, "the style, linked to every region")
        let v1 = SQLiteShell(database: url("v1/offline.db"))
        XCTAssertEqual(try patch.rows("SELECT definition, hex(description) FROM regions ORDER BY definition"),
                       try v1.rows("SELECT definition, hex(description) FROM regions ORDER BY definition"),
                       "unchanged regions carry the old definition and description, so devices merge into them")
        XCTAssertGreaterThan(try patch.int("SELECT modified FROM tiles"), try v1.int(
            "SELECT modified FROM tiles WHERE z = \(tile.z) AND x = \(tile.x) AND y = \(tile.y)"))

        try assertAttributionBesideThePatch(report)
        try assertPatchMergesLikeTheStore()
        let again = try merged(url("patch.db"), into: "v1", as: "device-again")
        XCTAssertEqual(again.rows.serialized(), try dump(url("v2/offline.db")).serialized(),
                       "nothing dropped: the device holds the new store's rows and links")
        XCTAssertEqual(again.counts, ["regions": 0, "tiles": 1, "resources": 1], "the regions merge into the device's; one tile and the style replaced")

        // Byte-reproducible: the same stores give the same file.
        try exportPatch(out: "again.db")
        XCTAssertEqual(try Data(contentsOf: url("patch.db")), try Data(contentsOf: url("again.db")))
        for name in ["ATTRIBUTION.md", "attribution.json"] {
            XCTAssertEqual(try Data(contentsOf: url("patch.files/\(name)")), try Data(contentsOf: url("again.files/\(name)")), name)
        }
        let text = try ws.provision("export", "--format", "patch", "--store", url("v2").path, "--since", url("v1").path,
                                    "--out", url("text.db").path)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("patch since \(url("v1").path), 1 tile and 1 resource in 3 regions"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  \(url("text.files").path): attribution\n"), text.stdout)
    }

    /// Asserts the directory beside `patch.db` holds README.txt and the current store's attribution, and no pack.
    private func assertAttributionBesideThePatch(_ report: JSONValue, file: StaticString = #filePath, line: UInt = #line) throws {
        let files = url("patch.files")
        XCTAssertEqual(report["directory"]?.stringValue, files.path, file: file, line: line)
        XCTAssertEqual(report["packs"], [], file: file, line: line)
        XCTAssertEqual(report["droppedPacks"], [], file: file, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted(),
                       ["ATTRIBUTION.md", "README.txt", "attribution.json"], file: file, line: line)
        let attribution = try readJSON(files.appendingPathComponent("attribution.json"))
        XCTAssertEqual(try SchemaSubset(named: "attribution.schema.json").problems(attribution), [], file: file, line: line)
        let lock = try readJSON(url("v2/provision.lock.json"))
        XCTAssertEqual(attribution["attribution"]?.serialized(.canonical), lock["attribution"]?.serialized(.canonical),
                       "the patch credits what the store's lock does", file: file, line: line)
        let markdown = try String(contentsOf: files.appendingPathComponent("ATTRIBUTION.md"), encoding: .utf8)
        XCTAssertTrue(markdown.hasPrefix("# Attribution\n"), markdown, file: file, line: line)
        XCTAssertTrue(markdown.contains("- **streets/streets** (style source): "), markdown, file: file, line: line)
        let readme = try String(contentsOf: files.appendingPathComponent("README.txt"), encoding: .utf8)
        XCTAssertTrue(readme.hasPrefix("provision export patch files\n\nBeside the patch patch.db,"), readme, file: file, line: line)
        let sizes = try ["README.txt", "ATTRIBUTION.md", "attribution.json"].map { "\($0) \(try Data(contentsOf: files.appendingPathComponent($0)).count)" }
        print("beside the patch: \(sizes.joined(separator: ", ")) bytes; ATTRIBUTION.md:\n\(markdown)\nattribution.json:\n"
              + (try String(contentsOf: files.appendingPathComponent("attribution.json"), encoding: .utf8)))
    }

    func testAJobWithOneTileInSixChangedPatchesAboutASixthOfTheBundle() throws {
        let job = try citiesJob()
        try apply(job, store: "v1", time: Self.v1Time)
        let stored = try SQLiteShell(database: url("v1/offline.db")).rows("SELECT z, x, y FROM tiles ORDER BY z, x, y")
            .map { TileAddress(z: Int($0[0])!, x: Int($0[1])!, y: Int($0[2])!) }
        let tree = upstream.appendingPathComponent("tiles")
        func bytes(_ tile: TileAddress) throws -> Data { try Data(contentsOf: tree.appendingPathComponent("\(tile.z)/\(tile.x)/\(tile.y).pbf")) }
        var changed = 0
        for index in stride(from: 0, to: stored.count - 1, by: 6) {
            // The next tile of the key order whose bytes differ takes this one's place.
            guard let other = stored[(index + 1)...].first(where: { (try? bytes($0)) != (try? bytes(stored[index])) }) else { continue }
            try change(stored[index], to: other)
            changed += 1
        }
        try apply(job, store: "v2", time: Self.v2Time)

        let report = try patchReport(try exportPatch())
        XCTAssertEqual(report["tiles"]?.intValue, changed)
        XCTAssertEqual(report["resources"], 0)
        let bytes = try XCTUnwrap(report["bytes"]?.intValue), full = try XCTUnwrap(report["fullBytes"]?.intValue)
        let share = Double(bytes) / Double(full)
        let v2 = SQLiteShell(database: url("v2/offline.db"))
        let changedBytes = try v2.int("ATTACH '\(url("patch.db").path)' AS patch; SELECT sum(length(data)) FROM tiles "
                                      + "WHERE id IN (SELECT id FROM patch.tiles)")
        print("patch size, \(changed) of \(stored.count) tiles changed (\(changedBytes) of \(try v2.int("SELECT sum(length(data)) FROM tiles")) "
              + "stored tile bytes): \(bytes) bytes against \(full) (\(share))")
        XCTAssertGreaterThan(share, 0.08)
        XCTAssertLessThan(share, 0.3, "about a sixth of the bundle")
        try assertPatchMergesLikeTheStore()
    }

    func testARegionWhoseDefinitionChangedComesWholeAndTheRowsDroppedAreListed() throws {
        try apply(try citiesJob(), store: "v1", time: Self.v1Time)
        try apply(try citiesJob(londonZoom: [10, 13]), store: "v2", time: Self.v2Time)
        let report = try patchReport(try exportPatch())
        XCTAssertEqual(report["newRegions"], ["london/streets"])
        XCTAssertEqual(report["droppedRegions"], ["london/streets"])
        let london13 = Demo.london.tiles.filter { $0.z <= 13 }.count
        XCTAssertEqual(report["tiles"]?.intValue, london13, "the new region is complete")
        let londonOnly14 = Demo.london.tiles.filter { $0.z == 14 }.count
        let dropped = try XCTUnwrap(report["dropped"]?.arrayValue)
        XCTAssertEqual(dropped.count, londonOnly14)
        let keys = Demo.london.tiles.filter { $0.z == 14 }.map { "(\($0.x), \($0.y))" }.joined(separator: ", ")
        XCTAssertEqual(report["droppedBytes"]?.intValue, try SQLiteShell(database: url("v1/offline.db")).int(
            "SELECT sum(length(data)) FROM tiles WHERE z = 14 AND (x, y) IN (VALUES \(keys))"))
        try assertPatchMergesLikeTheStore()
        let text = try ws.provision("export", "--format", "patch", "--store", url("v2").path, "--since", url("v1").path,
                                    "--out", url("text.db").path)
        XCTAssertTrue(text.stdout.contains("stay on devices, as a merge deletes nothing"), text.stdout)
    }

    private func patchNotes(_ plan: ProcessResult) throws -> [String] {
        try parseJSON(plan.stdout)["notes"]?.arrayValue?.filter { $0["subject"] == "patches" }.compactMap { $0["message"]?.stringValue } ?? []
    }

    func testAPlanThatRemovesRowsFromABuiltStoreSaysDevicesUpdatedByAPatchKeepThem() throws {
        let job = try citiesJob()
        try apply(job, store: "v1", time: Self.v1Time)
        let same = try ws.provision("plan", "--json", "--store", url("v1").path, job, environment: Self.v2Time)
        XCTAssertEqual(try patchNotes(same), [], "nothing removed, nothing to say")

        let smaller = try citiesJob(londonZoom: [10, 13])
        let json = try ws.provision("plan", "--json", "--store", url("v1").path, smaller, environment: Self.v2Time)
        let london14 = Demo.london.tiles.filter { $0.z == 14 }.count
        let expected = "devices updated by a patch ('provision export --format patch') keep what this apply removes "
            + "(\(grouped(london14)) tile links), as a side-load merge deletes nothing; the patch's report lists the rows dropped "
            + "with their bytes, and an app that must free them deletes the old region first"
        XCTAssertEqual(try patchNotes(json), [expected], json.stdout)
        let text = try ws.provision("plan", "--store", url("v1").path, smaller, environment: Self.v2Time)
        XCTAssertTrue(text.stdout.contains("note: patches: \(expected)\n"), text.stdout)

        let fewer = try citiesJob { job in
            if case .array(let regions) = job["regions"] ?? .null { job["regions"] = .array(regions.filter { $0["id"] != "paris" }) }
        }
        let removed = try ws.provision("plan", "--json", "--store", url("v1").path, fewer, environment: Self.v2Time)
        let paris = try XCTUnwrap(try patchNotes(removed).first, removed.stdout)
        XCTAssertTrue(paris.hasPrefix("devices updated by a patch ('provision export --format patch') keep what this apply removes "
                                      + "(region paris/streets, \(grouped(Demo.paris.tiles.count)) tile links and "), paris)
        // The rows only Paris links, with their stored bytes, as the store's links say.
        let regions = try readJSON(url("v1/provision.lock.json"))["regions"]?.arrayValue ?? []
        let row = try XCTUnwrap(regions.first { $0["key"] == "paris/streets" }?["rowId"]?.intValue)
        let v1 = SQLiteShell(database: url("v1/offline.db"))
        func only(_ table: String, _ links: String, _ column: String) throws -> (count: Int, bytes: Int) {
            let ids = "SELECT \(column) FROM \(links) WHERE region_id = \(row) EXCEPT SELECT \(column) FROM \(links) WHERE region_id != \(row)"
            return (try v1.int("SELECT count(*) FROM \(table) WHERE id IN (\(ids))"),
                    try v1.int("SELECT coalesce(sum(length(data)), 0) FROM \(table) WHERE id IN (\(ids))"))
        }
        let tiles = try only("tiles", "region_tiles", "tile_id"), resources = try only("resources", "region_resources", "resource_id")
        print("plan note, Paris removed from the demo job: \(paris)")
        XCTAssertEqual(tiles.count, Demo.paris.tiles.count, "no other city shares a Paris tile")
        let rows = listed([plural(tiles.count, "tile"), resources.count > 0 ? plural(resources.count, "resource") : ""])
        XCTAssertTrue(paris.contains("; rows only the removed region links: \(rows) "
                                     + "(\(ByteFormat.string(Int64(tiles.bytes + resources.bytes))))), as a side-load merge"), paris)
    }

    /// Jobs/cities-search.json with search packs `packs` (id → the `kind` of its places layer): the
    /// first reads every region, the others Paris only (a pack is built from the tiles of the regions naming it).
    private func searchJob(_ packs: [(id: String, kind: String)]) throws -> String {
        try citiesJob(base: "cities-search") { job in
            job["searchPacks"] = .array(packs.map { pack in
                ["id": .string(pack.id), "sources": ["streets"], "layers": ["places": ["kind": .string(pack.kind), "rank": "rank"]]]
            })
            guard case .array(var regions) = job["regions"] ?? .null else { return }
            for i in regions.indices {
                guard case .object(var region) = regions[i] else { continue }
                let ids = regions[i]["id"] == "paris" ? packs.map(\.id) : [packs[0].id]
                region["searchPacks"] = .array(ids.map { .string($0) })
                regions[i] = .object(region)
            }
            job["regions"] = .array(regions)
        }
    }

    private func packDigests(_ store: String) throws -> [String: String] {
        let lock = try readJSON(url("\(store)/provision.lock.json"))
        var digests: [String: String] = [:]
        for pack in lock["searchPacks"]?.arrayValue ?? [] {
            digests[pack["id"]?.stringValue ?? ""] = pack["digest"]?.stringValue
        }
        return digests
    }

    func testSearchPacksNewOrChangedShipWholeBesideThePatchAndDroppedOnesAreListed() throws {
        try apply(try searchJob([("places", "place"), ("kept", "place"), ("old", "place")]), store: "v1", time: Self.v1Time)
        // v2 is v1 updated, as a release pipeline does: a pack whose inputs did not change is kept byte for byte.
        try FileManager.default.copyItem(at: url("v1"), to: url("v2"))
        try apply(try searchJob([("places", "poi"), ("kept", "place"), ("added", "place")]), store: "v2", time: Self.v2Time)
        let v1 = try packDigests("v1"), v2 = try packDigests("v2")
        XCTAssertNotEqual(v1["places"], v2["places"], "the places layer read as POIs makes another file")
        XCTAssertEqual(v1["kept"], v2["kept"])

        let report = try patchReport(try exportPatch())
        let files = url("patch.files")
        let shipped = try XCTUnwrap(report["packs"]?.arrayValue)
        XCTAssertEqual(shipped.map { $0["path"]?.stringValue ?? "" }, ["search/places.db", "search/added.db"], "unchanged packs are not shipped")
        XCTAssertEqual(shipped.map { $0["change"]?.stringValue ?? "" }, ["changed", "new"])
        for pack in shipped {
            let path = try XCTUnwrap(pack["path"]?.stringValue)
            let data = try Data(contentsOf: files.appendingPathComponent(path))
            XCTAssertEqual(data, try Data(contentsOf: url("v2/\(path)")), "the whole new file")
            XCTAssertEqual(pack["sha256"]?.stringValue, ws.sha256(files.appendingPathComponent(path)))
            XCTAssertEqual("sha256:" + (pack["sha256"]?.stringValue ?? ""), v2[pack["pack"]?.stringValue ?? ""], "the lock's digest")
            XCTAssertEqual(pack["bytes"]?.intValue, data.count)
            XCTAssertEqual(pack["kind"], "search")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: files.appendingPathComponent("search/kept.db").path))
        XCTAssertEqual(report["droppedPacks"]?.serialized(.canonical),
                       JSONValue.array([["kind": "search", "pack": "old", "path": "search/old.db"]]).serialized(.canonical))
        let readme = try String(contentsOf: files.appendingPathComponent("README.txt"), encoding: .utf8)
        XCTAssertTrue(readme.contains("  search/places.db (changed) sha256 \(ws.sha256(files.appendingPathComponent("search/places.db")))\n"), readme)
        XCTAssertTrue(readme.contains("delete them on devices: search/old.db"), readme)
        let markdown = try String(contentsOf: files.appendingPathComponent("ATTRIBUTION.md"), encoding: .utf8)
        XCTAssertTrue(markdown.contains("(search pack)"), markdown)
        let text = try ws.provision("export", "--format", "patch", "--store", url("v2").path, "--since", url("v1").path,
                                    "--out", url("text.db").path)
        text.expect(0)
        XCTAssertTrue(text.stdout.contains("2 packs changed or new, to replace whole on devices (graph ids are not stable across "
                                           + "Valhalla builds): search/places.db (changed, "), text.stdout)
        XCTAssertTrue(text.stdout.contains("note: the store no longer has 1 pack; delete its file on devices: search/old.db"), text.stdout)

        // A routing pack the lock records is shipped by the same rule (a stand-in extract: no Valhalla build here).
        let extract = Data("a routing extract".utf8)
        try FileManager.default.createDirectory(at: url("v2/routing"), withIntermediateDirectories: true)
        try extract.write(to: url("v2/routing/town.tar"))
        guard case .object(var lock) = try readJSON(url("v2/provision.lock.json")) else { return XCTFail("no lock") }
        lock["routingPacks"] = [["id": "town", "file": "routing/town.tar", "source": "https://example.com/{tile}", "gzip": false,
                                 "digest": .string("sha256:" + SHA256.hex(extract)), "bytes": .int(extract.count),
                                 "build": .null, "tiles": [], "absent": []]]
        try JSONValue.object(lock).data(.prettySorted).write(to: url("v2/provision.lock.json"))
        let routed = try patchReport(try exportPatch(out: "routed.db"))
        let town: JSONValue = ["kind": "routing", "pack": "town", "path": "routing/town.tar", "change": "new",
                               "bytes": .int(extract.count), "sha256": .string(SHA256.hex(extract))]
        XCTAssertEqual(routed["packs"]?.arrayValue?.last?.serialized(.canonical), town.serialized(.canonical))
        XCTAssertEqual(try Data(contentsOf: url("routed.files/routing/town.tar")), extract)

        // A pack whose bytes are not the ones its lock recorded is refused by name, and nothing is written.
        try Data("damaged".utf8).write(to: url("v2/search/added.db"))
        let damaged = try exportPatch(out: "damaged.db", status: 65)
        XCTAssertTrue(damaged.stderr.contains("search pack 'added': search/added.db in the store at"), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("is damaged"), damaged.stderr)
        try assertNothingWritten("damaged.db")
    }

    /// The directory beside a patch, a changed search pack copied into it, is flushed to disk,
    /// every file and directory, before it is renamed into place (strace).
    func testThePatchFilesAreFlushedBeforeTheirDirectoryIsRenamedIntoPlace() throws {
        try apply(try searchJob([("places", "place")]), store: "v1", time: Self.v1Time)
        try apply(try searchJob([("places", "poi")]), store: "v2", time: Self.v2Time)
        let (result, trace) = try FlushTrace.run(ws, ["export", "--format", "patch", "--store", url("v2").path,
                                                      "--since", url("v1").path, "--out", url("patch.db").path, "--quiet"])
        result.expect(0)
        XCTAssertEqual(try Data(contentsOf: url("patch.files/search/places.db")), try Data(contentsOf: url("v2/search/places.db")))
        XCTAssertEqual(trace.unflushed(in: url("patch.files")), [])
    }

    /// Asserts `out` was not written, nor any temporary file beside it.
    private func assertNothingWritten(_ out: String = "patch.db", file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: url(out).path), file: file, line: line)
        let directory = url(out).deletingPathExtension().appendingPathExtension("files")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path), "no \(directory.lastPathComponent)", file: file, line: line)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.contains(".tmp-") }
        XCTAssertEqual(leftovers, [], file: file, line: line)
    }

    func testBadInputIsRefusedWithItsExitCodeAndNoFile() throws {
        let job = try citiesJob()
        try apply(job, store: "v1", time: Self.v1Time)
        try apply(job, store: "v2", time: Self.v2Time)

        try apply(try citiesJob(name: "other"), store: "other", time: Self.v2Time)
        let otherJob = try exportPatch(since: "other", status: 65)
        XCTAssertTrue(otherJob.stderr.contains("is a store of job 'other'"), otherJob.stderr)
        try assertNothingWritten()

        let newer = try exportPatch(store: "v1", since: "v2", status: 65)
        XCTAssertTrue(newer.stderr.contains("after the store"), newer.stderr)
        try assertNothingWritten()

        try FileManager.default.copyItem(at: url("v1"), to: url("damaged"))
        try WritableSQLite(database: url("damaged/offline.db")).exec("DELETE FROM tiles WHERE id = (SELECT max(id) FROM tiles);")
        let audit = try ws.provision("audit", "--store", url("damaged").path)
        audit.expect(1)
        let damaged = try exportPatch(since: "damaged", status: 65)
        XCTAssertTrue(damaged.stderr.contains("is damaged, as 'provision audit' finds"), damaged.stderr)
        try assertNothingWritten()
        try FileManager.default.copyItem(at: url("v1"), to: url("garbage"))
        try Data("not a database".utf8).write(to: url("garbage/offline.db"))
        let garbage = try exportPatch(since: "garbage", status: 65)
        XCTAssertTrue(garbage.stderr.contains("is damaged: cannot audit the store at"), garbage.stderr)
        try assertNothingWritten()

        for input in ["v1/offline.db", "v2/offline.db", "v1/provision.lock.json", "v2"] {
            let over = try exportPatch(out: input, status: 64)
            XCTAssertTrue(over.stderr.contains("is inside the store"), over.stderr)
        }

        try FileManager.default.copyItem(at: url("v1"), to: url("old.files"))
        let clash = try exportPatch(since: "old.files", out: "old.db", status: 64)
        XCTAssertTrue(clash.stderr.contains("the directory \(url("old.files").path) beside the patch (its attribution and packs) "
                                            + "is inside the store"), clash.stderr)
        try FileManager.default.createDirectory(at: url("holder.files"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: url("v1"), to: url("holder.files/v1"))
        let holder = try exportPatch(since: "holder.files/v1", out: "holder.db", status: 64)
        XCTAssertTrue(holder.stderr.contains("holds the store at"), holder.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url("holder.files/v1/offline.db").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("holder.db").path))
        let named = try exportPatch(out: "patch.files", status: 64)
        XCTAssertTrue(named.stderr.contains("ends in .files"), named.stderr)
        try assertNothingWritten()
        try FileManager.default.createDirectory(at: url("mine.files"), withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: url("mine.files/keep.txt"))
        let taken = try exportPatch(out: "mine.db", status: 73)
        XCTAssertTrue(taken.stderr.contains("is not a patch's files directory provision export wrote"), taken.stderr)
        XCTAssertEqual(try String(contentsOf: url("mine.files/keep.txt"), encoding: .utf8), "keep")
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("mine.db").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: ws.root.path).filter { $0.contains(".tmp-") }, [])

        try exportPatch(since: "nowhere", status: 66)
        try FileManager.default.createDirectory(at: url("empty"), withIntermediateDirectories: true)
        let notAStore = try exportPatch(since: "empty", status: 66)
        XCTAssertTrue(notAStore.stderr.contains("is not a store"), notAStore.stderr)
        try assertNothingWritten()

        let mbtiles = try ws.provision("export", "--format", "mbtiles", "--store", url("v2").path, "--since", url("v1").path,
                                       "--out", url("a.mbtiles").path)
        mbtiles.expect(64)
        XCTAssertTrue(mbtiles.stderr.contains("--since goes with --format patch"), mbtiles.stderr)
        try assertNothingWritten("a.mbtiles")
        try ws.provision("export", "--format", "patch", "--store", url("v2").path, "--out", url("patch.db").path).expect(64)
        try assertNothingWritten()
    }

    func testAChangedRowThatWouldNotBeNewerIsRefusedByName() throws {
        let job = try citiesJob()
        try apply(job, store: "v1", time: Self.v1Time)
        let tile = Demo.paris.tiles.filter { $0.z == 14 }.sorted()[0]
        try change(tile, to: Demo.london.tiles.filter { $0.z == 14 }.sorted()[0])
        try apply(job, store: "v2", time: Self.v1Time)
        let refused = try exportPatch(status: 65)
        XCTAssertTrue(refused.stderr.contains("cannot patch \(Demo.canonicalTiles)\(tile.z)/\(tile.x)/\(tile.y).pbf"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("a device's merge would keep the old bytes"), refused.stderr)
        try assertNothingWritten()
    }
}
