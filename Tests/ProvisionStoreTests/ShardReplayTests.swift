import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// The streaming readers return every row by id as it was stored, and replaying the rows of the
/// shards of a file through `ShardReplay` writes that file again, byte for byte.
final class ShardReplayTests: XCTestCase {
    private static let epoch: Int64 = 1_700_000_000
    private static let template = "https://t.example.com/{z}/{x}/{y}.pbf"
    private static let tileCount = 300
    private static let regions: [(definition: Data, description: Data?)] = [
        (Data(#"{"bounds":[0,0,1,1],"min_zoom":14}"#.utf8), Data(#"{"name":"a"}"#.utf8)),
        (Data(#"{"bounds":[1,1,2,2],"min_zoom":14}"#.utf8), nil),
    ]

    /// Tile `index`: every 7th "no content", every 3rd without an upstream `Last-Modified`.
    private func tile(_ index: Int) -> (TileKey, FetchedBody) {
        let key = TileKey(urlTemplate: Self.template, pixelRatio: 1, tile: TileID(z: 14, x: 100 + index / 50, y: index % 50))
        let size = index % 7 == 0 ? 0 : 200 + (index * 7_919) % 9_000
        let modified: Int64? = index % 3 == 0 ? nil : 1_600_000_000 + Int64(index)
        return (key, FetchedBody(data: randomBytes(size, seed: UInt64(index) &+ 11), etag: index % 2 == 0 ? "\"e\(index)\"" : nil,
                                 modified: modified, expires: index % 5 == 0 ? 1_800_000_000 : nil))
    }

    /// Whether region `region` (0 or 1) holds tile `index`: they overlap on 50..<100.
    private func holds(_ region: Int, _ index: Int) -> Bool {
        region == 0 ? index < 100 || index % 2 == 0 : index >= 50
    }

    private func resources() throws -> [StoredResourceRow] {
        [
            StoredResourceRow(url: "https://s.example.com/fonts/0-255.pbf", kind: 4, content: StoredContent(
                expires: nil, modified: nil, etag: nil, data: randomBytes(3_000, seed: 5), compressed: false,
                accessed: Self.epoch, mustRevalidate: false)),
            StoredResourceRow(url: "https://s.example.com/sprite.json", kind: 6, content: StoredContent(
                expires: 1_800_000_000, modified: 1_500_000_000, etag: "\"s\"", data: Data("{}".utf8), compressed: false,
                accessed: 1_650_000_000, mustRevalidate: true)),
            StoredResourceRow(url: "https://s.example.com/style.json", kind: 1, content: StoredContent(
                expires: nil, modified: 1_650_000_000, etag: nil, data: try Zlib.deflate(Data(#"{"version":8}"#.utf8)),
                compressed: true, accessed: 1_650_000_000, mustRevalidate: false)),
        ]
    }

    /// Writes the store a (sharded) apply writes into `directory`: both regions, every resource,
    /// the tiles `tiles` (ids 1…k) and each region's links to them.
    @discardableResult
    private func writeStore(_ directory: URL, tiles: Range<Int>) throws -> ContentDigest {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let writer = try NextStoreWriter(url: StorePath(url: directory).databaseURL, epoch: Self.epoch)
        let regionIDs = try Self.regions.map { try writer.addRegion(definition: $0.definition, description: $0.description) }
        let resourceIDs = try resources().map { try writer.addResource($0) }
        try writer.commit()
        var links: [[Int64]] = [[], []]
        for index in tiles {
            let (key, body) = tile(index)
            let id = try writer.addTile(key, body: body)
            for region in 0..<2 where holds(region, index) { links[region].append(id) }
        }
        try writer.linkResources(resourceIDs, toRegion: regionIDs[0])
        try writer.linkResources([resourceIDs[2]], toRegion: regionIDs[1])
        for region in 0..<2 { try writer.linkTiles(IDRuns(links[region]), toRegion: regionIDs[region]) }
        return try writer.finish()
    }

    private func open(_ directory: URL) throws -> OfflineDatabase {
        try OfflineDatabase(url: StorePath(url: directory).databaseURL, epoch: 0, options: .init(readOnly: true, create: false))
    }

    func testReadersStepEveryRowByIDAsStored() throws {
        let dir = try makeTemporaryDirectory(self)
        try writeStore(dir, tiles: 0..<Self.tileCount)
        let store = try open(dir)
        defer { try? store.close() }

        var regions: [StoredRegion] = []
        try store.forEachRegion { regions.append($0) }
        XCTAssertEqual(regions, [StoredRegion(rowID: 1, definition: Self.regions[0].definition, description: Self.regions[0].description),
                                 StoredRegion(rowID: 2, definition: Self.regions[1].definition, description: nil)])

        var resourceIDs: [Int64] = []
        let written = try resources()
        try store.forEachResource { id, row in
            resourceIDs.append(id)
            let original = written[Int(id) - 1]
            XCTAssertEqual(row.url, original.url)
            XCTAssertEqual(row.kind, original.kind)
            let stamped = original.content.stamped(at: Self.epoch)
            self.assertContent(row.content, stamped, row.url)
        }
        XCTAssertEqual(resourceIDs, [1, 2, 3])
        XCTAssertEqual(written[1].content.stamped(at: Self.epoch).modified, 1_500_000_000, "an upstream Last-Modified is kept")
        XCTAssertEqual(written[2].content.stamped(at: Self.epoch).modified, Self.epoch, "a build stamp becomes this build's")

        var tileIDs: [Int64] = []
        try store.forEachTile { id, row in
            tileIDs.append(id)
            let index = Int(id) - 1
            let (key, body) = self.tile(index)
            XCTAssertEqual(row.key, key)
            XCTAssertEqual(row.content.modified, body.modified ?? Self.epoch, "tile \(index)")
            XCTAssertEqual(row.content.accessed, Self.epoch)
            XCTAssertEqual(row.content.etag, body.etag)
            XCTAssertEqual(row.content.expires, body.expires)
            if body.data.isEmpty {
                XCTAssertNil(row.content.data, "a \"no content\" tile is NULL")
            } else {
                let stored = try XCTUnwrap(row.content.data)
                XCTAssertEqual(row.content.compressed ? try Zlib.inflate(stored) : stored, body.data, "tile \(index)")
            }
        }
        XCTAssertEqual(tileIDs, Array(1...Int64(Self.tileCount)))

        for region in 0..<2 {
            var linked: [Int64] = []
            try store.forEachLinkedTileID(region: Int64(region + 1)) { linked.append($0) }
            XCTAssertEqual(linked, (0..<Self.tileCount).filter { holds(region, $0) }.map { Int64($0 + 1) }, "region \(region)")
        }
        var linkedResources: [[Int64]] = [[], []]
        for region in 0..<2 { try store.forEachLinkedResourceID(region: Int64(region + 1)) { linkedResources[region].append($0) } }
        XCTAssertEqual(linkedResources, [[1, 2, 3], [3]])
        var none = 0
        try store.forEachLinkedTileID(region: 9) { _ in none += 1 }
        XCTAssertEqual(none, 0, "an unknown region links nothing")
    }

    /// By id, not by key: a staging store's rows come in the order they were inserted.
    func testTilesComeByIDNotByKey() throws {
        let dir = try makeTemporaryDirectory(self)
        let store = try OfflineDatabase(url: dir.appendingPathComponent("offline.db"), epoch: Self.epoch)
        defer { try? store.close() }
        let indices = [40, 3, 17, 1]
        try store.write(indices.map { index in
            let (key, body) = tile(index)
            return FetchedItem(request: FetchRequest(url: "u\(index)", kind: .tile, tileKey: key, tile: key.tile), body: body)
        })
        var keys: [TileKey] = []
        try store.forEachTile { _, row in keys.append(row.key) }
        XCTAssertEqual(keys, indices.map { tile($0).0 })
    }

    /// A reader stops where `body` throws and leaves the statement reset, so it can run again.
    func testAReaderThatThrowsCanRunAgain() throws {
        let dir = try makeTemporaryDirectory(self)
        try writeStore(dir, tiles: 0..<20)
        let store = try open(dir)
        defer { try? store.close() }
        struct Stop: Error {}
        var seen = 0
        XCTAssertThrowsError(try store.forEachTile { _, _ in
            seen += 1
            if seen == 5 { throw Stop() }
        })
        XCTAssertEqual(seen, 5)
        var again = 0
        try store.forEachTile { _, _ in again += 1 }
        XCTAssertEqual(again, 20)
    }

    /// The whole file, then its shards replayed, for several splits (an empty shard among them),
    /// with commits and link batches small enough to fall inside shards and regions.
    func testReplayingTheShardsWritesTheWholeFileAgain() throws {
        let dir = try makeTemporaryDirectory(self)
        let whole = dir.appendingPathComponent("whole")
        let wholeDigest = try writeStore(whole, tiles: 0..<Self.tileCount)
        let wholeBytes = try Data(contentsOf: StorePath(url: whole).databaseURL)
        let splits: [[Int]] = [[], [150], [0, 1, 299], [100, 100, 213]]
        for (number, cuts) in splits.enumerated() {
            let bounds = [0] + cuts + [Self.tileCount]
            var shards: [StorePath] = []
            for index in 0..<(bounds.count - 1) {
                let shard = dir.appendingPathComponent("split\(number)-shard\(index)")
                try writeStore(shard, tiles: bounds[index]..<bounds[index + 1])
                shards.append(StorePath(url: shard))
            }
            let out = dir.appendingPathComponent("merged\(number).db")
            let writer = try NextStoreWriter(url: out, epoch: Self.epoch)
            let replay = ShardReplay(shards: shards, tileCounts: zip(bounds, bounds.dropFirst()).map { $1 - $0 })
            var told: [Int] = []
            try replay.run(into: writer) { told.append($0) }
            let digest = try writer.finish()
            XCTAssertEqual(told, Array(shards.indices))
            XCTAssertEqual(digest, wholeDigest, "split \(cuts)")
            XCTAssertTrue(try Data(contentsOf: out) == wholeBytes, "split \(cuts): the merged file equals the whole one")
        }
    }

    /// Past 32,767 tiles, where the largest id in `sqlite_sequence` takes a third byte, and with
    /// shards ending just before, at and after the ids where it grows (1, 127, 32,767): the tiles
    /// of a shard are copied in one SQL statement, which leaves the page of that record as one
    /// row at a time does.
    func testShardsAcrossTheSizesOfTheLargestIDMergeIntoTheWholeFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let count = 32_800
        func small(_ index: Int) -> (TileKey, FetchedBody) {
            (TileKey(urlTemplate: Self.template, pixelRatio: 1, tile: TileID(z: 16, x: index / 256, y: index % 256)),
             FetchedBody(data: Data("t\(index)".utf8), modified: index % 2 == 0 ? nil : 1_600_000_000))
        }
        func write(_ url: URL, _ tiles: Range<Int>) throws -> ContentDigest {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let writer = try NextStoreWriter(url: StorePath(url: url).databaseURL, epoch: Self.epoch)
            let region = try writer.addRegion(definition: Self.regions[0].definition, description: nil)
            var linked: [Int64] = []
            for index in tiles {
                let (key, body) = small(index)
                let id = try writer.addTile(key, body: body)
                if index % 3 != 1 { linked.append(id) }  // the region leaves every third tile out
                if index % 1_000 == 0 { try writer.commit() }
            }
            try writer.linkTiles(IDRuns(linked), toRegion: region)
            return try writer.finish()
        }
        let whole = dir.appendingPathComponent("whole")
        let wholeDigest = try write(whole, 0..<count)
        let wholeBytes = try Data(contentsOf: StorePath(url: whole).databaseURL)
        for cuts in [[1, 127, 32_767], [2, 128, 32_768], [126, 32_766, 32_799]] {
            let bounds = [0] + cuts + [count]
            var shards: [StorePath] = []
            for index in 0..<(bounds.count - 1) {
                let shard = dir.appendingPathComponent("\(cuts[0])-\(index)")
                _ = try write(shard, bounds[index]..<bounds[index + 1])
                shards.append(StorePath(url: shard))
            }
            let out = dir.appendingPathComponent("merged-\(cuts[0]).db")
            let writer = try NextStoreWriter(url: out, epoch: Self.epoch)
            try ShardReplay(shards: shards, tileCounts: zip(bounds, bounds.dropFirst()).map { $1 - $0 }).run(into: writer)
            let digest = try writer.finish()
            XCTAssertEqual(digest, wholeDigest, "cuts \(cuts)")
            let merged = try OfflineDatabase(url: out, epoch: 0, options: .init(readOnly: true, create: false))
            defer { try? merged.close() }
            XCTAssertEqual(try merged.db.queryFirst("SELECT seq FROM sqlite_sequence WHERE name = 'tiles'") { $0.int64(0) },
                           Int64(count))
            XCTAssertTrue(try Data(contentsOf: out) == wholeBytes, "cuts \(cuts): the merged file equals the whole one")
        }
    }

    func testAShardHoldingOtherThanItsCountIsNamed() throws {
        let dir = try makeTemporaryDirectory(self)
        let first = dir.appendingPathComponent("first"), second = dir.appendingPathComponent("second")
        try writeStore(first, tiles: 0..<10)
        try writeStore(second, tiles: 10..<20)
        let writer = try NextStoreWriter(url: dir.appendingPathComponent("out.db"), epoch: Self.epoch)
        defer { writer.abandon() }
        let replay = ShardReplay(shards: [StorePath(url: first), StorePath(url: second)], tileCounts: [10, 11])
        XCTAssertThrowsError(try replay.run(into: writer)) { error in
            let store = error as? StoreError
            XCTAssertEqual(store?.code, .invalidInput)
            XCTAssertEqual(store?.path, StorePath(url: second).display)
            XCTAssertTrue(store?.message.contains("it holds 10 tile rows and its lock records 11") == true, "\(String(describing: store))")
        }
    }

    /// A shard whose tile ids are not 1…k, or that links a tile it lacks, is named, and the
    /// writer is left to be abandoned.
    func testAShardWithIDsOrLinksOffIsNamed() throws {
        let dir = try makeTemporaryDirectory(self)
        let cases: [(String, String)] = [
            ("UPDATE tiles SET id = 50 WHERE id = 10", "its tile ids are not 1, 2, … (10 rows with ids 1 to 50)"),
            ("INSERT INTO region_tiles (region_id, tile_id) VALUES (2, 77)", "a region links tile 77, which it lacks"),
        ]
        for (number, (damage, message)) in cases.enumerated() {
            let first = dir.appendingPathComponent("\(number)-first"), second = dir.appendingPathComponent("\(number)-second")
            try writeStore(first, tiles: 0..<10)
            try writeStore(second, tiles: 10..<20)
            let db = try SQLiteDatabase(path: StorePath(url: second).databaseURL.path)
            try db.exec(damage)
            try db.close()
            let writer = try NextStoreWriter(url: dir.appendingPathComponent("\(number)-out.db"), epoch: Self.epoch)
            defer { writer.abandon() }
            let replay = ShardReplay(shards: [StorePath(url: first), StorePath(url: second)], tileCounts: [10, 10])
            XCTAssertThrowsError(try replay.run(into: writer)) { error in
                let store = error as? StoreError
                XCTAssertEqual(store?.code, .invalidInput)
                XCTAssertEqual(store?.path, StorePath(url: second).display)
                XCTAssertTrue(store?.message.contains(message) == true, "\(String(describing: store))")
            }
        }
    }

    private func assertContent(_ a: StoredContent, _ b: StoredContent, _ name: String, line: UInt = #line) {
        XCTAssertEqual(a.expires, b.expires, name, line: line)
        XCTAssertEqual(a.modified, b.modified, name, line: line)
        XCTAssertEqual(a.etag, b.etag, name, line: line)
        XCTAssertEqual(a.data, b.data, name, line: line)
        XCTAssertEqual(a.compressed, b.compressed, name, line: line)
        XCTAssertEqual(a.accessed, b.accessed, name, line: line)
        XCTAssertEqual(a.mustRevalidate, b.mustRevalidate, name, line: line)
    }
}
