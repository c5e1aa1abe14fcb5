import Foundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// Every write path is one transaction: a failure injected in the middle of it (a temporary
/// trigger raising an error on a chosen row) leaves the file exactly as before.
final class WriteAtomicityTests: XCTestCase {
    private let template = "https://t.example.com/{z}/{x}/{y}.pbf"
    private var store: OfflineDatabase!
    private var regionA: Int64 = 0
    private var regionB: Int64 = 0

    override func setUpWithError() throws {
        let url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        store = try OfflineDatabase(url: url, epoch: 1_700_000_000)
        regionA = try store.insertRegion(definition: Data("{\"a\":1}".utf8), description: nil)
        regionB = try store.insertRegion(definition: Data("{\"b\":1}".utf8), description: Data("d".utf8))
        try store.write((0..<6).map { tile(key(10, $0, 1), "t\($0)") } + [
            resource("https://e.com/style.json", .style, "{}"), resource("https://e.com/sprite.json", .spriteJSON, "[]"),
            resource("https://e.com/orphan.json", .source, "{}"),
        ])
        try store.linkTiles((0..<4).map { key(10, $0, 1) }, toRegion: regionA)
        try store.linkTiles([key(10, 0, 1)], toRegion: regionB)
        try store.linkResources(["https://e.com/style.json", "https://e.com/sprite.json"], toRegion: regionA)
    }

    override func tearDownWithError() throws {
        try store?.close()
    }

