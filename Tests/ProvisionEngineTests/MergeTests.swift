import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore
import XCTest

/// `provision merge` in process: shards of the demo store merge into the store one apply
/// writes, byte for byte, and every input that is not a finished shard of one apply is refused,
/// naming it, before anything is written.
final class MergeTests: XCTestCase {
    private var root: URL!
    private let context = RunContext(environment: [:], now: 1_800_000_000, sourceDateEpoch: 1_700_000_000)
    /// The demo job (London and Paris at z10–14) applied whole, before each test.
    private var whole: URL { root.appendingPathComponent("store") }
    private var out: URL { root.appendingPathComponent("out") }

    private static let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/demo")

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let text = """
        {"version": 1, "name": "engine", "store": "store",
         "stylePacks": [{"id": "streets", "style": "https://tiles.example.com/demo/styles/streets.json", "pixelRatio": 1,
                         "glyphs": "ideographs-local"}],
         "regions": [
           {"id": "london", "name": "london", "bbox": [-0.1278, 51.4874, -0.0978, 51.5174], "zoom": [10, 14], "stylePacks": ["streets"]},
           {"id": "paris", "name": "paris", "bbox": [2.3522, 48.8366, 2.3822, 48.8666], "zoom": [10, 14], "stylePacks": ["streets"]}],
         "origins": {"https://tiles.example.com/demo/tiles/streets/": "mbtiles:\(Self.demo.path)/streets.mbtiles",
                     "https://tiles.example.com/demo/": "\(Self.demo.path)"}}
        """
        let job = root.appendingPathComponent("job.json")
        try Data(text.utf8).write(to: job)
        let result = try ApplyRun(request: RunRequest(job: job.path), context: context, progress: SilentProgress()).run()
        XCTAssertTrue(result.outcome.isComplete)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    private func lock(_ store: URL) throws -> LockDocument {
        try XCTUnwrap(LockDocument(json: try JSONValue.parse(Data(contentsOf: StorePath(url: store).lockURL))))
    }

    /// A copy of the whole store named `name` whose lock says it is shard `index`/`count` (the
    /// range `Shard.range` gives, its tile count that range's), edited by `edit`.
    @discardableResult
    private func shard(_ name: String, _ index: Int, of count: Int, edit: (inout LockDocument) -> Void = { _ in }) throws -> String {
        let copy = root.appendingPathComponent(name)
        try FileManager.default.copyItem(at: whole, to: copy)
        var document = try lock(whole)
        let total = document.tileCount
        let shard = Shard(index: index, count: count)
        document.shard = LockDocument.ShardEntry(shard: shard, tiles: shard.range(total: total), totalTiles: total)
        document.tileCount = shard.range(total: total).count
        edit(&document)
        try document.fileBytes.write(to: StorePath(url: copy).lockURL)
        return copy.path
    }

    private func merge(_ stores: [String], into output: URL? = nil, progress: ProgressSink = SilentProgress()) throws -> MergeRun.Result {
        try MergeRun(stores: stores, output: (output ?? out).path, progress: progress).run()
    }

