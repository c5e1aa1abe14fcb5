import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// Chunk sums find the row that changed, and only its chunk; one missing or unusable row costs only
/// itself; unusable rows are found by kind.
final class StoreDamageTests: XCTestCase {
    private static let template = "https://t.example.com/{z}/{x}/{y}.pbf"

    /// 2,500 tiles at z14 and 10 at z13: one chunk of 10, 39 of 64 and one of 4.
    private func build(at url: URL) throws -> ContentDigest {
        let writer = try NextStoreWriter(url: url, epoch: 1_700_000_000)
        _ = try writer.addRegion(definition: Data(#"{"bounds":[0,0,1,1]}"#.utf8), description: nil)
        for (z, count) in [(13, 10), (14, 2_500)] {
            for i in 0..<count {
                let key = TileKey(urlTemplate: Self.template, pixelRatio: 1, tile: TileID(z: z, x: i / 100, y: i % 100))
                _ = try writer.addTile(key, body: FetchedBody(data: Data("tile \(z) \(i)".utf8)))
            }
        }
        return try writer.finish()
    }

    private func tileWhere(_ z: Int, _ i: Int) -> String { "z = \(z) AND x = \(i / 100) AND y = \(i % 100)" }

    private func key(_ z: Int, _ i: Int) -> ChunkKey {
        .tile(TileKey(urlTemplate: Self.template, pixelRatio: 1, tile: TileID(z: z, x: i / 100, y: i % 100)))
    }

    func testAChangedRowFlagsOnlyItsChunkAndAMissingOrUnusableRowOnlyItself() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("offline.db")
        let digest = try build(at: url)
        XCTAssertEqual(digest.chunks.map(\.rows), [10] + Array(repeating: 64, count: 39) + [4], "chunks never cross a zoom")
        let store = try OfflineDatabase(url: url, epoch: 0)
        defer { try? store.close() }
        let noCheck: (ResourceKind, Data) -> String? = { _, _ in nil }
        XCTAssertTrue(try store.findDamage(lockChunks: digest.chunks, check: noCheck).isEmpty, "an untouched store")

        // Another tile's bytes in tile 1,500 of z14 (its chunk: 1,472..<1,536), tile 100 gone,
        // and tile 2,000 unusable.
        _ = try store.db.run("UPDATE tiles SET data = CAST('tile 14 7' AS BLOB) WHERE \(tileWhere(14, 1_500))")
        _ = try store.db.run("DELETE FROM tiles WHERE \(tileWhere(14, 100))")
        _ = try store.db.run("UPDATE tiles SET data = CAST('garbage' AS BLOB) WHERE \(tileWhere(14, 2_000))")
        let check: (ResourceKind, Data) -> String? = { _, payload in payload == Data("garbage".utf8) ? "not a tile" : nil }
        let damage = try store.findDamage(lockChunks: digest.chunks, check: check)
        XCTAssertEqual(damage.mismatchedChunks, 1, "only the chunk no single row explains")
        XCTAssertEqual(Set(damage.rows.filter { !$0.isUnusable }.map(\.key)), Set((1_472..<1_536).map { key(14, $0) }))
        XCTAssertEqual(damage.unusable.map(\.key), [key(14, 2_000)], "the unusable row alone: its chunk's other rows are checked")
        XCTAssertFalse(damage.rows.contains { $0.key == key(14, 101) }, "a missing row's neighbours are intact")
    }

    func testTwoDamagedRowsInOneChunkWidenToThatChunk() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("offline.db")
        let digest = try build(at: url)
        let store = try OfflineDatabase(url: url, epoch: 0)
        defer { try? store.close() }
        _ = try store.db.run("DELETE FROM tiles WHERE \(tileWhere(14, 130))")
        _ = try store.db.run("UPDATE tiles SET data = CAST('tile 14 7' AS BLOB) WHERE \(tileWhere(14, 140))")
        let damage = try store.findDamage(lockChunks: digest.chunks) { _, _ in nil }
        XCTAssertEqual(damage.rows.count, 63, "the chunk 128..<192 less its missing row")
        XCTAssertEqual(damage.mismatchedChunks, 1)
    }

    func testUnusableRowsAreFoundByTheirKindWithoutALock() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("offline.db")
        _ = try build(at: url)
        let store = try OfflineDatabase(url: url, epoch: 0)
        defer { try? store.close() }
        _ = try store.db.run("UPDATE tiles SET data = CAST('garbage' AS BLOB) WHERE \(tileWhere(13, 3))")
        _ = try store.db.run("UPDATE tiles SET data = CAST('xx' AS BLOB), compressed = 1 WHERE \(tileWhere(13, 4))")
        let damage = try store.findDamage(lockChunks: []) { _, payload in payload == Data("garbage".utf8) ? "not a tile" : nil }
        XCTAssertEqual(damage.rows.map(\.reason), ["not a tile", "its bytes do not inflate"])
        XCTAssertEqual(damage.checked, 2_510)
        try store.removeRows(damage.rows.map(\.key))
        XCTAssertEqual(try store.db.queryFirst("SELECT count(*) FROM tiles") { $0.int64(0) }, 2_508)
    }
}

extension StoreDamageTests {
    /// A version 4 lock's chunks (up to 1,024 rows, 16 hex digits of a SHA-256) still find a
    /// changed row, widening to its chunk as they did.
    func testAVersion4LocksChunksStillFindAChangedRow() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("offline.db")
        _ = try build(at: url)
        let store = try OfflineDatabase(url: url, epoch: 0)
        defer { try? store.close() }
        var legacy: [ChunkDigest] = []
        var hash = SHA256()
        var start: ChunkKey?
        var rows = 0
        func close() {
            if let start { legacy.append(ChunkDigest(start: start, rows: rows, digest: String(hash.finalizeHex().prefix(16)))) }
            start = nil
            rows = 0
        }
        try store.forEachHashedRow { row in
            if let first = start, rows == 1_024 || first.section != row.key.section { close() }
            if start == nil { start = row.key }
            hash.update(row.line)
            hash.update(row.bytes)
            rows += 1
        }
        close()
        XCTAssertEqual(legacy.map(\.rows), [10, 1_024, 1_024, 452])
        XCTAssertTrue(try store.findDamage(lockChunks: legacy) { _, _ in nil }.isEmpty)
        _ = try store.db.run("UPDATE tiles SET data = CAST('tile 14 7' AS BLOB) WHERE \(tileWhere(14, 1_500))")
        let damage = try store.findDamage(lockChunks: legacy) { _, _ in nil }
        XCTAssertEqual(damage.mismatchedChunks, 1)
        XCTAssertEqual(damage.rows.count, 1_024, "the whole second chunk of z14")
    }
}
