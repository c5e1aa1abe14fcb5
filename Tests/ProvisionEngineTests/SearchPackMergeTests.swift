import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore
import XCTest

/// Issue 23: a sharded apply builds no search pack (a shard holds only its share of the tiles);
/// `provision merge` builds each pack once from the shards' tiles, so that the merged store,
/// `search/<pack>.db` included, is byte for byte the store one apply writes.
final class SearchPackMergeTests: XCTestCase {
    private var root: EngineFixtures.OverlappingJobRoot!

    override func setUpWithError() throws {
        root = try EngineFixtures.OverlappingJobRoot("search-merge")
        // The overlapping job, every region feeding the pack "places" (the demo's schema is mapped).
        guard case .object(var job) = try JSONValue.parse(Data(EngineFixtures.overlappingJob.utf8)),
              case .array(let regions) = job["regions"] ?? .null else { return XCTFail("the fixture is not a job") }
        job["regions"] = .array(regions.map { region in
            guard case .object(var object) = region else { return region }
            object["searchPacks"] = ["places"]
            return .object(object)
        })
        job["searchPacks"] = [["id": "places", "sources": ["streets"],
                               "layers": ["places": ["kind": "place", "rank": "rank"], "roads": ["kind": "street"]]]]
        try JSONValue.object(job).data(.prettySorted).write(to: root.url.appendingPathComponent("job.json"))
    }

    override func tearDown() { root = nil }

    private func store(_ name: String) -> URL { root.url.appendingPathComponent(name) }

    private func lock(_ name: String) throws -> LockDocument {
        try XCTUnwrap(LockDocument(json: try JSONValue.parse(Data(contentsOf: StorePath(url: store(name)).lockURL))))
    }

