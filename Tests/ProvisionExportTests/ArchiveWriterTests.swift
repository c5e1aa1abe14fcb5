import Foundation
import ProvisionCodecs
import ProvisionExport
import ProvisionStore
import TileMath
import XCTest

/// The PMTiles and MBTiles writers of `export`: every tile found again with its bytes, equal
/// contents stored once, runs and leaf directories, TMS rows, equal bytes for equal input,
/// nothing left behind when abandoned. (Export tests read the same archives with the
/// `pmtiles` package, sqlite3 and GDAL.)
final class ArchiveWriterTests: XCTestCase {
    /// A tile's bytes: one of `kinds` distinct contents, chosen by `i`.
    private func tile(_ i: Int, kinds: Int = 97) throws -> ArchiveTile {
        try ArchiveTile(stored: Data("content \(i % kinds) ".utf8 + Data(repeating: UInt8(truncatingIfNeeded: i % kinds), count: 40)),
                        compressed: false, gzip: false)
    }

    private func readPMTiles(_ url: URL) throws -> (PMTiles.Header, [PMTiles.Entry], Data, Int) {
        let data = try Data(contentsOf: url)
        let header = try PMTiles.Header(decoding: data)
        func slice(_ offset: UInt64, _ length: UInt64) -> Data { data.subdata(in: Int(offset)..<Int(offset + length)) }
        let root = try PMTiles.decodeDirectory(slice(header.rootDirectoryOffset, header.rootDirectoryLength), compression: .gzip)
        var entries: [PMTiles.Entry] = []
        var leaves = 0
        for entry in root {
            if entry.isLeaf {
                leaves += 1
                entries += try PMTiles.decodeDirectory(slice(header.leafDirectoriesOffset + entry.offset, UInt64(entry.length)),
                                                       compression: .gzip)
            } else {
                entries.append(entry)
            }
        }
        return (header, entries, slice(header.tileDataOffset, header.tileDataLength), leaves)
    }

