import Foundation
import TileMath
import XCTest
@testable import ProvisionStore

final class MBTilesArchiveTests: XCTestCase {
    private func makeArchive(tilesAsView: Bool = false, metadata: Bool = true) throws -> URL {
        let url = try makeTemporaryDirectory(self).appendingPathComponent("t.mbtiles")
        let db = try SQLiteDatabase(path: url.path)
        if tilesAsView {
            try db.exec("""
                CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
                CREATE TABLE images (tile_id TEXT, tile_data BLOB);
                CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
                  map.tile_row AS tile_row, images.tile_data AS tile_data
                  FROM map JOIN images ON images.tile_id = map.tile_id;
                """)
        } else {
            try db.exec("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
        }
        if metadata {
            try db.exec("CREATE TABLE metadata (name TEXT, value TEXT)")
            try db.run("INSERT INTO metadata VALUES ('format', 'pbf'), ('minzoom', '0')")
        }
        // TMS row 5 at z3 is XYZ row 2 (reference §3: XYZ (3,1,2) is stored as y=5).
        let rows: [(Int64, Int64, Int64, String)] = [(3, 1, 5, "z3x1y2"), (3, 1, 2, "z3x1y5"), (0, 0, 0, "root")]
        for (z, x, tmsRow, payload) in rows {
            if tilesAsView {
                try db.run("INSERT INTO map VALUES (?1, ?2, ?3, ?4)", [.int(z), .int(x), .int(tmsRow), .text(payload)])
                try db.run("INSERT INTO images VALUES (?1, ?2)", [.text(payload), .blob(Data(payload.utf8))])
            } else {
                try db.run("INSERT INTO tiles VALUES (?1, ?2, ?3, ?4)", [.int(z), .int(x), .int(tmsRow), .blob(Data(payload.utf8))])
            }
        }
        try db.close()
        return url
    }

    func testFlipsXYZRowsToTMS() throws {
        for view in [false, true] {
            let archive = try MBTilesArchive(url: try makeArchive(tilesAsView: view))
            XCTAssertEqual(try archive.tileData(TileID(z: 3, x: 1, y: 2)), Data("z3x1y2".utf8))
            XCTAssertEqual(try archive.tileData(TileID(z: 3, x: 1, y: 5)), Data("z3x1y5".utf8))
            XCTAssertEqual(try archive.tileData(TileID(z: 0, x: 0, y: 0)), Data("root".utf8))
            XCTAssertNil(try archive.tileData(TileID(z: 3, x: 2, y: 2)))
            XCTAssertNil(try archive.tileData(TileID(z: 3, x: 1, y: 9)), "out of range")
            XCTAssertEqual(try archive.metadata(), ["format": "pbf", "minzoom": "0"])
        }
    }

    func testOpensReadOnlyWithoutTouchingTheFile() throws {
        let url = try makeArchive()
        let before = try Data(contentsOf: url)
        let archive = try MBTilesArchive(url: url)
        _ = try archive.tileData(TileID(z: 0, x: 0, y: 0))
        try archive.close()
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path), ["t.mbtiles"])
    }

    func testMissingTablesAndFilesAreClearErrors() throws {
        let noMetadata = try MBTilesArchive(url: try makeArchive(metadata: false))
        XCTAssertThrowsError(try noMetadata.metadata()) {
            XCTAssertTrue("\($0)".contains("no metadata table"), "\($0)")
        }
        let dir = try makeTemporaryDirectory(self)
        let empty = dir.appendingPathComponent("empty.mbtiles")
        let db = try SQLiteDatabase(path: empty.path)
        try db.exec("CREATE TABLE other (x)")
        try db.close()
        XCTAssertThrowsError(try MBTilesArchive(url: empty)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaMismatch)
            XCTAssertTrue("\(error)".contains("no tiles table"))
        }
        XCTAssertThrowsError(try MBTilesArchive(url: dir.appendingPathComponent("absent.mbtiles"))) {
            XCTAssertEqual(($0 as? StoreError)?.code, .cannotOpen)
        }
    }
}
