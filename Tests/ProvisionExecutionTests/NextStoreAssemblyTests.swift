import Foundation
import ProvisionModel
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest
@testable import ProvisionExecution

/// The applier writes the new file in key order while downloads finish in any order: whatever
/// the order (and whether a finished tile waited long enough to be spilled to the staging store),
/// the file has the same bytes, ids ascend in key order, and every region links its cover.
final class NextStoreAssemblyTests: XCTestCase {
    // "a…" sorts before "b…": the TMS set comes first in key order though it starts a zoom later.
    private static let tms = PlannedTileSet(urlTemplate: "https://a.example.com/{z}/{x}/{y}.pbf", pixelRatio: 1, isTMS: true,
                                            zooms: 4...5)
    private static let xyz = PlannedTileSet(urlTemplate: "https://b.example.com/{z}/{x}/{y}.pbf", pixelRatio: 1, isTMS: false,
                                            zooms: 3...5)
    private static let styleURL = "https://s.example.com/style.json"
    private static let west = BoundingBox(west: -20, south: -10, east: 30, north: 40)
    private static let east = BoundingBox(west: 10, south: 0, east: 60, north: 50)

    private func region(_ id: String, _ box: BoundingBox) -> RegionPlan {
        let sets = [Self.tms, Self.xyz]
        let changes = sets.flatMap { set in
            set.zooms.map { ZoomChange(urlTemplate: set.urlTemplate, zoom: $0,
                                       counts: ChangeCounts(add: TileCover.count(.bbox(box), zoom: $0))) }
        }
        let style = ResourceRef(url: Self.styleURL, kind: .style)
        return RegionPlan(regionID: id, name: id, stylePackID: "p", rowID: nil, action: .add,
                          definition: Data("{\"id\":\"\(id)\"}".utf8), description: Data(id.utf8), area: .bbox(box),
                          tileSets: sets, zoomChanges: changes, staleTileCounts: [],
                          resources: ResourceChanges(wanted: [style], add: [style], remove: []), estimatedBytes: 0)
    }

