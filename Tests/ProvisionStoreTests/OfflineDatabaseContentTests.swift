import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

final class OfflineDatabaseContentTests: XCTestCase {
    private let epoch: Int64 = 1_700_000_000
    private let template = "https://tiles.example.com/v/{z}/{x}/{y}.pbf"
    private var url: URL!
    private var store: OfflineDatabase!

    override func setUpWithError() throws {
        url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        store = try OfflineDatabase(url: url, epoch: epoch)
    }

    override func tearDownWithError() throws {
        try store?.close()
    }

    private func key(_ z: Int, _ x: Int, _ y: Int, template: String? = nil) -> TileKey {
        TileKey(urlTemplate: template ?? self.template, pixelRatio: 1, tile: TileID(z: z, x: x, y: y))
    }

    private func tileItem(_ key: TileKey, _ data: Data, etag: String? = nil, modified: Int64? = nil) -> FetchedItem {
        let expanded = key.urlTemplate.replacingOccurrences(of: "{z}", with: "\(key.tile.z)")
            .replacingOccurrences(of: "{x}", with: "\(key.tile.x)").replacingOccurrences(of: "{y}", with: "\(key.tile.y)")
        return FetchedItem(request: FetchRequest(url: expanded, kind: .tile, tileKey: key, tile: key.tile),
                           body: FetchedBody(data: data, etag: etag, modified: modified))
    }