    func testPMTilesFindEveryTileThroughLeavesWithRunsAndSharedContents() throws {
        let directory = try makeTemporaryDirectory(self)
        let url = directory.appendingPathComponent("big.pmtiles")
        let writer = try PMTilesArchiveWriter(destination: url)
        // 60,000 tiles: ids with gaps; tiles 1000..<1100 all equal (one run); the rest pick one of
        // 4,999 contents at random (seeded), so offsets jump and the directory needs leaves.
        var expected: [UInt64: Data] = [:]
        var id: UInt64 = 5
        var seed: UInt64 = 42
        for i in 0..<60_000 {
            id += UInt64(i % 3 == 0 ? 2 : 1)
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let tile = try (1000..<1100).contains(i) ? self.tile(0, kinds: 1) : self.tile(Int(seed >> 33), kinds: 4999)
            try writer.add(tileID: id, tile: tile)
            expected[id] = tile.bytes
        }
        var template = PMTiles.Header()
        template.tileType = .mvt
        template.tileCompression = .none
        template.minZoom = 3
        template.maxZoom = 9
        let summary = try writer.finish(header: template, metadata: Data(#"{"name":"big"}"#.utf8))
        let (header, entries, data, leaves) = try readPMTiles(url)
        XCTAssertGreaterThan(leaves, 1, "60,000 entries do not fit a 16 KiB root")
        XCTAssertEqual(summary.leafCount, leaves)
        XCTAssertEqual(summary.tileCount, 60_000)
        XCTAssertEqual(header.addressedTilesCount, 60_000)
        XCTAssertEqual(summary.contentCount, Set(expected.values).count, "each distinct content once")
        XCTAssertEqual(header.tileContentsCount, UInt64(Set(expected.values).count))
        XCTAssertEqual(Int(header.tileEntriesCount), entries.count)
        XCTAssertLessThan(entries.count, 60_000, "the run of equal tiles shares entries")
        XCTAssertTrue(header.clustered)
        XCTAssertEqual(header.internalCompression, .gzip)
        XCTAssertEqual(header.tileType, .mvt)
        XCTAssertEqual(header.minZoom, 3)
        XCTAssertEqual(UInt64(try Data(contentsOf: url).count), summary.byteCount)
        var found = 0
        for (id, bytes) in expected {
            let entry = try XCTUnwrap(PMTiles.find(id, in: entries), "tile \(id)")
            XCTAssertEqual(data.subdata(in: Int(entry.offset)..<Int(entry.offset) + Int(entry.length)), bytes, "tile \(id)")
            found += 1
        }
        XCTAssertEqual(found, 60_000)
        XCTAssertNil(PMTiles.find(10, in: entries), "a gap has no tile")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["big.pmtiles"], "no temporary file left")
    }

    func testPMTilesRefuseDescendingIdsAndLeaveNothingWhenAbandoned() throws {
        let directory = try makeTemporaryDirectory(self)
        let writer = try PMTilesArchiveWriter(destination: directory.appendingPathComponent("a.pmtiles"))
        try writer.add(tileID: 10, tile: tile(1))
        XCTAssertThrowsError(try writer.add(tileID: 10, tile: tile(2)))
        XCTAssertThrowsError(try writer.add(tileID: 3, tile: tile(2)))
        writer.abandon()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }

    func testEqualInputGivesEqualBytes() throws {
        let directory = try makeTemporaryDirectory(self)
        func write(_ name: String) throws -> (Data, Data) {
            let pmtiles = try PMTilesArchiveWriter(destination: directory.appendingPathComponent("\(name).pmtiles"))
            let mbtiles = try MBTilesArchiveWriter(destination: directory.appendingPathComponent("\(name).mbtiles"))
            for i in 0..<3000 {
                let tile = try ArchiveTile(stored: try Zlib.deflate(Data("tile \(i % 50)".utf8)), compressed: true, gzip: true)
                try pmtiles.add(tileID: TileID.firstPMTilesID(zoom: 12) + UInt64(i), tile: tile)
                try mbtiles.add(TileID(z: 12, x: i / 64, y: i % 64), tile: tile)
            }
            _ = try pmtiles.finish(header: PMTiles.Header(), metadata: Data("{}".utf8))
            _ = try mbtiles.finish(metadata: [("name", "n"), ("format", "pbf")])
            return (try Data(contentsOf: directory.appendingPathComponent("\(name).pmtiles")),
                    try Data(contentsOf: directory.appendingPathComponent("\(name).mbtiles")))
        }
        let first = try write("a"), second = try write("b")
        XCTAssertEqual(first.0, second.0, "PMTiles")
        XCTAssertEqual(first.1, second.1, "MBTiles")
    }

    func testMBTilesStoreEachContentOnceWithTMSRows() throws {
        let directory = try makeTemporaryDirectory(self)
        let url = directory.appendingPathComponent("a.mbtiles")
        let writer = try MBTilesArchiveWriter(destination: url)
        let payloads = ["a", "b", "a", "c", "a"].map { Data($0.utf8) }
        for (i, payload) in payloads.enumerated() {
            try writer.add(TileID(z: 3, x: i, y: 1), tile: ArchiveTile(stored: payload, compressed: false, gzip: true))
        }
        let summary = try writer.finish(metadata: [("name", "test"), ("format", "pbf"), ("minzoom", "3")])
        XCTAssertEqual(summary.tileCount, 5)
        XCTAssertEqual(summary.contentCount, 3)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["a.mbtiles"])

        let archive = try MBTilesArchive(url: url)
        defer { try? archive.close() }
        XCTAssertEqual(try archive.metadata(), ["name": "test", "format": "pbf", "minzoom": "3"])
        for (i, payload) in payloads.enumerated() {
            let stored = try XCTUnwrap(archive.tileData(TileID(z: 3, x: i, y: 1)), "tile \(i)")
            XCTAssertTrue(Gzip.isGzip(stored))
            XCTAssertEqual(try Gzip.inflate(stored), payload)
        }
        XCTAssertNil(try archive.tileData(TileID(z: 3, x: 0, y: 6)), "row 6 of zoom 3 is XYZ row 1 only after the flip")
        let db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false))
        XCTAssertEqual(try db.queryFirst("SELECT count(*) FROM images") { $0.int64(0) }, 3)
        XCTAssertEqual(try db.queryFirst("SELECT tile_row FROM map WHERE tile_column = 0") { $0.int64(0) }, 6, "TMS row")
        XCTAssertEqual(try db.queryFirst("PRAGMA application_id") { $0.int64(0) }, Int64(MBTilesArchiveWriter.applicationID))
        XCTAssertEqual(try db.queryFirst("PRAGMA journal_mode") { $0.text(0) }, "delete")
    }

    func testATileStoredAsZlibIsRewrappedNotRecompressed() throws {
        let payload = Data((0..<5000).map { UInt8($0 % 251) })
        let zlib = try Zlib.deflate(payload)
        let tile = try ArchiveTile(stored: zlib, compressed: true, gzip: true)
        XCTAssertEqual(tile.payload, payload)
        XCTAssertEqual(tile.bytes, Gzip.member(fromZlib: zlib, payload: payload))
        XCTAssertEqual(try ArchiveTile(stored: zlib, compressed: true, gzip: false).bytes, payload, "images: the payload")
        XCTAssertEqual(tile.key, try ArchiveTile(stored: payload, compressed: false, gzip: true).key, "keys are of the payload")
        XCTAssertThrowsError(try ArchiveTile(stored: Data([0x78, 0x9c, 1, 2]), compressed: true, gzip: true))
    }
}
