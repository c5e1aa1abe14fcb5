import Foundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// What each region's content takes as stored: the sharing of rows between regions and the
/// stored sizes the planner reads.
final class ContentSharingTests: XCTestCase {
    private let template = "https://tiles.example.com/v/{z}/{x}/{y}.pbf"
    private var url: URL!
    private var store: OfflineDatabase!

    override func setUpWithError() throws {
        url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        store = try OfflineDatabase(url: url, epoch: 1_700_000_000)
    }

    override func tearDownWithError() throws {
        try store?.close()
    }

    private func key(_ x: Int, z: Int = 5, ratio: Int = 1) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: ratio, tile: TileID(z: z, x: x, y: 1))
    }

    private func tile(_ key: TileKey, _ data: Data) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: "https://tiles.example.com/v/\(key.tile.z)/\(key.tile.x)/1.pbf?r=\(key.pixelRatio)",
                                          kind: .tile, tileKey: key, tile: key.tile),
                    body: FetchedBody(data: data))
    }

    private func resource(_ url: String, _ kind: ResourceKind, _ data: Data) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: url, kind: kind), body: FetchedBody(data: data))
    }

    /// Three regions: tiles 0–2 only A's, 3 A's and B's, 4 everyone's, 5 empty ("no content")
    /// and only C's, 6 no one's; a style all link, a glyph range A and C link (compressible, so
    /// stored deflated), a sprite only B links and an unlinked image.
    private func fill() throws -> (a: Int64, b: Int64, c: Int64, glyphBytes: Int64) {
        let a = try store.insertRegion(definition: Data("{\"a\":1}".utf8), description: nil)
        let b = try store.insertRegion(definition: Data("{\"b\":1}".utf8), description: nil)
        let c = try store.insertRegion(definition: Data("{\"c\":1}".utf8), description: nil)
        let glyphs = Data(repeating: 7, count: 50_000)
        try store.write((0..<5).map { tile(key($0), randomBytes(1_000 * ($0 + 1))) } + [
            tile(key(5), Data()), tile(key(6), randomBytes(9_999)),
            resource("https://e.com/style.json", .style, randomBytes(300)),
            resource("https://e.com/fonts/0-255.pbf", .glyphs, glyphs),
            resource("https://e.com/sprite.png", .spriteImage, randomBytes(700)),
            resource("https://e.com/icon.png", .image, randomBytes(50)),
        ])
        try store.linkTiles((0...4).map { key($0) }, toRegion: a)
        try store.linkTiles([key(3), key(4)], toRegion: b)
        try store.linkTiles([key(4), key(5)], toRegion: c)
        try store.linkResources(["https://e.com/style.json", "https://e.com/fonts/0-255.pbf"], toRegion: a)
        try store.linkResources(["https://e.com/style.json", "https://e.com/sprite.png"], toRegion: b)
        try store.linkResources(["https://e.com/style.json", "https://e.com/fonts/0-255.pbf"], toRegion: c)
        let deflated = try store.storedResourceSizes(among: ["https://e.com/fonts/0-255.pbf"]).values.first ?? 0
        XCTAssertGreaterThan(deflated, 0)
        XCTAssertLessThan(deflated, Int64(glyphs.count), "the glyph range is stored compressed")
        return (a, b, c, deflated)
    }

    func testLinkedRowsAreSummedPerSetOfRegionsAsStored() throws {
        let (a, b, c, glyphBytes) = try fill()
        let sharing = try store.contentSharing()
        XCTAssertEqual(sharing.amounts, [
            .init(members: [a], kind: .tile): ContentAmount(tiles: 3, bytes: 6_000),
            .init(members: [a, b], kind: .tile): ContentAmount(tiles: 1, bytes: 4_000),
            .init(members: [a, b, c], kind: .tile): ContentAmount(tiles: 1, bytes: 5_000),
            .init(members: [c], kind: .tile): ContentAmount(tiles: 1, bytes: 0),
            .init(members: [a, b, c], kind: .style): ContentAmount(resources: 1, bytes: 300),
            .init(members: [a, c], kind: .glyphs): ContentAmount(resources: 1, bytes: glyphBytes),
            .init(members: [b], kind: .spriteImage): ContentAmount(resources: 1, bytes: 700),
        ])
        // Everything linked, and the unlinked rows (tile 6, the image) beside it, is the file's content.
        let summary = try store.summary()
        XCTAssertEqual(sharing.total.bytes + 9_999 + 50, summary.tileBytes + summary.resourceBytes)
    }

    /// Removing a region and pruning frees exactly its marginal bytes, as the footprint says.
    func testDeletingARegionFreesExactlyItsMarginalBytes() throws {
        let (a, b, c, _) = try fill()
        _ = try store.pruneOrphans()
        let names: [Int64: Footprint.Member] = [a: .init(region: "a", stylePack: "p", key: "a/p", rowID: a),
                                                b: .init(region: "b", stylePack: "p", key: "b/p", rowID: b),
                                                c: .init(region: "c", stylePack: "q", key: "c/q", rowID: c)]
        for (row, region) in [(a, "a"), (b, "b"), (c, "c")] {
            let footprint = Footprint(sharing: try store.contentSharing(), members: names)
            let marginal = footprint.regions.first { $0.id == region }?.entry.marginal
            let before = try storedBytes()
            try store.deleteRegions([row])
            _ = try store.pruneOrphans()
            XCTAssertEqual(before - (try storedBytes()), marginal?.bytes, "region \(region)")
            XCTAssertEqual(try store.contentSharing().total.bytes, try storedBytes())
        }
    }

    private func storedBytes() throws -> Int64 {
        let summary = try store.summary()
        return summary.tileBytes + summary.resourceBytes
    }

    func testStoredLengthsForThePlanner() throws {
        let (_, _, _, glyphBytes) = try fill()
        try store.write([tile(key(0, ratio: 2), randomBytes(123)), tile(key(3, z: 6), randomBytes(77))])
        func lengths(x: Int, z: Int = 5, ratio: Int = 1, rows: Range<Int> = 0..<32) throws -> [[Int64]] {
            var out: [[Int64]] = []
            try store.forEachStoredTileLength(in: StoredTileColumn(urlTemplate: template, pixelRatio: ratio, zoom: z, x: x,
                                                                   rows: rows)) { out.append([Int64($0), $1]) }
            return out
        }
        XCTAssertEqual(try lengths(x: 0), [[1, 1_000]])
        XCTAssertEqual(try lengths(x: 5), [[1, 0]], "an empty tile is stored, with no bytes")
        XCTAssertEqual(try lengths(x: 0, ratio: 2), [[1, 123]])
        XCTAssertEqual(try lengths(x: 3, z: 6), [[1, 77]])
        XCTAssertEqual(try lengths(x: 0, rows: 2..<32), [])
        XCTAssertEqual(try lengths(x: 7), [])
        XCTAssertEqual(try store.storedResourceSizes(among: ["https://e.com/fonts/0-255.pbf", "https://e.com/none"]),
                       ["https://e.com/fonts/0-255.pbf": glyphBytes])
        XCTAssertEqual(try store.meanResourceSize(kind: .spriteImage), 700)
        XCTAssertNil(try store.meanResourceSize(kind: .spriteJSON))
    }

    /// The sharing queries stream in content order: no temporary B-tree, so memory does not
    /// grow with the number of tiles; a column's lengths are one seek of the key index.
    func testTheQueriesStreamWithoutSorting() throws {
        func explain(_ sql: String, _ values: [SQLiteValue] = []) throws -> String {
            try store.db.query("EXPLAIN QUERY PLAN " + sql, values) { $0.text(3) }.joined(separator: "\n")
        }
        let tiles = try explain(OfflineDatabase.tileSharingSQL)
        XCTAssertFalse(tiles.contains("TEMP B-TREE"), tiles)
        XCTAssertTrue(tiles.contains("SCAN rt USING INDEX region_tiles_tile_id"), tiles)
        let resources = try explain(OfflineDatabase.resourceSharingSQL)
        XCTAssertFalse(resources.contains("TEMP B-TREE"), resources)
        let column = try explain(OfflineDatabase.storedColumnLengthSQL, [.text(template), .int(1), .int(5), .int(0), .int(0), .int(9)])
        XCTAssertEqual(column, "SEARCH tiles USING INDEX sqlite_autoindex_tiles_1 (url_template=? AND pixel_ratio=? AND z=? AND x=? AND y>? AND y<?)",
                       "one seek of the key index, rows in y order")
    }
}