    private func resourceItem(_ url: String, _ kind: ResourceKind, _ data: Data) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: url, kind: kind), body: FetchedBody(data: data))
    }

    /// An independent connection on the same file, for checking what is really stored.
    private func raw() throws -> SQLiteDatabase {
        try SQLiteDatabase(path: url.path, options: .init(readOnly: true))
    }

    func testTilesAndResourcesRoundTripWithMapLibreCompressionRule() throws {
        var png = Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        png.append(randomBytes(4_000))
        let json = Data(String(repeating: #"{"version":8,"layers":[]},"#, count: 50).utf8)
        let pbf = Data(repeating: 0x1a, count: 2_000)
        try store.write([
            tileItem(key(3, 1, 2), pbf, etag: "\"abc\"", modified: 1_600_000_000),
            tileItem(key(3, 1, 3, template: "https://r.example.com/{z}/{x}/{y}.png"), png),
            resourceItem("https://example.com/style.json", .style, json),
            resourceItem("https://example.com/sprite.png", .spriteImage, png),
        ])
        XCTAssertEqual(try store.tileData(key(3, 1, 2)), pbf)
        XCTAssertEqual(try store.tileData(key(3, 1, 3, template: "https://r.example.com/{z}/{x}/{y}.png")), png)
        XCTAssertNil(try store.tileData(key(3, 1, 4)))
        XCTAssertEqual(try store.resourceData(url: "https://example.com/style.json"), json)
        XCTAssertEqual(try store.resourceData(url: "https://example.com/sprite.png"), png)
        XCTAssertNil(try store.resourceData(url: "https://example.com/missing.json"))

        let db = try raw()
        let tiles = try db.query("""
            SELECT typeof(url_template), compressed, length(data), typeof(data), etag, modified, expires,
                   accessed, must_revalidate, pixel_ratio, z, x, y
            FROM tiles ORDER BY id
            """) { row in (0..<13).map { row.isNull(Int32($0)) ? "NULL" : row.text(Int32($0)) } }
        // A tile that arrived raw is stored as it came (no CPU spent deflating every tile); one
        // that arrived deflated keeps its zlib form (see testTileThatArrivedDeflatedKeepsItsZlibForm).
        XCTAssertEqual(tiles[0], ["text", "0", "\(pbf.count)", "blob", "\"abc\"", "1600000000", "NULL",
                                  "1700000000", "0", "1", "3", "1", "2"])
        XCTAssertEqual(tiles[1][1], "0", "random PNG stays uncompressed")
        XCTAssertEqual(tiles[1][2], "\(png.count)")
        let stored = try db.queryFirst("SELECT data FROM tiles WHERE id = 1") { $0.data(0) }
        XCTAssertEqual(stored, pbf, "stored as it came")

        let resources = try db.query("""
            SELECT typeof(url), url, kind, compressed, accessed, must_revalidate FROM resources ORDER BY id
            """) { "\($0.text(0)) \($0.text(1)) \($0.int64(2)) \($0.int64(3)) \($0.int64(4)) \($0.int64(5))" }
        XCTAssertEqual(resources, [
            "text https://example.com/style.json 1 1 1700000000 0",
            "text https://example.com/sprite.png 5 0 1700000000 0",
        ])
        // MapLibre looks up by a TEXT parameter: the row must be found that way.
        XCTAssertEqual(try db.queryFirst("SELECT kind FROM resources WHERE url = ?1",
                                         [.text("https://example.com/style.json")]) { $0.int64(0) }, 1)
    }

    func testRewritingAKeyKeepsItsRowIDAndLinks() throws {
        let region = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        try store.write([tileItem(key(5, 1, 1), Data("old".utf8)), resourceItem("https://e.com/s", .style, Data("a".utf8))])
        try store.linkTiles([key(5, 1, 1)], toRegion: region)
        try store.linkResources(["https://e.com/s"], toRegion: region)
        let before = try raw().query("SELECT id FROM tiles UNION ALL SELECT id FROM resources") { $0.int64(0) }
        try store.write([tileItem(key(5, 1, 1), Data("new".utf8), etag: "e2"),
                         resourceItem("https://e.com/s", .source, Data("b".utf8))])
        let db = try raw()
        XCTAssertEqual(try db.query("SELECT id FROM tiles UNION ALL SELECT id FROM resources") { $0.int64(0) }, before)
        XCTAssertEqual(try store.tileData(key(5, 1, 1)), Data("new".utf8))
        XCTAssertEqual(try db.queryFirst("SELECT kind FROM resources") { $0.int64(0) }, 2)
        XCTAssertEqual(try store.linkedTiles(region: region, urlTemplate: template, zoom: 5), [TileID(z: 5, x: 1, y: 1)])
        XCTAssertEqual(try store.linkedResources(region: region), ["https://e.com/s"])
    }

    func testTileThatArrivedDeflatedKeepsItsZlibForm() throws {
        let pbf = Data(repeating: 0x1A, count: 2_000)
        let zlib = try Zlib.deflate(pbf)
        var body = FetchedBody(data: pbf)
        body.zlibData = zlib
        let request = FetchRequest(url: "https://t.example.com/3/1/2.pbf", kind: .tile, tileKey: key(3, 1, 2))
        try store.write([FetchedItem(request: request, body: body)])
        let row = try raw().queryFirst("SELECT compressed, data FROM tiles") { ($0.int64(0), $0.data(1)) }
        XCTAssertEqual(row?.0, 1)
        XCTAssertEqual(row?.1, zlib, "the zlib bytes the fetcher made, not a recompression")
        XCTAssertEqual(try store.tileData(key(3, 1, 2)), pbf)
    }

    func testNoWallClockTimeInRows() throws {
        let old = try OfflineDatabase(url: url.deletingLastPathComponent().appendingPathComponent("e.db"), epoch: 42)
        try old.write([tileItem(key(1, 0, 0), Data("t".utf8)), resourceItem("https://e.com/g", .glyphs, Data())])
        let rows = try old.db.query("SELECT accessed, modified, expires FROM tiles UNION ALL SELECT accessed, modified, expires FROM resources") {
            "\($0.int64(0)) \($0.optionalInt64(1).map(String.init) ?? "NULL") \($0.optionalInt64(2).map(String.init) ?? "NULL")"
        }
        // modified falls back to the epoch when upstream sent no Last-Modified (MapLibre's merge
        // compares it; NULL would never win), expires stays NULL.
        XCTAssertEqual(rows, ["42 42 NULL", "42 42 NULL"])
        // An empty payload is stored as a zero-length blob, not NULL, and reads back empty.
        XCTAssertEqual(try old.db.queryFirst("SELECT typeof(data) FROM resources") { $0.text(0) }, "blob")
        XCTAssertEqual(try old.resourceData(url: "https://e.com/g"), Data())
        try old.close()
    }

    func testATileRequestWithoutAKeyIsRejectedAndNothingIsWritten() throws {
        let bad = FetchedItem(request: FetchRequest(url: "https://e.com/1/0/0.pbf", kind: .tile), body: FetchedBody(data: Data("x".utf8)))
        XCTAssertThrowsError(try store.write([resourceItem("https://e.com/style", .style, Data("{}".utf8)), bad])) {
            XCTAssertEqual(($0 as? StoreError)?.code, .invalidInput)
        }
        XCTAssertEqual(try store.storedResources(among: ["https://e.com/style"]), [])
    }

    func testAThrowInsideAnOuterTransactionRollsBackEveryWrite() throws {
        struct Boom: Error {}
        XCTAssertThrowsError(try store.db.inTransaction {
            _ = try store.insertRegion(definition: Data("{}".utf8), description: nil)
            try store.write([tileItem(key(4, 2, 2), Data("t".utf8)), resourceItem("https://e.com/s", .style, Data("{}".utf8))])
            XCTAssertEqual(try store.storedKeys([key(4, 2, 2)]).count, 1, "visible inside the transaction")
            throw Boom()
        })
        XCTAssertEqual(try store.regions(), [])
        XCTAssertEqual(try store.storedKeys([key(4, 2, 2)]), [])
        XCTAssertEqual(try store.storedResources(among: ["https://e.com/s"]), [])
        // The connection is usable afterwards.
        try store.write([tileItem(key(4, 2, 2), Data("t".utf8))])
        XCTAssertEqual(try store.storedKeys([key(4, 2, 2)]).count, 1)
    }

    func testASharedTileIsStoredOnceAndOutlivesOneRegion() throws {
        let a = try store.insertRegion(definition: Data(#"{"a":1.0}"#.utf8), description: Data("A".utf8))
        let b = try store.insertRegion(definition: Data(#"{"b":1.0}"#.utf8), description: nil)
        let shared = key(10, 163, 395), onlyA = key(10, 164, 395), onlyB = key(10, 163, 396)
        try store.write([tileItem(shared, Data("s".utf8)), tileItem(onlyA, Data("a".utf8)), tileItem(onlyB, Data("b".utf8)),
                         resourceItem("https://e.com/style", .style, Data("{}".utf8)),
                         resourceItem("https://e.com/a-only", .image, Data("i".utf8))])
        XCTAssertEqual(try store.linkTiles([shared, onlyA], toRegion: a), 2)
        XCTAssertEqual(try store.linkTiles([shared, onlyA, key(10, 0, 0)], toRegion: a), 0, "existing or unstored")
        XCTAssertEqual(try store.linkTiles([shared, onlyB], toRegion: b), 2)
        try store.linkResources(["https://e.com/style", "https://e.com/a-only"], toRegion: a)
        try store.linkResources(["https://e.com/style"], toRegion: b)
        XCTAssertEqual(try raw().queryFirst("SELECT count(*) FROM tiles") { $0.int64(0) }, 3)
        XCTAssertEqual(try store.linkedTileCounts(region: a), [TileCount(urlTemplate: template, zoom: 10, count: 2)])

        let summary = try store.summary()
        XCTAssertEqual(summary.regions.map(\.rowID), [a, b])
        XCTAssertEqual(summary.regions[0].description, Data("A".utf8))
        XCTAssertEqual(summary.regions[0].tileCount, 2)
        XCTAssertEqual(summary.regions[0].resourceCount, 2)
        XCTAssertEqual(summary.regions[0].tileBytes, 2)
        XCTAssertEqual(summary.tileCount, 3)
        XCTAssertEqual(summary.orphanTileCount, 0)
        XCTAssertEqual(summary.resourceCountsByKind.map(\.kind), [1, 7])

        try store.deleteRegions([a])
        XCTAssertEqual(try store.regions().map(\.rowID), [b])
        let db = try raw()
        XCTAssertEqual(try db.queryFirst("SELECT count(*) FROM region_tiles WHERE region_id = ?1", [.int(a)]) { $0.int64(0) }, 0)
        XCTAssertEqual(try db.queryFirst("SELECT count(*) FROM region_resources WHERE region_id = ?1", [.int(a)]) { $0.int64(0) }, 0)
        XCTAssertEqual(try store.summary().orphanTileCount, 1)

        let pruned = try store.pruneOrphans()
        XCTAssertEqual(pruned.tiles, 1)
        XCTAssertEqual(pruned.resources, 1)
        XCTAssertEqual(try store.storedKeys([shared, onlyA, onlyB]), [shared, onlyB])
        XCTAssertEqual(try store.storedResources(among: ["https://e.com/style", "https://e.com/a-only"]), ["https://e.com/style"])
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testUnlinkingAndRegionUpdates() throws {
        let r = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        try store.write([tileItem(key(2, 0, 0), Data("x".utf8)), tileItem(key(2, 1, 0), Data("y".utf8)),
                         resourceItem("https://e.com/1", .style, Data("1".utf8)), resourceItem("https://e.com/2", .glyphs, Data("2".utf8))])
        try store.linkTiles([key(2, 1, 0), key(2, 0, 0)], toRegion: r)
        try store.linkResources(["https://e.com/2", "https://e.com/1"], toRegion: r)
        XCTAssertEqual(try store.linkedTiles(region: r, urlTemplate: template, zoom: 2), [TileID(z: 2, x: 0, y: 0), TileID(z: 2, x: 1, y: 0)])
        XCTAssertEqual(try store.linkedResources(region: r), ["https://e.com/1", "https://e.com/2"])
        try store.unlinkTiles([key(2, 0, 0)], fromRegion: r)
        try store.unlinkResources(fromRegion: r, keeping: ["https://e.com/2"])
        XCTAssertEqual(try store.linkedTiles(region: r, urlTemplate: template, zoom: 2), [TileID(z: 2, x: 1, y: 0)])
        XCTAssertEqual(try store.linkedResources(region: r), ["https://e.com/2"])

        try store.updateRegion(r, definition: Data(#"{"v":2.0}"#.utf8), description: Data([0, 255]))
        XCTAssertEqual(try store.regions(), [StoredRegion(rowID: r, definition: Data(#"{"v":2.0}"#.utf8), description: Data([0, 255]))])
        XCTAssertEqual(try raw().queryFirst("SELECT typeof(definition) || ' ' || typeof(description) FROM regions") { $0.text(0) }, "text blob")
        XCTAssertThrowsError(try store.updateRegion(999, definition: Data(), description: nil)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .notFound)
        }
        XCTAssertThrowsError(try store.linkTiles([key(2, 1, 0)], toRegion: 999)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .notFound)
        }
        XCTAssertEqual(try store.meanTileSizes(urlTemplate: template, zooms: 2...3), [2: 1.0], "no zoom without tiles")
    }

    func testAColumnScanGivesTheStoredRowsOfItsTemplateRatioZoomAndColumnAscending() throws {
        let stored = (0..<100).flatMap { x in (0..<50).map { y in key(14, 8000 + x, 5000 + 2 * y) } }
        try store.tuneForBulkWrites()
        // Neighbours under another ratio, zoom or template, which no scan below may return.
        let others = stored.prefix(2_000).map { TileKey(urlTemplate: $0.urlTemplate, pixelRatio: 2, tile: $0.tile) }
            + stored.prefix(2_000).map { key(13, $0.tile.x, $0.tile.y) }
            + stored.prefix(1_000).map { key($0.tile.z, $0.tile.x, $0.tile.y + 1, template: template + "?v=2") }
        for batch in stride(from: 0, to: stored.count + others.count, by: 1000) {
            let keys = (stored + others)[batch..<min(batch + 1000, stored.count + others.count)]
            try store.write(keys.shuffled().map { tileItem($0, Data([UInt8($0.tile.x & 0xff)])) })
        }
        let region = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        let linked = stored.filter { $0.tile.x % 3 == 0 && $0.tile.y % 4 == 0 }
        try store.linkTiles(linked + others, toRegion: region)
        let another = try store.insertRegion(definition: Data("{}".utf8), description: Data("b".utf8))
        try store.linkTiles(stored, toRegion: another)
        XCTAssertEqual(try store.tileLinkCount(region: region), linked.count + others.count)
        XCTAssertEqual(try store.tileLinkCount(region: another), stored.count)
        for x in 7998..<8102 {
            var rows: [Int] = [], linkedRows: [Int] = [], window: [Int] = []
            let column = StoredTileColumn(urlTemplate: template, pixelRatio: 1, zoom: 14, x: x, rows: 0..<(1 << 14))
            try store.forEachStoredTile(in: column, linkedTo: nil) { rows.append($0) }
            try store.forEachStoredTile(in: column, linkedTo: region) { linkedRows.append($0) }
            var part = column
            part.rows = 5010..<5031
            try store.forEachStoredTile(in: part, linkedTo: nil) { window.append($0) }
            let inColumn = stored.filter { $0.tile.x == x }.map(\.tile.y).sorted()
            XCTAssertEqual(rows, inColumn, "x \(x)")
            XCTAssertEqual(linkedRows, linked.filter { $0.tile.x == x }.map(\.tile.y).sorted(), "x \(x)")
            XCTAssertEqual(window, inColumn.filter { (5010..<5031).contains($0) }, "x \(x): the rows' upper bound is excluded")
        }
        var none = 0
        try store.forEachStoredTile(in: StoredTileColumn(urlTemplate: template, pixelRatio: 1, zoom: 14, x: 8000, rows: 5000..<5000),
                                    linkedTo: nil) { _ in none += 1 }
        XCTAssertEqual(none, 0, "an empty range of rows holds nothing")
        try store.finish()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path), ["offline.db"])
        let check = try raw()
        XCTAssertEqual(try check.queryFirst("PRAGMA journal_mode") { $0.text(0) }, "delete")
        XCTAssertEqual(try check.queryFirst("PRAGMA integrity_check") { $0.text(0) }, "ok")
    }

    func testMeanTileSizesEqualSQLitesAverageOfEveryZoomToTheBit() throws {
        // Sizes whose means are not round, both pixel ratios, empty tiles, another template.
        var items: [FetchedItem] = []
        for z in 3...6 {
            for x in 0..<(z * 7) {
                let size = (x * 7_919 + z * 104_729) % 3_001
                items.append(tileItem(key(z, x % (1 << z), x / (1 << z)), Data(repeating: UInt8(x & 0xff), count: size)))
                let retina = TileKey(urlTemplate: template, pixelRatio: 2, tile: TileID(z: z, x: x % (1 << z), y: 5 + x / (1 << z)))
                items.append(tileItem(retina, Data(repeating: 1, count: size / 3 + 1)))
                items.append(tileItem(key(z, x % (1 << z), 9 + x / (1 << z), template: template + "?v=2"), Data(count: 9_000)))
            }
            items.append(tileItem(key(z, (1 << z) - 1, (1 << z) - 1), Data()))
        }
        try store.write(items)
        let means = try store.meanTileSizes(urlTemplate: template, zooms: 4...7)
        let sqlite = try raw().query("""
            SELECT z, avg(length(data)) FROM tiles WHERE url_template = ?1 AND z BETWEEN 4 AND 7 GROUP BY z
            """, [.text(template)]) { (Int($0.int64(0)), $0.double(1)) }
        XCTAssertEqual(sqlite.map(\.0), [4, 5, 6])
        XCTAssertEqual(means, Dictionary(uniqueKeysWithValues: sqlite))
        XCTAssertTrue(sqlite.contains { $0.1 != $0.1.rounded() }, "the means must have fractions for the comparison to mean much")
    }

    func testColumnScansAreServedByTheKeyIndexAndTheLinkIndexAlone() throws {
        // The plans of the exact statements: one seek of the tiles' key index (covering: no table
        // read) and, for links, one probe of region_tiles' (region_id, tile_id) index; no scan
        // and no sort, so a column costs its rows whatever the store holds.
        func plan(_ sql: String) throws -> [String] {
            try store.db.query("EXPLAIN QUERY PLAN " + sql) { $0.text(3) }
        }
        XCTAssertEqual(try plan(OfflineDatabase.storedColumnSQL), [
            "SEARCH tiles USING COVERING INDEX sqlite_autoindex_tiles_1 (url_template=? AND pixel_ratio=? AND z=? AND x=? AND y>? AND y<?)",
        ])
        XCTAssertEqual(try plan(OfflineDatabase.linkedColumnSQL), [
            "SEARCH t USING COVERING INDEX sqlite_autoindex_tiles_1 (url_template=? AND pixel_ratio=? AND z=? AND x=? AND y>? AND y<?)",
            "CORRELATED SCALAR SUBQUERY 1",
            "SEARCH rt USING COVERING INDEX sqlite_autoindex_region_tiles_1 (region_id=? AND tile_id=?)",
        ])
        XCTAssertEqual(try plan(OfflineDatabase.tileLinkCountSQL), [
            "SEARCH region_tiles USING COVERING INDEX sqlite_autoindex_region_tiles_1 (region_id=?)",
        ], "a region's links are counted in the link index alone")
    }
}