    func testTheOneShardOfAWholeStoreMergesIntoThatStoreByteForByte() throws {
        let wholeLock = try lock(whole)
        XCTAssertNil(wholeLock.shard)
        XCTAssertGreaterThan(wholeLock.tileCount, 20)
        let input = try shard("shard0", 0, of: 1)
        XCTAssertEqual(try lock(URL(fileURLWithPath: input)).shard?.tiles, 0..<wholeLock.tileCount)
        XCTAssertNotEqual(try Data(contentsOf: StorePath(url: URL(fileURLWithPath: input)).lockURL),
                          try Data(contentsOf: StorePath(url: whole).lockURL), "the input's lock is a shard's")

        let events = RecordingProgress()
        let result = try merge([input], progress: events)
        for file in ["offline.db", "provision.lock.json"] {
            XCTAssertTrue(try Data(contentsOf: out.appendingPathComponent(file)) == Data(contentsOf: whole.appendingPathComponent(file)),
                          "\(file) equals the whole apply's")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted(), ["offline.db", "provision.lock.json"])
        XCTAssertEqual(result.lock, wholeLock)
        XCTAssertEqual(result.shards, 1)
        XCTAssertEqual(events.all, [
            .mergeStarted(store: out.standardizedFileURL.path, shards: 1, tiles: wholeLock.tileCount, jobName: wholeLock.jobName),
            .mergeFinished(tiles: wholeLock.tileCount, resources: wholeLock.resourceCount, bytes: wholeLock.byteCount),
        ])

        // Into an existing store: its files are replaced, and again the bytes are the same.
        try Data("old".utf8).write(to: out.appendingPathComponent("provision.lock.json"))
        _ = try merge([input])
        XCTAssertTrue(try Data(contentsOf: out.appendingPathComponent("provision.lock.json"))
                      == Data(contentsOf: whole.appendingPathComponent("provision.lock.json")))
        XCTAssertTrue(try Data(contentsOf: out.appendingPathComponent("offline.db"))
                      == Data(contentsOf: whole.appendingPathComponent("offline.db")))
        let audit = try AuditRun(store: out.path, verify: true, manifest: nil, context: context, progress: SilentProgress()).run()
        XCTAssertTrue(audit.isOK, audit.problems.joined(separator: "\n"))
    }

