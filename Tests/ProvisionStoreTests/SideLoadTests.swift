import Foundation
@testable import ProvisionStore
import XCTest

/// MapLibre's side-load rule (`OfflineDatabase.mergeSideDatabases`) on small hand-built
/// databases: newer replaces, older, equal and NULL keep, equal regions merge, others are added,
/// links follow, ambient rows stay behind, and a failure anywhere leaves the store unchanged.
final class SideLoadTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
    }

    private func database(_ name: String) throws -> OfflineDatabase {
        try OfflineDatabase(url: directory.appendingPathComponent(name), epoch: 100)
    }

    private func region(_ database: OfflineDatabase, _ definition: String = #"{"style_url":"s"}"#,
                        _ description: String? = "a") throws -> Int64 {
        try database.insertRegion(definition: Data(definition.utf8), description: description.map { Data($0.utf8) })
    }

    /// Adds (or finds) tile z/x/y with `modified` and `data`, linked to `region` unless nil.
    private func tile(_ database: OfflineDatabase, _ z: Int, _ x: Int, _ y: Int, modified: Int64?, data: String,
                      region: Int64?) throws {
        try database.db.run("""
            INSERT INTO tiles (url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed, accessed, must_revalidate)
            VALUES ('t/{z}/{x}/{y}', 1, ?1, ?2, ?3, NULL, ?4, NULL, ?5, 0, 7, 0)
            """, [.int(Int64(z)), .int(Int64(x)), .int(Int64(y)), modified.map { .int($0) } ?? .null, .blob(Data(data.utf8))])
        if let region {
            try database.db.run("""
                INSERT INTO region_tiles (region_id, tile_id)
                SELECT ?1, id FROM tiles WHERE z = ?2 AND x = ?3 AND y = ?4
                """, [.int(region), .int(Int64(z)), .int(Int64(x)), .int(Int64(y))])
        }
    }

    private func resource(_ database: OfflineDatabase, _ url: String, modified: Int64?, data: String, region: Int64?) throws {
        try database.db.run("""
            INSERT INTO resources (url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate)
            VALUES (?1, 1, NULL, ?2, NULL, ?3, 0, 7, 0)
            """, [.text(url), modified.map { .int($0) } ?? .null, .blob(Data(data.utf8))])
        if let region {
            try database.db.run("INSERT INTO region_resources (region_id, resource_id) SELECT ?1, id FROM resources WHERE url = ?2",
                                [.int(region), .text(url)])
        }
    }

    /// Every row of every table, as text, in id order.
    private func dump(_ database: OfflineDatabase) throws -> [String] {
        try database.db.query("SELECT 'R ' || id || ' ' || definition || ' ' || ifnull(hex(description), 'NULL') FROM regions ORDER BY id") {
            $0.text(0)
        } + database.db.query("""
            SELECT 'T ' || id || ' ' || z || '/' || x || '/' || y || ' ' || ifnull(modified, 'NULL') || ' ' || hex(data) || ' ' || accessed
            FROM tiles ORDER BY id
            """) { $0.text(0) }
            + database.db.query("SELECT 'S ' || id || ' ' || url || ' ' || ifnull(modified, 'NULL') || ' ' || hex(data) FROM resources ORDER BY id") {
                $0.text(0)
            }
            + database.db.query("SELECT 'L ' || region_id || ' ' || tile_id FROM region_tiles ORDER BY 1") { $0.text(0) }
            + database.db.query("SELECT 'M ' || region_id || ' ' || resource_id FROM region_resources ORDER BY 1") { $0.text(0) }
    }

    private func tileData(_ database: OfflineDatabase, _ z: Int, _ x: Int, _ y: Int) throws -> String? {
        try database.db.queryFirst("SELECT data FROM tiles WHERE z = ?1 AND x = ?2 AND y = ?3",
                                   [.int(Int64(z)), .int(Int64(x)), .int(Int64(y))]) { String(decoding: $0.data(0), as: UTF8.self) }
    }

    private func links(_ database: OfflineDatabase, region: Int64) throws -> [String] {
        try database.db.query("""
            SELECT t.z || '/' || t.x || '/' || t.y FROM region_tiles l JOIN tiles t ON t.id = l.tile_id
            WHERE l.region_id = ?1 ORDER BY t.z, t.x, t.y
            """, [.int(region)]) { $0.text(0) }
    }

    func testNewerReplacesInPlaceAndOlderOrEqualKeep() throws {
        let main = try database("main.db"), side = try database("side.db")
        let mainRegion = try region(main)
        try tile(main, 1, 0, 0, modified: 100, data: "old-newer", region: mainRegion)
        try tile(main, 1, 0, 1, modified: 100, data: "old-older", region: mainRegion)
        try tile(main, 1, 1, 0, modified: 100, data: "old-equal", region: mainRegion)
        try resource(main, "style", modified: 100, data: "old-style", region: mainRegion)
        try resource(main, "sprite", modified: 100, data: "old-sprite", region: mainRegion)
        let replacedID = try main.db.queryFirst("SELECT id FROM tiles WHERE z = 1 AND x = 0 AND y = 0") { $0.int64(0) }
        let sideRegion = try region(side)
        try tile(side, 1, 0, 0, modified: 200, data: "new-newer", region: sideRegion)
        try tile(side, 1, 0, 1, modified: 50, data: "new-older", region: sideRegion)
        try tile(side, 1, 1, 0, modified: 100, data: "new-equal", region: sideRegion)
        try tile(side, 1, 1, 1, modified: 10, data: "new-missing", region: sideRegion)
        try resource(side, "style", modified: 101, data: "new-style", region: sideRegion)
        try resource(side, "sprite", modified: 99, data: "new-sprite", region: sideRegion)

        let result = try main.mergeSideDatabases([side.path].map { URL(fileURLWithPath: $0) })

        XCTAssertEqual(result, [[SideLoadedRegion(sideRowID: sideRegion, rowID: mainRegion, isNew: false, description: Data("a".utf8),
                                                  tiles: SideLoadCounts(added: 1, replaced: 1, kept: 2),
                                                  resources: SideLoadCounts(added: 0, replaced: 1, kept: 1))]])
        XCTAssertEqual(try tileData(main, 1, 0, 0), "new-newer")
        XCTAssertEqual(try tileData(main, 1, 0, 1), "old-older")
        XCTAssertEqual(try tileData(main, 1, 1, 0), "old-equal", "an equal modified keeps the stored row")
        XCTAssertEqual(try tileData(main, 1, 1, 1), "new-missing")
        XCTAssertEqual(try main.db.queryFirst("SELECT id FROM tiles WHERE z = 1 AND x = 0 AND y = 0") { $0.int64(0) }, replacedID,
                       "a replaced row keeps its id")
        XCTAssertEqual(try main.db.queryFirst("SELECT modified FROM tiles WHERE z = 1 AND x = 0 AND y = 0") { $0.int64(0) }, 200)
        XCTAssertEqual(try main.resourceData(url: "style"), Data("new-style".utf8))
        XCTAssertEqual(try main.resourceData(url: "sprite"), Data("old-sprite".utf8))
        XCTAssertEqual(try main.regions().count, 1)
        XCTAssertEqual(try links(main, region: mainRegion), ["1/0/0", "1/0/1", "1/1/0", "1/1/1"], "the new tile is linked")
    }

    /// A NULL `modified` never compares newer (SQL `side.modified > main.modified`, MapLibre's
    /// rule): an incoming NULL never replaces, and a stored NULL is not replaced either.
    func testNullModifiedNeverWins() throws {
        let main = try database("main.db"), side = try database("side.db")
        let mainRegion = try region(main)
        try tile(main, 2, 0, 0, modified: 100, data: "stored-dated", region: mainRegion)
        try tile(main, 2, 0, 1, modified: nil, data: "stored-null", region: mainRegion)
        try tile(main, 2, 1, 0, modified: nil, data: "stored-both-null", region: mainRegion)
        let sideRegion = try region(side)
        try tile(side, 2, 0, 0, modified: nil, data: "incoming-null", region: sideRegion)
        try tile(side, 2, 0, 1, modified: 500, data: "incoming-dated", region: sideRegion)
        try tile(side, 2, 1, 0, modified: nil, data: "incoming-both-null", region: sideRegion)

        let result = try main.mergeSideDatabases([URL(fileURLWithPath: side.path)])

        XCTAssertEqual(result.first?.first?.tiles, SideLoadCounts(added: 0, replaced: 0, kept: 3))
        XCTAssertEqual(try tileData(main, 2, 0, 0), "stored-dated")
        XCTAssertEqual(try tileData(main, 2, 0, 1), "stored-null")
        XCTAssertEqual(try tileData(main, 2, 1, 0), "stored-both-null")
    }

    func testEqualRegionsMergeOthersAreAddedWithTheirLinks() throws {
        let main = try database("main.db"), side = try database("side.db")
        let stored = try region(main, #"{"style_url":"s"}"#, "a")
        let storedNull = try region(main, #"{"style_url":"n"}"#, nil)
        try tile(main, 3, 0, 0, modified: 100, data: "shared", region: stored)
        let sideEqual = try region(side, #"{"style_url":"s"}"#, "a")
        let sideOther = try region(side, #"{"style_url":"s"}"#, "b")
        let sideDuplicate = try region(side, #"{"style_url":"s"}"#, "b")
        let sideNull = try region(side, #"{"style_url":"n"}"#, nil)
        try tile(side, 3, 0, 0, modified: 100, data: "shared", region: sideEqual)
        try side.db.run("INSERT INTO region_tiles (region_id, tile_id) SELECT ?1, id FROM tiles", [.int(sideOther)])
        try tile(side, 3, 5, 5, modified: 100, data: "other", region: sideOther)
        try side.db.run("INSERT INTO region_tiles (region_id, tile_id) SELECT ?1, id FROM tiles", [.int(sideDuplicate)])
        try resource(side, "style", modified: 100, data: "style", region: sideNull)

        let result = try XCTUnwrap(try main.mergeSideDatabases([URL(fileURLWithPath: side.path)]).first)

        XCTAssertEqual(result.map(\.sideRowID), [sideEqual, sideOther, sideDuplicate, sideNull])
        XCTAssertEqual(result.map(\.isNew), [false, true, false, false], "b is new; its duplicate merges into it; NULL IS NULL")
        let added = result[1].rowID
        XCTAssertEqual(result.map(\.rowID), [stored, added, added, storedNull])
        XCTAssertEqual(result[1].tiles, SideLoadCounts(added: 1, replaced: 0, kept: 1))
        XCTAssertEqual(result[2].tiles, SideLoadCounts(added: 0, replaced: 0, kept: 2), "the duplicate finds both stored")
        XCTAssertEqual(result[3].resources, SideLoadCounts(added: 1, replaced: 0, kept: 0))
        XCTAssertEqual(try main.regions().map(\.description), [Data("a".utf8), nil, Data("b".utf8)])
        XCTAssertEqual(try links(main, region: stored), ["3/0/0"])
        XCTAssertEqual(try links(main, region: added), ["3/0/0", "3/5/5"])
        XCTAssertEqual(try main.db.queryFirst("SELECT count(*) FROM region_resources WHERE region_id = ?1", [.int(storedNull)]) {
            $0.int64(0)
        }, 1)
    }

    /// A store may hold equal regions twice (MapLibre never deduplicates its own); the side
    /// region's links go to each of them.
    func testARegionStoredTwiceGetsTheLinksInBoth() throws {
        let main = try database("main.db"), side = try database("side.db")
        let first = try region(main), second = try region(main)
        try tile(side, 6, 0, 0, modified: 100, data: "new", region: try region(side))

        let result = try main.mergeSideDatabases([URL(fileURLWithPath: side.path)])

        XCTAssertEqual(result.first?.map(\.rowID), [first])
        XCTAssertEqual(result.first?.map(\.isNew), [false])
        XCTAssertEqual(try links(main, region: first), ["6/0/0"])
        XCTAssertEqual(try links(main, region: second), ["6/0/0"])
    }

    func testRowsNoSideRegionLinksAreNotMerged() throws {
        let main = try database("main.db"), side = try database("side.db")
        _ = try region(main)
        let sideRegion = try region(side)
        try tile(side, 4, 0, 0, modified: 100, data: "linked", region: sideRegion)
        try tile(side, 4, 0, 1, modified: 100, data: "ambient", region: nil)
        try resource(side, "ambient", modified: 100, data: "ambient", region: nil)

        _ = try main.mergeSideDatabases([URL(fileURLWithPath: side.path)])

        XCTAssertEqual(try tileData(main, 4, 0, 0), "linked")
        XCTAssertNil(try tileData(main, 4, 0, 1))
        XCTAssertNil(try main.resourceData(url: "ambient"))
    }

    /// A failure in the middle (a trigger refuses the second database's tile) rolls back
    /// everything: the first database's regions and rows, and the second's first region.
    func testAFailureInTheMiddleLeavesTheStoreUnchanged() throws {
        let main = try database("main.db"), first = try database("first.db"), second = try database("second.db")
        let stored = try region(main)
        try tile(main, 5, 0, 0, modified: 100, data: "stored", region: stored)
        try resource(main, "style", modified: 100, data: "stored", region: stored)
        let a = try region(first, #"{"style_url":"s"}"#, "new")
        try tile(first, 5, 0, 0, modified: 900, data: "newer", region: a)
        try tile(first, 5, 0, 1, modified: 100, data: "added", region: a)
        try resource(first, "style", modified: 900, data: "newer", region: a)
        let b = try region(second, #"{"style_url":"s"}"#, "a")
        try tile(second, 5, 1, 1, modified: 100, data: "added", region: b)
        let c = try region(second, #"{"style_url":"s"}"#, "c")
        try tile(second, 9, 0, 0, modified: 100, data: "refused", region: c)
        try main.db.exec("CREATE TRIGGER refuse BEFORE INSERT ON tiles WHEN NEW.z = 9 BEGIN SELECT RAISE(ABORT, 'injected'); END")
        let before = try dump(main)

        XCTAssertThrowsError(try main.mergeSideDatabases([first.path, second.path].map { URL(fileURLWithPath: $0) })) { error in
            XCTAssertTrue(String(describing: error).contains("injected"), String(describing: error))
        }

        XCTAssertEqual(try dump(main), before)
        XCTAssertFalse(main.db.isInTransaction)
        try main.db.exec("DROP TRIGGER refuse")
        let result = try main.mergeSideDatabases([first.path, second.path].map { URL(fileURLWithPath: $0) })
        XCTAssertEqual(result.map { $0.map(\.isNew) }, [[true], [false, true]], "the databases are detached and can merge again")
        XCTAssertEqual(try tileData(main, 5, 0, 0), "newer")
    }

    func testSideDatabasesThatAreNotOfflineDatabasesAreRefused() throws {
        let text = directory.appendingPathComponent("notes.db")
        try Data("not a database at all, just some text that is long enough".utf8).write(to: text)
        let empty = directory.appendingPathComponent("empty.db")
        try Data().write(to: empty)
        let old = directory.appendingPathComponent("old.db")
        let oldDB = try SQLiteDatabase(path: old.path)
        try oldDB.exec("CREATE TABLE tiles (id INTEGER)")
        try oldDB.setUserVersion(5)
        try oldDB.close()
        let other = directory.appendingPathComponent("other.db")
        let otherDB = try SQLiteDatabase(path: other.path)
        try otherDB.exec("CREATE TABLE metadata (name TEXT, value TEXT)")
        try otherDB.setUserVersion(6)
        try otherDB.close()

        let expected: [(URL, StoreError.Code)] = [(text, .corrupt), (empty, .schemaMismatch), (old, .unsupportedVersion),
                                                 (other, .schemaMismatch)]
        for (url, code) in expected {
            XCTAssertThrowsError(try OfflineDatabase.checkSideDatabase(at: url), url.lastPathComponent) { error in
                XCTAssertEqual((error as? StoreError)?.code, code, "\(url.lastPathComponent): \(error)")
            }
        }
        let good = try database("good.db")
        try tile(good, 1, 0, 0, modified: 1, data: "x", region: try region(good))
        XCTAssertEqual(try OfflineDatabase.checkSideDatabase(at: URL(fileURLWithPath: good.path)), 1)
        XCTAssertEqual(try Data(contentsOf: text), Data("not a database at all, just some text that is long enough".utf8))
    }
}

extension SideLoadTests {
    /// An incoming row the check refuses is neither added nor replaces the stored row, and is
    /// named; rows the merge would keep anyway are not checked.
    func testInvalidIncomingRowsAreSkippedAndNamed() throws {
        let main = try database("main.db"), side = try database("side.db")
        let mainRegion = try region(main)
        try tile(main, 1, 0, 0, modified: 100, data: "good", region: mainRegion)
        try resource(main, "style", modified: 100, data: "good-style", region: mainRegion)
        let sideRegion = try region(side)
        try tile(side, 1, 0, 0, modified: 200, data: "bad", region: sideRegion)   // newer, invalid: skipped
        try tile(side, 1, 0, 1, modified: 200, data: "bad", region: sideRegion)   // new key, invalid: skipped
        try tile(side, 1, 1, 0, modified: 200, data: "fine", region: sideRegion)  // new key, valid: added
        try resource(side, "style", modified: 300, data: "bad", region: sideRegion)
        var checked: [String] = []
        let result = try main.mergeSideDatabases([URL(fileURLWithPath: side.path)]) { _, payload in
            let text = String(decoding: payload, as: UTF8.self)
            checked.append(text)
            return text == "bad" ? "not a tile" : nil
        }
        XCTAssertEqual(result.regions[0][0].tiles, SideLoadCounts(added: 1, replaced: 0, kept: 0, skipped: 2))
        XCTAssertEqual(result.regions[0][0].resources, SideLoadCounts(added: 0, replaced: 0, kept: 0, skipped: 1))
        XCTAssertEqual(result.skipped[0].map(\.url), ["style", "t/1/0/0", "t/1/0/1"])
        XCTAssertEqual(result.skipped[0].map(\.reason), ["not a tile", "not a tile", "not a tile"])
        XCTAssertEqual(try tileData(main, 1, 0, 0), "good")
        XCTAssertNil(try tileData(main, 1, 0, 1))
        XCTAssertEqual(try tileData(main, 1, 1, 0), "fine")
        XCTAssertEqual(try links(main, region: mainRegion), ["1/0/0", "1/1/0"], "the store's own row stays linked")
        XCTAssertEqual(checked.count, 4)

        // Merged again: nothing left to skip but the same invalid rows, still named.
        let again = try main.mergeSideDatabases([URL(fileURLWithPath: side.path)]) { _, payload in
            String(decoding: payload, as: UTF8.self) == "bad" ? "not a tile" : nil
        }
        XCTAssertEqual(again.skipped[0].count, 3)
        XCTAssertEqual(again.regions[0][0].tiles, SideLoadCounts(added: 0, replaced: 0, kept: 1, skipped: 2))
    }
}