    /// Every file under `directory`, by relative path, with its bytes.
    private func files(_ directory: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            out[String(url.standardizedFileURL.path.dropFirst(directory.standardizedFileURL.path.count + 1))] = try Data(contentsOf: url)
        }
        return out
    }

    private func shards(_ count: Int) throws -> [String] {
        try (0..<count).map { index in
            let name = "shard-\(index)-of-\(count)"
            XCTAssertTrue(try root.apply(into: name, shard: Shard(index: index, count: count)).outcome.isComplete)
            return store(name).path
        }
    }

    func testShardsBuildNoPackAndTheMergeWritesTheWholeApplysFiles() throws {
        XCTAssertTrue(try root.apply(into: "reference").outcome.isComplete)
        let reference = try files(store("reference"))
        XCTAssertNotNil(reference["search/places.db"])
        XCTAssertEqual(try lock("reference").searchPacks.map(\.id), ["places"])
        XCTAssertGreaterThan(try lock("reference").searchPacks.first?.entries ?? 0, 0)

        for count in [2, 3] {
            let inputs = try shards(count)
            for input in inputs {
                let name = URL(fileURLWithPath: input).lastPathComponent
                XCTAssertEqual(try lock(name).searchPacks, [], "\(name): a shard's lock records no pack file")
                XCTAssertEqual(try lock(name).shard?.searchPacks?.packs.map(\.pack.id), ["places"], "\(name): what the merge builds")
                XCTAssertNil(try files(URL(fileURLWithPath: input))["search/places.db"], "\(name) builds no pack")
            }
            let output = store("merged-\(count)")
            let events = RecordingSink()
            let result = try MergeRun(stores: inputs.reversed(), output: output.path, progress: events).run()
            XCTAssertEqual(result.lock, try lock("reference"))
            XCTAssertTrue(result.text.contains("Search pack places: search/places.db, "), result.text)
            XCTAssertEqual(events.names, ["merge-started", "search-pack", "merge-finished"], "\(count) shards")
            let merged = try files(output)
            XCTAssertEqual(merged.keys.sorted(), reference.keys.sorted(), "\(count) shards: the same files")
            for (path, bytes) in reference {
                XCTAssertTrue(merged[path] == bytes, "\(count) shards: \(path) equals the whole apply's")
            }
        }
    }

    /// The shards read as one store page by page (as a pack build reads) give the merged store's
    /// rows in its order, whatever the page size, and again after a jump back.
    func testTheShardsTilesReadAsTheMergedStore() throws {
        let inputs = try shards(3)
        let output = store("merged")
        _ = try MergeRun(stores: inputs, output: output.path, progress: SilentProgress()).run()
        let epoch = try lock("merged").epoch
        let merged = try StorePath(url: output).openForReading(epoch: epoch)
        defer { try? merged.close() }
        let union = try ShardTiles(shards: inputs.map { StorePath(url: URL(fileURLWithPath: $0)) }, epoch: epoch)
        defer { union.close() }
        let sql = try SQLiteDatabase(path: StorePath(url: output).databaseURL.path, options: .init(readOnly: true, create: false))
        defer { try? sql.close() }
        let columns = try sql.query("SELECT DISTINCT url_template, pixel_ratio, z FROM tiles ORDER BY 1, 2, 3") {
            ($0.text(0), Int($0.int64(1)), Int($0.int64(2)))
        }
        XCTAssertGreaterThan(columns.count, 4)
        func page(_ tiles: StoredTiles, _ column: (String, Int, Int), limit: Int) throws -> [String] {
            var out: [String] = [], after: (x: Int, y: Int)?
            while true {
                let rows = try tiles.tileRows(urlTemplate: column.0, pixelRatio: column.1, zoom: column.2, after: after, limit: limit)
                out += rows.map { "\($0.key.tile) \($0.content.compressed) \($0.content.data?.count ?? -1)" }
                guard rows.count == limit, let last = rows.last else { return out }
                after = (last.key.tile.x, last.key.tile.y)
            }
        }
        for column in columns {
            let expected = try page(merged, column, limit: 1_000_000)
            for limit in [1, 3, 256] {
                XCTAssertEqual(try page(union, column, limit: limit), expected, "\(column) by \(limit)")
            }
        }
        XCTAssertEqual(try page(union, columns[0], limit: 2), try page(merged, columns[0], limit: 5), "read again from the start")
    }

    /// A pack that cannot be built fails the merge with its message; a new output is removed, an
    /// existing one keeps every byte.
    func testAPackThatCannotBeBuiltFailsTheMergeWritingNothing() throws {
        let inputs = try shards(2)
        let existing = store("existing")
        _ = try MergeRun(stores: inputs, output: existing.path, progress: SilentProgress()).run()
        let before = try files(existing)
        for input in inputs {
            let name = URL(fileURLWithPath: input).lastPathComponent
            var document = try lock(name)
            document.shard?.searchPacks?.packs[0].pack.layers = nil  // the demo's schema, unmapped, is unknown
            try document.fileBytes.write(to: StorePath(url: store(name)).lockURL)
        }
        for output in [store("new"), existing] {
            XCTAssertThrowsError(try MergeRun(stores: inputs, output: output.path, progress: SilentProgress()).run()) { error in
                let failure = error as? ProvisionError
                XCTAssertEqual(failure?.kind, .invalidJob, "\(error)")
                XCTAssertTrue(failure?.message.contains("search pack 'places'") == true, "\(error)")
                XCTAssertTrue(failure?.message.contains("neither OpenMapTiles nor Mapbox Streets v8") == true, "\(error)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store("new").path), "a new output is removed")
        let after = try files(existing)
        XCTAssertEqual(after.keys.sorted(), before.keys.sorted(), "no file left behind")
        for (path, bytes) in before { XCTAssertTrue(after[path] == bytes, "\(path) is as it was") }
    }
}

/// A progress sink that records the events' names.
private final class RecordingSink: ProgressSink {
    private let events = Mutex<[String]>([])

    var names: [String] { events.read { $0 } }

    func emit(_ event: ProvisionEvent) {
        let name: String
        switch event {
        case .mergeStarted: name = "merge-started"
        case .mergeFinished: name = "merge-finished"
        case .searchPack: name = "search-pack"
        default: name = "other"
        }
        events.withLock { $0.append(name) }
    }

    func finish() {}
}
