import Foundation
import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

/// The plan's footprint is the store after the apply: stored bytes where the store holds the
/// content, estimates (marked) for what the apply downloads. Checked against the store an apply
/// of the plan leaves, counted row by row.
final class PlannerFootprintTests: XCTestCase {
    private let west = PlannerTests.berlin
    private let east = PlannerTests.berlinEast

    /// The sharing of what `store` holds, counted item by item, with members named as in `plan`.
    private func countedSharing(_ store: InMemoryStore, rows: [String: Int64], plan: Plan) -> ContentSharing {
        var indexOfRow: [Int64: Int64] = [:]
        for (index, region) in plan.regions.enumerated() { if let row = rows[region.key] { indexOfRow[row] = Int64(index) } }
        var tileRows: [TileKey: [Int64]] = [:], resourceRows: [String: [Int64]] = [:]
        for (row, index) in indexOfRow {
            for key in store.linkedTileKeys(region: row) { tileRows[key, default: []].append(index) }
            for url in (try? store.linkedResources(region: row)) ?? [] { resourceRows[url, default: []].append(index) }
        }
        var sharing = ContentSharing()
        for (key, members) in tileRows { sharing.add(members, kind: .tile, bytes: Int64(store.tiles[key]?.count ?? 0)) }
        for (url, members) in resourceRows {
            guard let stored = store.resources[url] else { continue }
            sharing.add(members, kind: stored.kind, bytes: Int64(stored.data.count))
        }
        return sharing
    }

    /// `sharing` with estimates counted as stored bytes, to compare with a store.
    private func settled(_ sharing: ContentSharing?) -> [ContentSharing.Key: ContentAmount] {
        (sharing?.amounts ?? [:]).mapValues { ContentAmount(tiles: $0.tiles, resources: $0.resources, bytes: $0.bytes) }
    }

    private func tiles(_ sharing: ContentSharing?, _ members: [Int64]) -> ContentAmount? {
        sharing?.amounts[.init(members: members, kind: .tile)]
    }

    func testAFreshPlanEstimatesEveryTileAndSaysWhichRegionsShareIt() throws {
        let input = PlannerTests.input([PlannerTests.region("west", west, zooms: 0...8), PlannerTests.region("east", east, zooms: 0...8)],
                                       assumedTileBytes: 1_000)
        for store in [nil, InMemoryStore()] as [InMemoryStore?] {
            let plan = try Planner.plan(input, store: store)
            var onlyWest = 0, both = 0, onlyEast = 0
            for z in 0...8 {
                let a = PlannerTests.cover(west, z), b = PlannerTests.cover(east, z)
                onlyWest += a.subtracting(b).count
                both += a.intersection(b).count
                onlyEast += b.subtracting(a).count
            }
            XCTAssertGreaterThan(onlyWest * both * onlyEast, 0, "the regions overlap and differ")
            for (members, count) in [([Int64(0)], onlyWest), ([0, 1], both), ([1], onlyEast)] {
                XCTAssertEqual(tiles(plan.sharing, members), ContentAmount(tiles: count, bytes: Int64(count * 1_000),
                                                                           estimatedBytes: Int64(count * 1_000)), "\(members)")
            }
            XCTAssertEqual(plan.sharing?.amounts[.init(members: [0, 1], kind: .spriteImage)],
                           ContentAmount(resources: 1, bytes: 60_000, estimatedBytes: 60_000), "the default for a sprite")
            XCTAssertEqual(plan.sharing?.amounts.count, 6)
        }
    }

    func testAPlanAfterTheApplyIsExactAndEqualsTheStore() throws {
        let store = InMemoryStore()
        let job = [PlannerTests.region("west", west, zooms: 0...7), PlannerTests.region("east", east, zooms: 0...7),
                   PlannerTests.region("solo", BoundingBox(west: 2.2, south: 48.8, east: 2.5, north: 48.9), zooms: 3...9)]
        let rows = try PlannerTests.apply(Planner.plan(PlannerTests.input(job), store: store), to: store,
                                          tilePayload: Data(repeating: 1, count: 321))
        let plan = try Planner.plan(PlannerTests.input(job, rowsInLockFile: rows), store: store)
        XCTAssertFalse(plan.hasChanges)
        XCTAssertEqual(plan.sharing?.total.estimatedBytes, 0, "everything is stored: nothing estimated")
        XCTAssertEqual(plan.sharing?.amounts, countedSharing(store, rows: rows, plan: plan).amounts)
    }

