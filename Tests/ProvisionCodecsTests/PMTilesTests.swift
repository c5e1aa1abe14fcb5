import Foundation
import ProvisionCodecs
import TileMath
import XCTest

/// The PMTiles v3 codec against an archive written by the `pmtiles` package
/// (`Fixtures/make_pmtiles.py`), with leaf directories, runs and shared contents.
final class PMTilesTests: XCTestCase {
    private func fixture() throws -> Data {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "leafy", withExtension: "pmtiles", subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    private func slice(_ data: Data, _ offset: UInt64, _ length: UInt64) -> Data {
        data.subdata(in: Int(offset)..<Int(offset + length))
    }

    func testHeaderDecodesAndEncodesToTheSameBytes() throws {
        let data = try fixture()
        let header = try PMTiles.Header(decoding: data)
        XCTAssertEqual(header.rootDirectoryOffset, 127)
        XCTAssertEqual(header.internalCompression, .gzip)
        XCTAssertEqual(header.tileCompression, .none)
        XCTAssertEqual(header.tileType, .unknown)
        XCTAssertEqual(header.minZoom, 0)
        XCTAssertEqual(header.maxZoom, 12)
        XCTAssertEqual(header.centerZoom, 3)
        XCTAssertEqual(header.centerLonE7, 23_456_789)
        XCTAssertEqual(header.centerLatE7, -12_345_678)
        XCTAssertEqual(header.minLonE7, -1_800_000_000)
        XCTAssertEqual(header.addressedTilesCount, 5461 + 12000)
        XCTAssertTrue(header.clustered)
        XCTAssertGreaterThan(header.leafDirectoriesLength, 0, "the fixture must have leaf directories")
        XCTAssertEqual(header.encoded(), data.prefix(127))
        // Metadata is compressed like the directories.
        let metadata = try JSONSerialization.jsonObject(
            with: Gzip.inflate(slice(data, header.metadataOffset, header.metadataLength)))
        XCTAssertEqual((metadata as? [String: String])?["name"], "leafy")
    }

    /// Every entry, read through the root and its leaves, against the contents the script wrote;
    /// and our serialisation of each directory is byte for byte the package's.
    func testEveryTileIsFoundThroughTheLeavesWithItsBytes() throws {
        let data = try fixture()
        let header = try PMTiles.Header(decoding: data)
        let rootBytes = slice(data, header.rootDirectoryOffset, header.rootDirectoryLength)
        let root = try PMTiles.decodeDirectory(rootBytes, compression: header.internalCompression)
        XCTAssertTrue(root.allSatisfy(\.isLeaf))
        XCTAssertEqual(PMTiles.serialize(root), try Gzip.inflate(rootBytes))

        var entries: [PMTiles.Entry] = []
        var leaves: [UInt64: [PMTiles.Entry]] = [:]
        for pointer in root {
            let leafBytes = slice(data, header.leafDirectoriesOffset + pointer.offset, UInt64(pointer.length))
            let leaf = try PMTiles.decodeDirectory(leafBytes, compression: .gzip)
            XCTAssertEqual(leaf.first?.tileID, pointer.tileID)
            XCTAssertEqual(PMTiles.serialize(leaf), try Gzip.inflate(leafBytes))
            entries += leaf
            leaves[pointer.offset] = leaf
        }
        XCTAssertEqual(UInt64(entries.count), header.tileEntriesCount)
        XCTAssertEqual(entries.reduce(0) { $0 + UInt64($1.runLength) }, header.addressedTilesCount)

        var checked = 0
        for entry in entries {
            let bytes = String(decoding: slice(data, header.tileDataOffset + entry.offset, UInt64(entry.length)), as: UTF8.self)
            for id in entry.tileID..<(entry.tileID + UInt64(entry.runLength)) {
                // Find it as a reader does: the root gives the leaf, the leaf the entry.
                let pointer = try XCTUnwrap(PMTiles.find(id, in: root))
                XCTAssertTrue(pointer.isLeaf)
                XCTAssertEqual(PMTiles.find(id, in: try XCTUnwrap(leaves[pointer.offset])), entry)
                XCTAssertEqual(bytes, Self.expectedBytes(id))
                checked += 1
            }
        }
        XCTAssertEqual(checked, 17461)
    }

    /// What make_pmtiles.py wrote for a tile id (its ids come from the package; the tile of an id
    /// from TileMath, whose ids TileIDHilbertTests checks against the package).
    private static func expectedBytes(_ id: UInt64) -> String {
        guard let tile = TileID(pmtilesID: id) else { return "no tile" }
        if tile.z == 6 && tile.x == 0 { return "ocean" }
        return tile.z <= 6 ? "tile \(id)" : "blob \(id % 251)"
    }

    func testIdsMissingFromADirectoryAreNotFound() throws {
        let entries = [PMTiles.Entry(tileID: 10, offset: 0, length: 5, runLength: 3),
                       PMTiles.Entry(tileID: 20, offset: 5, length: 5, runLength: 1)]
        XCTAssertNil(PMTiles.find(9, in: entries))
        XCTAssertEqual(PMTiles.find(12, in: entries)?.tileID, 10)
        XCTAssertNil(PMTiles.find(13, in: entries))
        XCTAssertEqual(PMTiles.find(20, in: entries)?.tileID, 20)
        XCTAssertNil(PMTiles.find(21, in: entries))
        XCTAssertNil(PMTiles.find(1, in: []))
    }

    func testDirectoriesOverflowIntoLeavesThatReadBack() throws {
        // 40,000 entries with scattered offsets cannot fit 16 KiB, so leaves are made; reading the
        // root and the leaves back gives the entries again, and the root fits beside the header.
        var entries: [PMTiles.Entry] = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var id: UInt64 = 100
        for _ in 0..<40_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            id += 1 + (state >> 54)
            entries.append(.init(tileID: id, offset: (state >> 20) % 1_000_000, length: UInt32(state >> 40 & 0xFFF) + 1,
                                 runLength: UInt32(state >> 60) + 1))
        }
        let (root, leaves) = try PMTiles.directories(for: entries, compression: .gzip)
        XCTAssertLessThanOrEqual(root.count + PMTiles.headerSize, PMTiles.rootFetchSize)
        XCTAssertFalse(leaves.isEmpty)
        var back: [PMTiles.Entry] = []
        for pointer in try PMTiles.decodeDirectory(root, compression: .gzip) {
            XCTAssertTrue(pointer.isLeaf)
            back += try PMTiles.decodeDirectory(leaves.subdata(in: Int(pointer.offset)..<Int(pointer.offset) + Int(pointer.length)),
                                                compression: .gzip)
        }
        XCTAssertEqual(back, entries)

        let small = Array(entries.prefix(10))
        let (smallRoot, noLeaves) = try PMTiles.directories(for: small, compression: .none)
        XCTAssertTrue(noLeaves.isEmpty)
        XCTAssertEqual(try PMTiles.decodeDirectory(smallRoot, compression: .none), small)
    }

