import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import TileMath
import XCTest

/// provision.lock.json is read back exactly and written canonically.
final class LockDocumentTests: XCTestCase {
    /// What `AtomicFile.write` puts on disk.
    private func lockFileBytes(_ lock: LockDocument) -> Data {
        Data((lock.json.serialized(.prettySorted) + "\n").utf8)
    }

    func testRoundTripThroughJSONAndTextGivesTheSameDocument() throws {
        let lock = Samples.lock(digestOrder: [Samples.tileJSONURL])
        XCTAssertEqual(LockDocument(json: lock.json), lock)
        let reread = LockDocument(json: try JSONValue.parse(lockFileBytes(lock)))
        XCTAssertEqual(reread, lock)
        XCTAssertEqual(reread?.stylePacks.first?.tileJSONDigests, [Samples.tileJSONURL: Samples.digest(Samples.tileJSONURL)])
        XCTAssertEqual(reread?.regions.map(\.stylePack), ["streets", nil])
        XCTAssertEqual(reread?.regions.map(\.isComplete), [false, true])
    }

    func testReadingSortsExpectedTilesByTemplateAndNumericZoom() throws {
        var lock = Samples.lock(digestOrder: [Samples.tileJSONURL])
        let sorted = lock.regions[0].expectedTiles
        lock.regions[0].expectedTiles = sorted.reversed()
        // The text sorts zoom keys as strings ("10" < "11" < "9"); reading restores numeric order.
        let text = lock.json.serialized(.prettySorted)
        let ten = try XCTUnwrap(text.range(of: "\"10\": 1")), nine = try XCTUnwrap(text.range(of: "\"9\": 1"))
        XCTAssertLessThan(ten.lowerBound, nine.lowerBound)
        XCTAssertEqual(LockDocument(json: try JSONValue.parse(text))?.regions[0].expectedTiles, sorted)
    }

