import Foundation
import RoutingGraph
import XCTest

/// The extract writer and reader on made-up tiles: layout, atomic replacement, and each damage
/// to an extract as its own typed error naming the file.
final class TileExtractTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("extract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    let tiles: [GraphTileID: [UInt8]] = {
        var tiles: [GraphTileID: [UInt8]] = [:]
        for (level, index, size) in [(2, 807_141, 1_300), (0, 3_196, 600), (2, 807_140, 272), (1, 50_585, 513)] {
            let tile = GraphTileID(level: GraphLevel(level)!, index: index)!
            tiles[tile] = GraphTileHeaderTests.tile(tile, size: size)
        }
        return tiles
    }()

    func write(_ name: String, tiles: [GraphTileID: [UInt8]]? = nil) throws -> URL {
        let url = scratch.appendingPathComponent(name)
        let tiles = tiles ?? self.tiles
        try TileExtractWriter.write(to: url, sizes: tiles.mapValues(\.count)) { tiles[$0] ?? [] }
        return url
    }

    func testLayoutIndexFirstThenTilesInLevelThenIndexOrder() throws {
        let url = try write("x.tar")
        let data = try Data(contentsOf: url)
        let entries = try XCTUnwrap(TileExtractEntry.decode(Array(data[512..<(512 + 64)])))
        XCTAssertEqual(entries.map { GraphTileID(graphID: UInt64($0.graphID))?.path },
                       ["0/003/196.gph", "1/050/585.gph", "2/000/807/140.gph", "2/000/807/141.gph"])
        // index.bin: header + 64 bytes padded to 512; each tile: header + body padded to whole blocks.
        XCTAssertEqual(entries.map(\.offset), [1_536, 3_072, 4_608, 5_632])
        XCTAssertEqual(entries.map(\.size), [600, 513, 272, 1_300])
        XCTAssertEqual(data.count, 10_240)
        XCTAssertEqual(try TileExtractWriter.layout(sizes: tiles.mapValues(\.count)), entries)
        let reader = try TileExtractReader(url: url)
        for (tile, bytes) in tiles { XCTAssertEqual(try reader.read(tile), bytes) }
        XCTAssertThrowsError(try reader.read(GraphTileID(level: GraphLevel(2)!, index: 5)!)) { error in
            XCTAssertEqual(error as? TileExtractError, .tileAbsent(path: url.path, tile: GraphTileID(level: GraphLevel(2)!, index: 5)!))
        }
    }

    /// A body of another size than planned stops the write; the extract already there stays whole
    /// and no temporary file is left behind.
    func testAFailedWriteLeavesThePreviousExtract() throws {
        let url = try write("x.tar")
        let before = try Data(contentsOf: url)
        let tile = tiles.keys.sorted()[1]
        XCTAssertThrowsError(try TileExtractWriter.write(to: url, sizes: tiles.mapValues(\.count)) { asked in
            asked == tile ? Array((self.tiles[asked] ?? []).dropLast()) : self.tiles[asked] ?? []
        }) { error in
            XCTAssertEqual(error as? TileExtractError, .bodySizeMismatch(tile: tile, planned: 513, given: 512))
        }
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path), ["x.tar"])
    }

    /// Overwrites `bytes` at `offset` of a copy of the extract and opens it.
    func damaged(_ offset: Int, _ bytes: [UInt8], truncateTo: Int? = nil) throws -> (URL, Result<TileExtractReader, Error>) {
        var data = try Data(contentsOf: try write("good.tar"))
        data.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        if let truncateTo { data = data.prefix(truncateTo) }
        let url = scratch.appendingPathComponent("damaged-\(UUID().uuidString).tar")
        try data.write(to: url)
        return (url, Result { try TileExtractReader(url: url) })
    }

    func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    func testADamagedIndexIsATypedErrorNamingTheFile() throws {
        let sorted = tiles.keys.sorted()
        let entry = { (n: Int) in 512 + 16 * n }
        let cases: [(String, Int, [UInt8], Int?, (String) -> TileExtractError)] = [
            ("an unknown level", entry(1) + 8, le(UInt32(7)), nil, { .entryUnknownTile(path: $0, entry: 1, graphID: 7) }),
            ("a duplicate", entry(1) + 8, le(UInt32(sorted[0].graphID)), nil, { .entryDuplicate(path: $0, tile: sorted[0]) }),
            ("past the file", entry(3), le(UInt64(1 << 40)), nil,
             { .entryPastEnd(path: $0, tile: sorted[3], end: (1 << 40) + 1_300, fileSize: 10_240) }),
            ("inside index.bin", entry(0), le(UInt64(512)), nil, { .entryOffsetInvalid(path: $0, tile: sorted[0], offset: 512) }),
            ("another tile's id", entry(0) + 8, le(UInt32(sorted[1].graphID)), nil,
             { .memberMismatch(path: $0, tile: sorted[1], found: "member \"0/003/196.gph\" of 600 bytes") }),
            ("a wrong size", entry(2) + 12, le(UInt32(271)), nil,
             { .memberMismatch(path: $0, tile: sorted[2], found: "member \"2/000/807/140.gph\" of 272 bytes") }),
            ("a truncated file", 0, [], 5_632 + 1_000, { .entryPastEnd(path: $0, tile: sorted[3], end: 5_632 + 1_300, fileSize: 6_632) }),
            ("not a tar", 0, Array("<html>".utf8), nil, { .notATar(path: $0) }),
        ]
        for (name, offset, bytes, truncate, expected) in cases {
            let (url, result) = try damaged(offset, bytes, truncateTo: truncate)
            XCTAssertThrowsError(try result.get(), name) { error in
                XCTAssertEqual(error as? TileExtractError, expected(url.path), name)
                XCTAssertTrue("\(error)".hasPrefix(url.path + ": "), "\(error)")
            }
        }
    }

    func testAnIndexOfTheWrongSizeOrAnotherFirstMemberIsRefused() throws {
        // index.bin's size field (octal at 124) set to 63 bytes, checksum fixed by rewriting the header.
        var data = try Data(contentsOf: try write("good.tar"))
        var header = Array(data[0..<512])
        header.replaceSubrange(124..<136, with: Array("00000000077\u{0}".utf8))
        for i in 148..<156 { header[i] = 0x20 }
        let sum = String(header.reduce(0) { $0 + Int($1) }, radix: 8)
        header.replaceSubrange(148..<156, with: Array((String(repeating: "0", count: 6 - sum.count) + sum + "\u{0} ").utf8))
        data.replaceSubrange(0..<512, with: header)
        let odd = scratch.appendingPathComponent("odd.tar")
        try data.write(to: odd)
        XCTAssertThrowsError(try TileExtractReader(url: odd)) { error in
            XCTAssertEqual(error as? TileExtractError, .indexSizeInvalid(path: odd.path, byteCount: 63))
        }
        header.replaceSubrange(0..<9, with: Array("index.bim".utf8))
        for i in 148..<156 { header[i] = 0x20 }
        let sum2 = String(header.reduce(0) { $0 + Int($1) }, radix: 8)
        header.replaceSubrange(148..<156, with: Array((String(repeating: "0", count: 6 - sum2.count) + sum2 + "\u{0} ").utf8))
        data.replaceSubrange(0..<512, with: header)
        try data.write(to: odd)
        XCTAssertThrowsError(try TileExtractReader(url: odd)) { error in
            XCTAssertEqual(error as? TileExtractError, .firstMemberNotIndex(path: odd.path, found: "index.bim"))
        }
    }

    /// A tile whose bytes were cut (with an index that agrees) or whose version is not text opens,
    /// but its checked read fails with the header's typed error.
    func testTruncatedTilesAndWrongVersionsFailTheCheckedRead() throws {
        let sorted = tiles.keys.sorted()
        var bad = tiles
        bad[sorted[3]] = Array((tiles[sorted[3]] ?? []).prefix(1_000))
        var version = tiles[sorted[0]] ?? []
        version.replaceSubrange(16..<22, with: [0x33, 0x2E, 0x39, 0xC3, 0x28, 0x00])
        bad[sorted[0]] = version
        let reader = try TileExtractReader(url: try write("bad.tar", tiles: bad))
        XCTAssertThrowsError(try reader.readChecked(sorted[3])) { error in
            XCTAssertEqual(error as? GraphTileHeaderError, .sizeMismatch(endOffset: 1_300, byteCount: 1_000))
        }
        XCTAssertThrowsError(try reader.readChecked(sorted[0])) { error in
            guard case .versionNotText = error as? GraphTileHeaderError else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try reader.readChecked(sorted[1]))
    }
}