    /// Cuts the whole store into shard `index`/`count` as a sharded apply writes it: every
    /// region and resource, the tiles of its range renumbered 1…k, the links to them, and the
    /// whole lock with the shard's entry and content.
    private func cut(_ index: Int, of count: Int) throws -> String {
        let directory = root.appendingPathComponent("cut-\(index)-of-\(count)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var document = try lock(whole)
        let source = try OfflineDatabase(url: StorePath(url: whole).databaseURL, epoch: 0, options: .init(readOnly: true, create: false))
        defer { try? source.close() }
        let writer = try NextStoreWriter(url: StorePath(url: directory).databaseURL, epoch: document.epoch)
        let shard = Shard(index: index, count: count)
        let range = shard.range(total: document.tileCount)
        var regions: [Int64] = []
        try source.forEachRegion { regions.append(try writer.addRegion(definition: $0.definition, description: $0.description)) }
        try source.forEachResource { _, row in _ = try writer.addResource(row) }
        try source.forEachTile { id, row in if range.contains(Int(id) - 1) { _ = try writer.addTile(row) } }
        for region in regions {
            var ids: [Int64] = []
            try source.forEachLinkedResourceID(region: region) { ids.append($0) }
            try writer.linkResources(ids, toRegion: region)
        }
        for region in regions {
            var ids: [Int64] = []
            try source.forEachLinkedTileID(region: region) { id in
                if range.contains(Int(id) - 1) { ids.append(id - Int64(range.lowerBound)) }
            }
            try writer.linkTiles(IDRuns(ids), toRegion: region)
        }
        let content = try writer.finish()
        document.shard = LockDocument.ShardEntry(shard: shard, tiles: range, totalTiles: document.tileCount)
        document.tileCount = content.tileCount
        document.byteCount = content.byteCount
        document.contentDigest = "sha256:" + content.digest
        document.chunks = content.chunks
        try document.fileBytes.write(to: StorePath(url: directory).lockURL)
        return directory.path
    }

    /// Shards cut from the whole store as a sharded apply writes them merge back into it, given
    /// in any order, whatever the split (a shard may hold no tile).
    func testShardsCutFromTheWholeStoreMergeBackIntoIt() throws {
        let total = try lock(whole).tileCount
        for count in [2, 3, 7, total + 1] {
            let inputs = try (0..<count).map { try cut($0, of: count) }
            let lockOfLast = try lock(URL(fileURLWithPath: inputs[count - 1]))
            XCTAssertEqual(lockOfLast.tileCount, Shard(index: count - 1, count: count).range(total: total).count)
            let output = root.appendingPathComponent("merged-\(count)")
            _ = try merge(inputs.reversed(), into: output)
            for file in ["offline.db", "provision.lock.json"] {
                XCTAssertTrue(try Data(contentsOf: output.appendingPathComponent(file)) == Data(contentsOf: whole.appendingPathComponent(file)),
                              "\(count) shards: \(file) equals the whole apply's")
            }
        }
    }

    /// Real sharded applies (`ApplyRun` with a shard) of a job with overlapping regions, a
    /// polygon and two style packs merge into the whole apply's store, byte for byte.
    func testShardedAppliesMergeIntoTheWholeApplysStore() throws {
        let text = EngineFixtures.overlappingJob
        let job = root.appendingPathComponent("shards.json")
        try Data(text.utf8).write(to: job)
        func apply(into store: URL, shard: Shard?) throws {
            var request = RunRequest(job: job.path, store: store.path)
            request.shard = shard
            XCTAssertTrue(try ApplyRun(request: request, context: context, progress: SilentProgress()).run().outcome.isComplete)
        }
        let reference = root.appendingPathComponent("reference")
        try apply(into: reference, shard: nil)
        for count in [2, 3, 7] {
            var inputs: [String] = []
            for index in 0..<count {
                let store = root.appendingPathComponent("shard-\(index)-of-\(count)")
                try apply(into: store, shard: Shard(index: index, count: count))
                inputs.append(store.path)
            }
            let output = root.appendingPathComponent("merged-\(count)")
            _ = try merge(inputs.shuffled(), into: output)
            for file in ["offline.db", "provision.lock.json"] {
                XCTAssertTrue(try Data(contentsOf: output.appendingPathComponent(file))
                              == Data(contentsOf: reference.appendingPathComponent(file)), "\(count) shards: \(file)")
            }
        }
    }

    // MARK: Refusals

    /// Runs a merge that must be refused with `kind`, its message containing each of `names`;
    /// the output store is not created.
    private func assertRefused(_ stores: [String], _ kind: ExitCode, naming names: [String], saying words: String,
                               line: UInt = #line) {
        XCTAssertThrowsError(try merge(stores), line: line) { error in
            guard let failure = error as? ProvisionError else { return XCTFail("\(error)", line: line) }
            XCTAssertEqual(failure.kind, kind, failure.message, line: line)
            for name in names { XCTAssertTrue(failure.message.contains(name), "\(failure.message) lacks \(name)", line: line) }
            XCTAssertTrue(failure.message.contains(words), "\(failure.message) lacks \"\(words)\"", line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "nothing was written", line: line)
    }

    func testAMissingInputIsMissingInput() throws {
        let missing = root.appendingPathComponent("nowhere").path
        assertRefused([try shard("s0", 0, of: 2), missing], .missingInput, naming: [missing], saying: "does not exist")
        let empty = root.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        assertRefused([empty.path], .missingInput, naming: [empty.path], saying: "offline.db is missing")
    }

    func testAStoreThatIsNotAShardIsRefused() throws {
        assertRefused([whole.path], .invalidJob, naming: [whole.path], saying: "its lock records no shard")
        let noLock = root.appendingPathComponent("nolock")
        try FileManager.default.createDirectory(at: noLock, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: whole.appendingPathComponent("offline.db"), to: noLock.appendingPathComponent("offline.db"))
        assertRefused([noLock.path], .invalidJob, naming: [noLock.path], saying: "it has no provision.lock.json")
        try Data("{}".utf8).write(to: noLock.appendingPathComponent("provision.lock.json"))
        assertRefused([noLock.path], .invalidJob, naming: [noLock.path], saying: "cannot be read")
    }

    func testShardsOfDifferentAppliesAreRefused() throws {
        let first = try shard("s0", 0, of: 2)
        let otherJob = try shard("job", 1, of: 2) { $0.jobDigest = "sha256:" + String(repeating: "f", count: 64) }
        assertRefused([first, otherJob], .invalidJob, naming: [first, otherJob], saying: "different jobs")
        let otherTime = try shard("time", 1, of: 2) { $0.epoch += 1 }
        assertRefused([first, otherTime], .invalidJob, naming: [first, otherTime], saying: "different times")
        let otherSplit = try shard("split", 1, of: 3)
        assertRefused([first, otherSplit], .invalidJob, naming: [first, otherSplit], saying: "split 3 ways")
        let otherTotal = try shard("total", 1, of: 2) { $0.shard?.totalTiles += 1 }
        assertRefused([first, otherTotal], .invalidJob, naming: [first, otherTotal], saying: "tiles in the job")
        let otherPlan = try shard("plan", 1, of: 2) { $0.regions[0].expectedResources += 1 }
        assertRefused([first, otherPlan], .invalidJob, naming: [first, otherPlan], saying: "plans differ")
        let otherResources = try shard("resources", 1, of: 2) { $0.resourceCount += 1 }
        assertRefused([first, otherResources], .invalidJob, naming: [first, otherResources], saying: "resources differ")
    }

    func testAShardGivenTwiceOrMissingIsRefused() throws {
        let s0 = try shard("s0", 0, of: 4), again = try shard("s0-again", 0, of: 4)
        let s1 = try shard("s1", 1, of: 4), s2 = try shard("s2", 2, of: 4), s3 = try shard("s3", 3, of: 4)
        assertRefused([s0, s1, again, s2, s3], .invalidJob, naming: [s0, again], saying: "shard 0/4 is given twice")
        assertRefused([s2, s0, s2, s1, s3], .invalidJob, naming: [s2], saying: "shard 2/4 is given twice")
        assertRefused([s2, s0], .invalidJob, naming: [s0, s2], saying: "shards 1/4, 3/4 are missing")
        assertRefused([s3, s1, s0], .invalidJob, naming: [], saying: "shard 2/4 is missing")
    }

    func testAnIncompleteShardIsRefusedNamingItsRegion() throws {
        let s0 = try shard("s0", 0, of: 2)
        let s1 = try shard("s1", 1, of: 2) { $0.regions[1].isComplete = false }
        assertRefused([s0, s1], .invalidJob, naming: [s1, "paris/streets"], saying: "is incomplete")
    }

    func testRangesThatDoNotTileTheJobAreRefused() throws {
        let s0 = try shard("s0", 0, of: 2)
        let gap = try shard("gap", 1, of: 2) { lock in
            let tiles = lock.shard?.tiles ?? 0..<0
            lock.shard?.tiles = (tiles.lowerBound + 1)..<tiles.upperBound
            lock.tileCount -= 1
        }
        assertRefused([s0, gap], .invalidJob, naming: [gap], saying: "do not tile")
        let short = try shard("short", 1, of: 2) { lock in
            let tiles = lock.shard?.tiles ?? 0..<0
            lock.shard?.tiles = tiles.lowerBound..<(tiles.upperBound - 1)
            lock.tileCount -= 1
        }
        assertRefused([s0, short], .invalidJob, naming: [short], saying: "do not tile")
        let miscounted = try shard("count", 1, of: 2) { $0.tileCount += 1 }
        assertRefused([s0, miscounted], .invalidJob, naming: [miscounted], saying: "but its share")
    }

    func testAnOutputThatIsAnInputOrAFileIsRefused() throws {
        let s0 = try shard("s0", 0, of: 1)
        XCTAssertThrowsError(try merge([s0], into: URL(fileURLWithPath: s0 + "/./"))) { error in
            XCTAssertEqual((error as? ProvisionError)?.kind, .usage)
            XCTAssertTrue((error as? ProvisionError)?.message.contains("is the input \(s0)") == true, "\(error)")
        }
        try Data("x".utf8).write(to: out)
        XCTAssertThrowsError(try merge([s0])) { error in
            XCTAssertEqual((error as? ProvisionError)?.kind, .cannotWriteStore)
        }
        XCTAssertEqual(try Data(contentsOf: out), Data("x".utf8))
    }

    /// A shard whose database holds other rows than its lock says is found while writing: the
    /// merge is refused naming it, and the output it created is removed.
    func testAShardWhoseRowsDifferFromItsLockIsRefusedAndTheOutputRemoved() throws {
        let s0 = try shard("s0", 0, of: 2), s1 = try shard("s1", 1, of: 2)
        assertRefused([s0, s1], .invalidJob, naming: [URL(fileURLWithPath: s0).standardizedFileURL.path], saying: "tile rows")
    }
}

/// A progress sink that records the events.
private final class RecordingProgress: ProgressSink {
    private let events = Mutex<[ProvisionEvent]>([])

    var all: [ProvisionEvent] { events.read { $0 } }

    func emit(_ event: ProvisionEvent) { events.withLock { $0.append(event) } }
    func finish() {}
}