    private func plan() -> Plan {
        Plan(jobName: "t", jobDigest: "d", epoch: 1_700_000_000, regions: [region("west", Self.west), region("east", Self.east)],
             removedRegions: [], stylePacks: [], documents: [Self.styleURL: FetchedBody(data: Data(#"{"version":8}"#.utf8))],
             assumedTileBytes: 1_000)
    }

    /// The body a tile answers with: sizes vary, so rows straddle pages.
    static func body(_ key: TileKey) -> FetchedBody {
        let seed = key.urlTemplate.utf8.count * 1_000_003 + key.tile.z * 10_007 + key.tile.x * 101 + key.tile.y
        let size = 200 + (seed * 7_919) % 40_000
        var bytes = [UInt8](repeating: 0, count: size)
        var state = UInt64(seed) | 1
        for i in 0..<size {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            bytes[i] = UInt8(truncatingIfNeeded: state)
        }
        return FetchedBody(data: Data(bytes), etag: "\"\(seed)\"", modified: 1_600_000_000 + Int64(seed % 1000))
    }

    /// Applies the plan into a new store at `dir`; returns the new file's bytes and the outcome.
    /// The clock of the writer and the assembler moves only when a `ScramblingFetcher` moves it.
    private func apply(in dir: URL, fetcher: ScramblingFetcher, staged: [TileKey] = [],
                       observer: ApplyObserver = SilentApplyObserver()) throws -> (Data, ApplyOutcome, ContentDigest) {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let staging = try OfflineDatabase(url: dir.appendingPathComponent("offline.db"), epoch: 1_700_000_000)
        defer { try? staging.close() }
        try staging.write(staged.map { FetchedItem(request: FetchRequest(url: "x", kind: .tile, tileKey: $0), body: Self.body($0)) })
        let builder = try NextStoreWriter(url: dir.appendingPathComponent("offline.db.canonical"), epoch: 1_700_000_000)
        let configuration = Downloader.Configuration(clock: fetcher.clock)
        let applier = Applier(store: staging, fetcher: fetcher, configuration: configuration)
        applier.observer = observer
        let outcome = try applier.apply(plan(), building: builder)
        let digest = try builder.finish()
        return (try Data(contentsOf: builder.url), outcome, digest)
    }

    /// Records what an applier tells its observer.
    private final class RecordingObserver: ApplyObserver, @unchecked Sendable {
        var phases: [ApplyPhase] = []
        var last: DownloadProgress?
        var regions: [(key: String, linked: Int, wanted: Int, complete: Bool)] = []

        func phase(_ phase: ApplyPhase) { phases.append(phase) }
        func downloads(_ progress: DownloadProgress) { last = progress }
        func regionLinked(key: String, linkedTiles: Int, wantedTiles: Int, complete: Bool) {
            regions.append((key, linkedTiles, wantedTiles, complete))
        }
    }

    func testTheObserverHearsThePhasesTheProgressAndEveryLinkedRegion() throws {
        let observer = RecordingObserver()
        let (_, outcome, _) = try apply(in: try makeTemporaryDirectory(), fetcher: ScramblingFetcher(seed: nil), observer: observer)
        XCTAssertEqual(observer.phases, [.regions, .resources, .tiles, .links])
        XCTAssertEqual(observer.last?.completed, observer.last?.requested)
        XCTAssertEqual(observer.last?.requested, outcome.plannedResources + outcome.plannedTiles)
        XCTAssertEqual(observer.regions.map(\.key), plan().regions.map(\.key))
        for (index, region) in observer.regions.enumerated() {
            let wanted = plan().regions[index].zoomChanges.reduce(0) { $0 + $1.counts.add }
            XCTAssertEqual(region.wanted, wanted, region.key)
            XCTAssertEqual(region.linked, wanted, "\(region.key): every wanted tile linked")
            XCTAssertTrue(region.complete, region.key)
        }
    }

    func testAnyCompletionOrderGivesTheSameFileInKeyOrder() throws {
        let root = try makeTemporaryDirectory()
        let (inOrder, outcome, digest) = try apply(in: root.appendingPathComponent("in-order"), fetcher: ScramblingFetcher(seed: nil))
        XCTAssertEqual(outcome.incompleteRegions, [])
        let cover = { (box: BoundingBox) in (4...5).reduce(0) { $0 + TileCover.count(.bbox(box), zoom: $1) }
            + (3...5).reduce(0) { $0 + TileCover.count(.bbox(box), zoom: $1) } }
        // Scrambled, and with the first tiles held back long enough for the rest to be spilled.
        for seed: UInt64 in [1, 2] {
            let fetcher = ScramblingFetcher(seed: seed, holdFirst: seed == 2 ? 3 : 0)
            let (bytes, scrambled, _) = try apply(in: root.appendingPathComponent("seed-\(seed)"), fetcher: fetcher)
            XCTAssertEqual(bytes, inOrder, "seed \(seed): the same file whatever the completion order")
            XCTAssertEqual(scrambled.downloaded, outcome.downloaded)
            // Tiles that waited behind the held ones were spilled once the clock moved: the staging
            // store has all of them. Without a move nothing waits long enough to be spilled.
            let staging = try OfflineDatabase(url: root.appendingPathComponent("seed-\(seed)/offline.db"), epoch: 0)
            XCTAssertEqual(try staging.rowCounts().tiles, seed == 2 ? scrambled.downloaded - 3 : 0, "seed \(seed)")
            try staging.close()
        }

        let file = try OfflineDatabase(url: root.appendingPathComponent("in-order/offline.db.canonical"), epoch: 0,
                                       options: .init(readOnly: true, create: false))
        defer { try? file.close() }
        XCTAssertEqual(try file.contentDigest(), digest)
        let counts = try file.linkedTileCounts(region: 1).reduce(0) { $0 + $1.count }
        XCTAssertEqual(counts, cover(Self.west))
        XCTAssertEqual(try file.linkedTileCounts(region: 2).reduce(0) { $0 + $1.count }, cover(Self.east))
        XCTAssertEqual(try file.linkedResources(region: 2), [Self.styleURL])
        XCTAssertEqual(try file.regions().map(\.definition), [Data(#"{"id":"west"}"#.utf8), Data(#"{"id":"east"}"#.utf8)])
        // Ids are positions in key order, TMS rows stored with y from the south.
        let flipped = Self.tms.key(for: TileID(z: 4, x: 7, y: 7)).tile
        var rows: [Int] = []
        try file.forEachStoredTile(in: StoredTileColumn(urlTemplate: Self.tms.urlTemplate, pixelRatio: Self.tms.pixelRatio,
                                                        zoom: 4, x: 7, rows: 0..<16), linkedTo: 1) { rows.append($0) }
        XCTAssertTrue(rows.contains(flipped.y), "\(rows)")
        let order = try tilesOutOfKeyOrder(root.appendingPathComponent("in-order/offline.db.canonical"))
        XCTAssertEqual(order.misplaced, 0)
        XCTAssertEqual(order.tiles, Int64(digest.tileCount))
    }

    /// Commits come once the oldest uncommitted row is a flush window old, not after every batch
    /// (each commit rewrites and journals the last pages of the table and its indexes): with the
    /// clock standing still only the start and the finish commit; with a window of 0, every
    /// batch that wrote rows does. The file is the same either way.
    func testTheWriterCommitsOncePerFlushWindow() throws {
        let root = try makeTemporaryDirectory()
        var files: [Data] = []
        var commits: [Int] = []
        for window in [0.1, 0] {
            let dir = root.appendingPathComponent("window-\(window)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let staging = try OfflineDatabase(url: dir.appendingPathComponent("offline.db"), epoch: 1_700_000_000)
            defer { try? staging.close() }
            let writer = try NextStoreWriter(url: dir.appendingPathComponent("offline.db.canonical"), epoch: 1_700_000_000)
            let builder = CountingBuilder(writer)
            let fetcher = ScramblingFetcher(seed: nil)
            let configuration = Downloader.Configuration(flushWindow: window, clock: fetcher.clock)
            let outcome = try Applier(store: staging, fetcher: fetcher, configuration: configuration).apply(plan(), building: builder)
            XCTAssertEqual(outcome.incompleteRegions, [])
            _ = try writer.finish()
            files.append(try Data(contentsOf: writer.url))
            commits.append(builder.commits)
        }
        XCTAssertEqual(commits[0], 1, "a clock that does not move: only the commit after the resources")
        XCTAssertGreaterThan(commits[1], 2, "a window of 0: a commit per batch")
        XCTAssertEqual(files[0], files[1], "commits do not change the bytes")
    }

    func testStagedTilesAndFailedDownloadsAreTakenFromTheStagingStore() throws {
        let root = try makeTemporaryDirectory()
        let (fresh, _, _) = try apply(in: root.appendingPathComponent("fresh"), fetcher: ScramblingFetcher(seed: 3))
        // Half the tiles already staged (a killed apply, or another job): only the rest is fetched,
        // and the file is the same.
        let all = plan().tileGroups.flatMap { group in group.tiles.map { group.tileSet.key(for: $0) } }
        let staged = all.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let fetcher = ScramblingFetcher(seed: 4)
        let (bytes, outcome, _) = try apply(in: root.appendingPathComponent("staged"), fetcher: fetcher, staged: staged)
        XCTAssertEqual(outcome.downloaded, all.count - staged.count)
        XCTAssertEqual(bytes, fresh)

        // A tile that fails is left out, and the one region that wants it is incomplete.
        let failing = Self.xyz.key(for: TileID(z: 5, x: 14, y: 13))
        let (_, failed, digest) = try apply(in: root.appendingPathComponent("failed"),
                                            fetcher: ScramblingFetcher(seed: 5, failing: [failing]))
        XCTAssertEqual(failed.failed, 1)
        XCTAssertEqual(failed.incompleteRegions, ["west/p"])
        XCTAssertEqual(digest.tileCount, Set(all).count - 1)
    }
}

/// Answers every request it pulls, in a seeded random order (or in order when `seed` is nil);
/// the first `holdFirst` in request order answer last, after `clock` has moved past the 100 ms
/// a finished download may wait in memory and the writer has had its turn. `failing` keys fail.
private final class ScramblingFetcher: Fetcher {
    let clock = ManualClock()
    private let seed: UInt64?
    private let holdFirst: Int
    private let failing: Set<TileKey>

    init(seed: UInt64?, holdFirst: Int = 0, failing: Set<TileKey> = []) {
        self.seed = seed
        self.holdFirst = holdFirst
        self.failing = failing
    }

    func fetchAll<I: IteratorProtocol>(_ requests: inout I, onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void)
        where I.Element == FetchRequest {
        var pulled: [FetchRequest] = []
        while let request = requests.next() { pulled.append(request) }
        let held = Array(pulled.prefix(holdFirst))
        var rest = Array(pulled.dropFirst(holdFirst))
        if var state = seed {
            for i in stride(from: rest.count - 1, to: 0, by: -1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                rest.swapAt(i, Int(state >> 33) % (i + 1))
            }
        }
        func answer(_ request: FetchRequest) {
            guard let key = request.tileKey else {
                return onResult(request, .success(FetchedBody(data: Data("resource".utf8))))
            }
            onResult(request, failing.contains(key) ? .failure(.status(500)) : .success(NextStoreAssemblyTests.body(key)))
        }
        rest.forEach(answer)
        if !held.isEmpty {
            clock.waitForWaiter()  // the writer has taken the full batches and is idle
            clock.advance(by: 0.1)
            clock.waitForWaiter()  // it has written the partial batch
            clock.advance(by: 0.1)
            clock.waitForWaiter()  // and spilled what waits behind the held tiles
        }
        held.forEach(answer)
    }
}

/// A builder that counts the commits asked of the writer it forwards to.
private final class CountingBuilder: NextStoreBuilder {
    private let writer: NextStoreWriter
    private(set) var commits = 0

    init(_ writer: NextStoreWriter) { self.writer = writer }

    func addRegion(definition: Data, description: Data?) throws -> Int64 {
        try writer.addRegion(definition: definition, description: description)
    }
    func addResource(_ row: StoredResourceRow) throws -> Int64 { try writer.addResource(row) }
    func addTile(_ row: StoredTileRow) throws -> Int64 { try writer.addTile(row) }
    func addTile(_ key: TileKey, body: FetchedBody) throws -> Int64 { try writer.addTile(key, body: body) }
    var lastTileBytes: Int64 { writer.lastTileBytes }
    func linkResources(_ ids: [Int64], toRegion region: Int64) throws { try writer.linkResources(ids, toRegion: region) }
    func linkTiles(_ ids: IDRuns, toRegion region: Int64) throws { try writer.linkTiles(ids, toRegion: region) }
    func commit() throws {
        commits += 1
        try writer.commit()
    }
}

/// Tile rows whose id is not their position in (url_template, pixel_ratio, z, x, y) order, and
/// the tile count.
private func tilesOutOfKeyOrder(_ url: URL) throws -> (misplaced: Int64, tiles: Int64) {
    let db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true))
    defer { try? db.close() }
    let misplaced = try db.queryFirst("""
        SELECT count(*) FROM (SELECT id, row_number() OVER (ORDER BY url_template, pixel_ratio, z, x, y) AS position
                              FROM tiles) WHERE id != position
        """) { $0.int64(0) } ?? -1
    return (misplaced, try db.queryFirst("SELECT count(*) FROM tiles") { $0.int64(0) } ?? 0)
}

private func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("provision-assembly-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
