import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// The next file: the same calls give the same bytes however the transactions fell, its
/// digest is the one `contentDigest()` reads back, and a killed build's rows are taken back.
final class NextStoreWriterTests: XCTestCase {
    private static let template = "https://t.example.com/{z}/{x}/{y}.pbf"

    private func tile(_ index: Int) -> (TileKey, FetchedBody) {
        let key = TileKey(urlTemplate: Self.template, pixelRatio: 1, tile: TileID(z: 14, x: 100 + index / 50, y: index % 50))
        // Sizes from 0 (a "no content" tile) to ~60 KB, as tiles come: inline, and over a page.
        let size = index % 7 == 0 ? 0 : 500 + (index * 7_919) % 60_000
        return (key, FetchedBody(data: randomBytes(size, seed: UInt64(index) &+ 77), etag: "\"e\(index)\"",
                                 modified: 1_600_000_000 + Int64(index)))
    }

    /// Builds a file of 300 tiles, committing after every `commitEvery` tiles (never when nil).
    private func build(at url: URL, commitEvery: Int?) throws -> ContentDigest {
        let writer = try NextStoreWriter(url: url, epoch: 1_700_000_000)
        let region = try writer.addRegion(definition: Data(#"{"bounds":[0,0,1,1]}"#.utf8), description: Data("r".utf8))
        let style = try writer.addResource(StoredResourceRow(
            url: "https://s.example.com/style.json", kind: 1,
            content: StoredContent(expires: nil, modified: 5, etag: nil, data: try Zlib.deflate(Data(#"{"version":8}"#.utf8)),
                                   compressed: true, accessed: 1_700_000_000, mustRevalidate: false)))
        var ids: [Int64] = []
        for index in 0..<300 {
            let (key, body) = tile(index)
            ids.append(try writer.addTile(key, body: body))
            if let commitEvery, index % commitEvery == 0 { try writer.commit() }
        }
        try writer.linkResources([style], toRegion: region)
        try writer.linkTiles(IDRuns(ids), toRegion: region)
        return try writer.finish()
    }

    func testBytesDoNotDependOnWhenTransactionsCommit() throws {
        let dir = try makeTemporaryDirectory(self)
        let once = dir.appendingPathComponent("once.db"), often = dir.appendingPathComponent("often.db")
        let digestOnce = try build(at: once, commitEvery: nil)
        let digestOften = try build(at: often, commitEvery: 3)
        let bytes = try Data(contentsOf: once)
        XCTAssertEqual(bytes, try Data(contentsOf: often), "the same rows in the same order give the same bytes")
        XCTAssertEqual(digestOnce, digestOften)
        // Header: 4 KiB pages; the change counter and version-valid-for number are both 1.
        XCTAssertEqual(Int(bytes[16]) << 8 | Int(bytes[17]), 4_096)
        XCTAssertEqual(Array(bytes[24..<28]), [0, 0, 0, 1])
        XCTAssertEqual(Array(bytes[92..<96]), [0, 0, 0, 1])
        XCTAssertFalse(FileManager.default.fileExists(atPath: once.path + "-journal"))
    }

    /// The key line is built byte by byte as the digest's text form spells it.
    func testTileKeyLineSpellsNumbersAsSwiftDoes() {
        var line: [UInt8] = []
        for (z, x, y, count) in [(0, 0, 0, 0), (22, 4_194_303, 1, 60_000), (1, -1, Int.max, Int.min + 1)] {
            let key = TileKey(urlTemplate: "mapbox://tiles/a.b/{z}/{x}/{y}.vector.pbf", pixelRatio: 2, tile: TileID(z: z, x: x, y: y))
            NextStoreWriter.tileKeyLine(key, compressed: count % 2 == 0, count: count, into: &line)
            XCTAssertEqual(String(decoding: line, as: UTF8.self),
                           "T \(key.urlTemplate) 2 \(z) \(x) \(y) \(count % 2 == 0 ? 1 : 0) \(count)\n")
        }
    }

    func testDigestWhileWritingEqualsTheDigestReadBack() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("offline.db")
        let written = try build(at: url, commitEvery: 50)
        let store = try OfflineDatabase(url: url, epoch: 0, options: .init(readOnly: true, create: false))
        defer { try? store.close() }
        XCTAssertEqual(try store.contentDigest(), written)
        XCTAssertEqual(written.tileCount, 300)
        XCTAssertEqual(written.resourceCount, 1)
        XCTAssertEqual(try store.integrityCheck(), [])
        // Tiles are numbered in key order and read back as written.
        let (key, body) = tile(8)
        XCTAssertEqual(try store.tileData(key), body.data)
        XCTAssertEqual(try store.tileData(tile(7).0), Data(), "an empty body is stored as no content")
    }

    func testAKilledBuildIsTakenBackIntoTheStore() throws {
        let dir = try makeTemporaryDirectory(self)
        let storeURL = dir.appendingPathComponent("offline.db"), partialURL = dir.appendingPathComponent("offline.db.canonical")
        let store = try OfflineDatabase(url: storeURL, epoch: 0)
        defer { try? store.close() }
        try store.write([FetchedItem(request: FetchRequest(url: "u", kind: .tile, tileKey: tile(1).0, tile: tile(1).0.tile),
                                     body: FetchedBody(data: Data("kept".utf8)))])

        let writer = try NextStoreWriter(url: partialURL, epoch: 0)
        for index in 0..<10 { _ = try writer.addTile(tile(index).0, body: tile(index).1) }
        try writer.commit()
        for index in 10..<20 { _ = try writer.addTile(tile(index).0, body: tile(index).1) }
        writer.abandon()  // as a kill would: the last ten were never committed

        XCTAssertEqual(try store.takeInPartialBuild(at: partialURL), 9, "tiles 0...9 but 1, which the store has")
        XCTAssertFalse(FileManager.default.fileExists(atPath: partialURL.path))
        let stored = try store.storedKeys((0..<20).map { tile($0).0 })
        XCTAssertEqual(stored, Set((0..<10).map { tile($0).0 }))
        XCTAssertEqual(try store.tileData(tile(1).0), Data("kept".utf8), "a row the store had is left as it was")
        XCTAssertEqual(try store.tileData(tile(2).0), tile(2).1.data)
    }

    func testAFileThatIsNotADatabaseIsDeletedNotTakenIn() throws {
        let dir = try makeTemporaryDirectory(self)
        let store = try OfflineDatabase(url: dir.appendingPathComponent("offline.db"), epoch: 0)
        defer { try? store.close() }
        let partial = dir.appendingPathComponent("offline.db.canonical")
        try Data("not sqlite at all, just some bytes that are long enough to look like a header".utf8).write(to: partial)
        XCTAssertEqual(try store.takeInPartialBuild(at: partial), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path))
    }
}