    /// Stored tiles count with their stored sizes; what is not stored is estimated at the
    /// store's mean for its template and zoom, else the assumed size.
    func testAGrownJobIsExactWhereStoredAndEstimatedForTheRest() throws {
        let store = InMemoryStore()
        let first = [PlannerTests.region("west", west, zooms: 0...6)]
        var rows = try PlannerTests.apply(Planner.plan(PlannerTests.input(first), store: store), to: store,
                                          tilePayload: Data(repeating: 1, count: 50))
        let grown = [PlannerTests.region("west", west, zooms: 0...7), PlannerTests.region("east", east, zooms: 0...7)]
        let plan = try Planner.plan(PlannerTests.input(grown, rowsInLockFile: rows, assumedTileBytes: 50), store: store)
        rows = try PlannerTests.apply(plan, to: store, tilePayload: Data(repeating: 1, count: 50))
        // The estimates (the z0–6 mean, the assumed size at z7) are the sizes the apply wrote.
        XCTAssertEqual(settled(plan.sharing), countedSharing(store, rows: rows, plan: plan).amounts)
        let westOnly = try XCTUnwrap(tiles(plan.sharing, [0]))
        let storedWestOnly = (0...6).reduce(0) { $0 + PlannerTests.cover(west, $1).subtracting(PlannerTests.cover(east, $1)).count }
        XCTAssertEqual(westOnly.bytes - westOnly.estimatedBytes, Int64(storedWestOnly * 50), "west's own stored tiles, exact")
        XCTAssertGreaterThan(westOnly.estimatedBytes, 0, "west's new zoom")
        XCTAssertEqual(tiles(plan.sharing, [1])?.estimatedBytes, tiles(plan.sharing, [1])?.bytes, "east's own tiles: all estimated")
        XCTAssertEqual(plan.sharing?.amounts[.init(members: [0, 1], kind: .style)]?.estimatedBytes, 0, "the style is stored")
    }

    /// Tiles of two stored sizes, summed by the store for a row that alone wants its tiles.
    func testARegionAloneIsSummedExactlyAsStored() throws {
        let store = InMemoryStore()
        var rows = try PlannerTests.apply(Planner.plan(PlannerTests.input([PlannerTests.region("west", west, zooms: 0...5)]),
                                                       store: store), to: store, tilePayload: Data(repeating: 1, count: 50))
        let job = [PlannerTests.region("west", west, zooms: 0...7)]
        rows = try PlannerTests.apply(Planner.plan(PlannerTests.input(job, rowsInLockFile: rows), store: store), to: store,
                                      tilePayload: Data(repeating: 1, count: 80))
        let plan = try Planner.plan(PlannerTests.input(job, rowsInLockFile: rows), store: store)
        let expected = (0...7).reduce(Int64(0)) { $0 + Int64(PlannerTests.cover(west, $1).count * ($1 <= 5 ? 50 : 80)) }
        XCTAssertEqual(tiles(plan.sharing, [0])?.bytes, expected)
        XCTAssertEqual(plan.sharing?.amounts, countedSharing(store, rows: rows, plan: plan).amounts)
        XCTAssertEqual(plan.sharing?.total.estimatedBytes, 0)
    }

    /// A dropped region is not in the store after the apply: the tiles it shared are the other's alone.
    func testADroppedRegionLeavesItsSharedTilesToTheOther() throws {
        let store = InMemoryStore()
        let both = [PlannerTests.region("west", west, zooms: 0...7), PlannerTests.region("east", east, zooms: 0...7)]
        let rows = try PlannerTests.apply(Planner.plan(PlannerTests.input(both), store: store), to: store)
        let kept = [PlannerTests.region("west", west, zooms: 0...7)]
        let plan = try Planner.plan(PlannerTests.input(kept, rowsInLockFile: rows), store: store)
        XCTAssertEqual(plan.removedRegions.count, 1)
        let westTiles = (0...7).reduce(0) { $0 + PlannerTests.cover(west, $1).count }
        XCTAssertEqual(plan.sharing?.amounts.keys.map(\.members), Array(repeating: [0], count: 4))
        XCTAssertEqual(tiles(plan.sharing, [0]), ContentAmount(tiles: westTiles, bytes: Int64(westTiles * 100)))
    }

    /// A style that changed upstream is replaced: estimated at the length fetched while planning.
    func testADriftedStyleIsEstimatedAtItsNewLength() throws {
        let store = InMemoryStore()
        let job = [PlannerTests.region("west", west, zooms: 0...3)]
        let rows = try PlannerTests.apply(Planner.plan(PlannerTests.input(job), store: store), to: store)
        var input = PlannerTests.input(job, rowsInLockFile: rows)
        input.documents = [PlannerTests.styleURL: FetchedBody(data: Data(repeating: 32, count: 4_321))]
        input.pinnedDigests = [PlannerTests.styleURL: "sha256:old"]
        let plan = try Planner.plan(input, store: store)
        XCTAssertEqual(plan.sharing?.amounts[.init(members: [0], kind: .style)],
                       ContentAmount(resources: 1, bytes: 4_321, estimatedBytes: 4_321))
        XCTAssertEqual(plan.sharing?.amounts[.init(members: [0], kind: .source)],
                       ContentAmount(resources: 1, bytes: Int64(PlannerTests.tileJSONURL.utf8.count)), "stored, unchanged")
    }
}