    private func key(_ z: Int, _ x: Int, _ y: Int) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: z, x: x, y: y))
    }

    private func tile(_ key: TileKey, _ text: String) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: "https://t.example.com/\(key.tile.z)/\(key.tile.x)/\(key.tile.y).pbf",
                                          kind: .tile, tileKey: key, tile: key.tile),
                    body: FetchedBody(data: Data(text.utf8)))
    }

    private func resource(_ url: String, _ kind: ResourceKind, _ text: String) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: url, kind: kind), body: FetchedBody(data: Data(text.utf8)))
    }

    private func tileRowID(_ key: TileKey) throws -> Int64 {
        try XCTUnwrap(store.db.queryFirst(OfflineDatabase.tileIDSQL, OfflineDatabase.keyValues(key)) { $0.int64(0) })
    }

    private func resourceRowID(_ url: String) throws -> Int64 {
        try XCTUnwrap(store.db.queryFirst("SELECT id FROM resources WHERE url = ?1", [.text(url)]) { $0.int64(0) })
    }

    /// Every row of every table (AUTOINCREMENT counters included), each value `quote()`d.
    private func snapshot() throws -> [String] {
        var lines: [String] = []
        for table in ["regions", "resources", "tiles", "region_resources", "region_tiles", "sqlite_sequence"] {
            let columns = try store.db.query("SELECT name FROM pragma_table_info(?1) ORDER BY cid", [.text(table)]) {
                $0.text(0)
            }
            let select = columns.map { "quote(\"\($0)\")" }.joined(separator: " || ',' || ")
            lines += try store.db.query("SELECT '\(table): ' || \(select) FROM \"\(table)\" ORDER BY rowid") {
                $0.text(0)
            }
        }
        return lines
    }

    /// Runs `operation` with a temporary trigger raising on `trigger` (the part after
    /// `CREATE TEMP TRIGGER injected`), checks that nothing changed, then runs it again without
    /// the trigger and checks that it did change the store (so the failure was not vacuous).
    private func assertAtomic(_ name: String, trigger: String, _ operation: () throws -> Void,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try snapshot()
        try store.db.exec("CREATE TEMP TRIGGER injected \(trigger)")
        XCTAssertThrowsError(try operation(), name, file: file, line: line) { error in
            XCTAssertEqual((error as? StoreError)?.code, .sqlite, "\(name): \(error)", file: file, line: line)
            XCTAssertTrue("\(error)".contains("injected failure"), "\(name): \(error)", file: file, line: line)
        }
        XCTAssertFalse(store.db.isInTransaction, name, file: file, line: line)
        XCTAssertEqual(try snapshot(), before, "\(name) left partial changes", file: file, line: line)
        XCTAssertEqual(try store.integrityCheck(), [], name, file: file, line: line)
        try store.db.exec("DROP TRIGGER temp.injected")
        try operation()
        XCTAssertNotEqual(try snapshot(), before, "\(name) changes the store when nothing fails", file: file, line: line)
        XCTAssertEqual(try store.integrityCheck(), [], name, file: file, line: line)
    }

    private let raise = "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"

    func testWriteOfABatchWithAFailingLastInsert() throws {
        try assertAtomic("write", trigger: "BEFORE INSERT ON tiles WHEN NEW.z = 14 \(raise)") {
            try store.write([
                tile(key(10, 7, 1), "new"), tile(key(10, 0, 1), "rewritten"),
                resource("https://e.com/glyphs/0-255.pbf", .glyphs, "g"), resource("https://e.com/style.json", .style, "{1}"),
                tile(key(14, 0, 0), "the failing one"),
            ])
        }
    }

    func testWriteOfABatchWhoseRewriteFails() throws {
        try assertAtomic("write (update path)", trigger: "BEFORE UPDATE ON resources \(raise)") {
            try store.write([tile(key(11, 0, 0), "new"), resource("https://e.com/style.json", .style, "{2}")])
        }
    }

    func testLinkTiles() throws {
        let last = try tileRowID(key(10, 5, 1))
        try assertAtomic("linkTiles", trigger: "BEFORE INSERT ON region_tiles WHEN NEW.tile_id = \(last) \(raise)") {
            try store.linkTiles((1..<6).map { key(10, $0, 1) }, toRegion: regionB)
        }
    }

    func testUnlinkTiles() throws {
        let last = try tileRowID(key(10, 3, 1))
        try assertAtomic("unlinkTiles", trigger: "BEFORE DELETE ON region_tiles WHEN OLD.tile_id = \(last) \(raise)") {
            try store.unlinkTiles((0..<4).map { key(10, $0, 1) }, fromRegion: regionA)
        }
    }

    func testLinkResources() throws {
        let last = try resourceRowID("https://e.com/orphan.json")
        try assertAtomic("linkResources",
                         trigger: "BEFORE INSERT ON region_resources WHEN NEW.resource_id = \(last) \(raise)") {
            try store.linkResources(["https://e.com/style.json", "https://e.com/orphan.json"], toRegion: regionB)
        }
    }

    func testUnlinkResources() throws {
        let last = try resourceRowID("https://e.com/sprite.json")
        try assertAtomic("unlinkResources",
                         trigger: "BEFORE DELETE ON region_resources WHEN OLD.resource_id = \(last) \(raise)") {
            try store.unlinkResources(fromRegion: regionA, keeping: [])
        }
    }

    func testDeleteRegionsWithCascadingLinks() throws {
        try assertAtomic("deleteRegions", trigger: "BEFORE DELETE ON regions WHEN OLD.id = \(regionB) \(raise)") {
            try store.deleteRegions([regionA, regionB])
        }
    }

    func testPruneOrphansFailingOnResourcesAfterTilesWentFirst() throws {
        try assertAtomic("pruneOrphans", trigger: "BEFORE DELETE ON resources \(raise)") {
            let pruned = try store.pruneOrphans()
            XCTAssertEqual(pruned.tiles, 2)
            XCTAssertEqual(pruned.resources, 1)
        }
    }

    func testInsertAndUpdateRegion() throws {
        try assertAtomic("insertRegion", trigger: "AFTER INSERT ON regions \(raise)") {
            _ = try store.insertRegion(definition: Data("{\"c\":1}".utf8), description: nil)
        }
        try assertAtomic("updateRegion", trigger: "AFTER UPDATE ON regions \(raise)") {
            try store.updateRegion(regionA, definition: Data("{\"a\":2}".utf8), description: nil)
        }
    }

    func testBulkTuningKeepsTheRollbackJournal() throws {
        try store.tuneForBulkWrites()
        XCTAssertEqual(try store.db.queryFirst("PRAGMA journal_mode") { $0.text(0) }, "delete",
                       "a kill must leave a hot journal that the next open rolls back, never a WAL")
        XCTAssertEqual(try store.db.queryFirst("PRAGMA synchronous") { $0.int64(0) }, 1)
        try assertAtomic("write after tuneForBulkWrites", trigger: "BEFORE INSERT ON tiles WHEN NEW.z = 14 \(raise)") {
            try store.write([tile(key(12, 0, 0), "a"), tile(key(14, 0, 0), "b")])
        }
    }
}