    func testBadBytesAreNamedErrors() throws {
        let data = try fixture()
        XCTAssertThrowsError(try PMTiles.Header(decoding: Data("SQLite format 3".utf8))) {
            XCTAssertEqual($0 as? PMTiles.FormatError, .notPMTiles(version: nil))
        }
        var v2 = data.prefix(127)
        v2[7] = 2
        XCTAssertThrowsError(try PMTiles.Header(decoding: v2)) { XCTAssertEqual($0 as? PMTiles.FormatError, .notPMTiles(version: 2)) }
        XCTAssertThrowsError(try PMTiles.Header(decoding: data.prefix(100))) {
            XCTAssertEqual($0 as? PMTiles.FormatError, .truncated("header"))
        }
        let entries = [PMTiles.Entry(tileID: 1, offset: 0, length: 300, runLength: 1),
                       PMTiles.Entry(tileID: 2, offset: 300, length: 300, runLength: 1)]
        let raw = PMTiles.serialize(entries)
        XCTAssertEqual(try PMTiles.deserialize(raw), entries)
        for cut in 1..<raw.count {
            XCTAssertThrowsError(try PMTiles.deserialize(raw.prefix(cut)), "cut at \(cut)")
        }
        XCTAssertThrowsError(try PMTiles.deserialize(raw + [0]))
        XCTAssertThrowsError(try PMTiles.deserialize(Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])))
        XCTAssertThrowsError(try PMTiles.decodeDirectory(raw, compression: .gzip)) {
            guard case .codec = $0 as? PMTiles.FormatError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try PMTiles.decodeDirectory(raw, compression: .brotli)) {
            XCTAssertEqual($0 as? PMTiles.FormatError, .unsupportedCompression(.brotli))
        }
    }

    func testOffsetsThatFollowOnAreWrittenAsZero() {
        let entries = [PMTiles.Entry(tileID: 5, offset: 0, length: 10, runLength: 1),
                       PMTiles.Entry(tileID: 6, offset: 10, length: 4, runLength: 2),
                       PMTiles.Entry(tileID: 9, offset: 0, length: 10, runLength: 1)]
        // count 3; deltas 5,1,3; runs 1,2,1; lengths 10,4,10; offsets 0+1, follow-on 0, 0+1.
        XCTAssertEqual([UInt8](PMTiles.serialize(entries)), [3, 5, 1, 3, 1, 2, 1, 10, 4, 10, 1, 0, 1])
    }
}