    /// Equal values give identical bytes, however their dictionaries and arrays were put together.
    func testEqualLocksWriteIdenticalBytes() throws {
        let urls = (0..<20).map { "https://tiles.example.com/demo/tilesets/t\($0).json" }
        let a = Samples.lock(digestOrder: urls), b = Samples.lock(digestOrder: urls.reversed())
        XCTAssertEqual(a, b)
        XCTAssertEqual(lockFileBytes(a), lockFileBytes(b))
        var c = Samples.lock(digestOrder: urls)
        c.regions[0].expectedTiles.reverse()
        XCTAssertEqual(lockFileBytes(a), lockFileBytes(c), "expectedTiles order does not reach the file")
        let reread = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lockFileBytes(a))))
        XCTAssertEqual(lockFileBytes(reread), lockFileBytes(Samples.lock(digestOrder: [])),
                       "digests of URLs no source names are dropped on reading")
        XCTAssertEqual(lockFileBytes(try XCTUnwrap(LockDocument(json: reread.json))), lockFileBytes(reread), "a re-write is a fixed point")
    }

    func testLockTextIsSortedIndentedAndHasNoWallClockTime() throws {
        let text = String(decoding: lockFileBytes(Samples.lock()), as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("}\n"))
        XCTAssertTrue(text.hasPrefix("{\n  \"epoch\": 1700000000,\n  \"job\": {\n    \"digest\": \"sha256:"))
        let topLevel = text.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.split(separator: "\"")[1] }
        XCTAssertEqual(topLevel, ["epoch", "job", "regions", "schemaVersion", "store", "stylePacks"])
        XCTAssertFalse(text.contains(" \n"), "no trailing spaces")
        let changed = Samples.lock()
        var other = changed
        other.byteCount += 1
        XCTAssertNotEqual(lockFileBytes(changed), lockFileBytes(other))
    }

    func testAShardRoundTripsAndAWholeStoreHasNone() throws {
        var lock = Samples.lock()
        XCTAssertNil(lock.json["shard"], "a whole store's lock has no shard member")
        lock.shard = .init(shard: Shard(index: 2, count: 7), tiles: 300..<450, totalTiles: 1_050)
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.shard, lock.shard)
        XCTAssertEqual(read.json, lock.json)
    }

    func testAUsedGlyphPackRoundTripsAndOthersRecordNone() throws {
        var lock = Samples.lock()
        XCTAssertNil(lock.json["stylePacks"]?.arrayValue?.first?["glyphs"], "only \"used\" is recorded")
        lock.stylePacks[0].glyphs = .used
        XCTAssertEqual(lock.json["stylePacks"]?.arrayValue?.first?["glyphs"], .string("used"))
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.stylePacks[0].glyphs, .used)
        XCTAssertEqual(read.json, lock.json)
    }

    func testSearchPackRecordsRoundTripAndAreAbsentWithoutPacks() throws {
        var lock = Samples.lock()
        XCTAssertNil(lock.json["searchPacks"], "a job without search packs writes no searchPacks member")
        let digest = "sha256:" + String(repeating: "a", count: 64)
        lock.searchPacks = [SearchPackRecord(id: "places", file: "search/places.db", digest: digest, inputDigest: digest,
                                             settingsDigest: digest, entries: 30, bytes: 73_728, tiles: 1_439)]
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.searchPacks, lock.searchPacks)
        XCTAssertEqual(read.json, lock.json)
    }

    func testAttributionRoundTripsAndIsAbsentWhenNothingDeclaresAny() throws {
        var lock = Samples.lock()
        XCTAssertNil(lock.json["attribution"], "a store whose sources declare no attribution writes no attribution member")
        lock.attribution = [Attribution(kind: .styleSource, source: "streets/streets", text: "<a href=\"https://osm.org\">© OSM</a>"),
                            Attribution(kind: .job, source: "cities", text: "© Us", licence: "CC-BY-4.0", url: "https://us.example")]
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.attribution, lock.attribution)
        XCTAssertEqual(read.json, lock.json)
    }

    /// What a merge builds a shard's search packs from round-trips, and only the lock carries it.
    func testAShardsSearchPacksRoundTrip() throws {
        var lock = Samples.lock()
        let digest = "sha256:" + String(repeating: "b", count: 64)
        let template = "https://tiles.example.com/{z}/{x}/{y}.pbf"
        let pack = SearchPackPlan(
            pack: SearchPack(id: "places", sources: ["streets"], names: ["name", "name:en"],
                             layers: ["places": SearchLayerMapping(kind: "place", subclassKey: "type", rankKeys: ["rank"])]),
            sources: [SearchPackSource(name: "streets/streets", urlTemplate: template, pixelRatio: 2, isTMS: true,
                                       vectorLayers: ["places", "roads"], attribution: "© Test")],
            regions: ["london", "paris"], settingsDigest: digest, action: .build, reason: "")
        let paris = CoverArea.polygons([Polygon(rings: [[LngLat(lng: 2.35, lat: 48.83), LngLat(lng: 2.38, lat: 48.84),
                                                         LngLat(lng: 2.37, lat: 48.86), LngLat(lng: 2.35, lat: 48.83)]])])
        let packs = ShardSearchPacks(packs: [pack], regions: [
            .init(regionID: "london", area: .bbox(BoundingBox(west: -0.13, south: 51.49, east: -0.1, north: 51.52)),
                  tileSets: [PlannedTileSet(urlTemplate: template, pixelRatio: 2, isTMS: true, zooms: 10...14)]),
            .init(regionID: "paris", area: paris, tileSets: []),
        ])
        lock.shard = .init(shard: Shard(index: 0, count: 2), tiles: 0..<10, totalTiles: 20)
        lock.shard?.searchPacks = packs
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.shard?.searchPacks, packs)
        XCTAssertEqual(read.json, lock.json)
        XCTAssertNil(lock.shard?.json["searchPacks"], "the audit's shard object is the share alone")
        XCTAssertNil(LockDocument(json: lock.json.setting("/shard/searchPacks/packs/0/id", to: nil)),
                     "a record the merge cannot read is no lock")
    }

    func testFileEntriesRoundTripAndAreAbsentWithoutFiles() throws {
        var lock = Samples.lock()
        XCTAssertNil(lock.json["files"], "a lock that records no file writes no files member")
        lock.files = [LockDocument.FileEntry(path: "offline.db", bytes: 1_048_576, sha256: String(repeating: "b", count: 64))]
        XCTAssertEqual(lock.json["files"], [["path": "offline.db", "bytes": 1_048_576, "sha256": .string(String(repeating: "b", count: 64))]])
        let read = try XCTUnwrap(LockDocument(json: try JSONValue.parse(lock.fileBytes)))
        XCTAssertEqual(read.files, lock.files)
        XCTAssertEqual(read.file("offline.db")?.bytes, 1_048_576)
        XCTAssertNil(read.file("search/places.db"))
        XCTAssertEqual(read.json, lock.json)
    }

    func testUnknownVersionOrMissingJobIsNotALock() {
        let json = Samples.lock().json
        XCTAssertNil(LockDocument(json: json.setting("/schemaVersion", to: 8)))
        XCTAssertNotNil(LockDocument(json: json.setting("/schemaVersion", to: 6)), "version 6 locks (no attribution, files or shard.searchPacks) are read")
        XCTAssertNotNil(LockDocument(json: json.setting("/schemaVersion", to: 5)), "version 5 locks (no search packs) are read")
        XCTAssertNotNil(LockDocument(json: json.setting("/schemaVersion", to: 1)), "version 1 locks (no chunks) are read")
        XCTAssertNotNil(LockDocument(json: json.setting("/schemaVersion", to: 3)), "version 3 locks (no glyphs) are read")
        XCTAssertNotNil(LockDocument(json: json.setting("/schemaVersion", to: 2)), "version 2 locks (no shard) are read")
        XCTAssertNil(LockDocument(json: json.setting("/job", to: nil)))
        XCTAssertNil(LockDocument(json: "not a lock"))
    }

    func testChunksRoundTripWithTemplatesListedOnce() throws {
        var lock = Samples.lock()
        let template = "https://tiles.example.com/{z}/{x}/{y}.pbf"
        lock.chunks = [ChunkDigest(start: .resource(url: "https://a.example/style.json"), rows: 3, digest: "0123456789abcdef"),
                       ChunkDigest(start: .tile(TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: 3, x: 1, y: 2))),
                                   rows: 64, digest: "fedcba9876543210fedcba9876543210"),
                       ChunkDigest(start: .tile(TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: 4, x: 0, y: 0))),
                                   rows: 7, digest: "00112233445566aa")]
        let json = lock.json
        XCTAssertEqual(json["store"]?["chunks"]?["templates"], [.string(template)])
        XCTAssertEqual(json["store"]?["chunks"]?["list"]?[1], "T 0 1 3 1 2 64 fedcba9876543210fedcba9876543210")
        XCTAssertEqual(LockDocument(json: json)?.chunks, lock.chunks)
    }

    func testAVersion4LockIsReadWithItsChunks() throws {
        var lock = Samples.lock()
        lock.chunks = [ChunkDigest(start: .resource(url: "https://a.example/style.json"), rows: 3, digest: "0123456789abcdef")]
        let old = try XCTUnwrap(LockDocument(json: lock.json.setting("/schemaVersion", to: 4)))
        XCTAssertEqual(old.chunks, lock.chunks, "1,024-row SHA-256 prefixes still compare, chunk by chunk")
        XCTAssertEqual(old.contentDigest, lock.contentDigest)
    }
}
