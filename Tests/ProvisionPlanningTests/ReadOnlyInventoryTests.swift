import Foundation
import ProvisionModel
@testable import ProvisionPlanning
import TileMath
import XCTest

/// A `StoreInventory` that can only be read: it forwards the reads of a store and has no way to
/// write, so a planner that compiles against it and plans the same through it reads only.
private final class ReadOnlyInventory: StoreInventory {
    private let store: InMemoryStore
    private(set) var reads = 0

    init(_ store: InMemoryStore) { self.store = store }

    func regions() throws -> [StoredRegion] { reads += 1; return try store.regions() }
    func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?, _ body: (Int) throws -> Void) throws {
        reads += 1
        try store.forEachStoredTile(in: column, linkedTo: region, body)
    }
    func storedResources(among urls: [String]) throws -> Set<String> { reads += 1; return try store.storedResources(among: urls) }
    func resourceData(url: String) throws -> Data? { reads += 1; return try store.resourceData(url: url) }
    func linkedTileCounts(region rowID: Int64) throws -> [TileCount] { reads += 1; return try store.linkedTileCounts(region: rowID) }
    func tileLinkCount(region rowID: Int64) throws -> Int { reads += 1; return try store.tileLinkCount(region: rowID) }
    func linkedResources(region rowID: Int64) throws -> [String] { reads += 1; return try store.linkedResources(region: rowID) }
    func meanTileSizes(urlTemplate: String, zooms: ClosedRange<Int>) throws -> [Int: Double] {
        reads += 1
        return try store.meanTileSizes(urlTemplate: urlTemplate, zooms: zooms)
    }
    func forEachStoredTileLength(in column: StoredTileColumn, _ body: (Int, Int64) throws -> Void) throws {
        reads += 1
        try store.forEachStoredTileLength(in: column, body)
    }
    func storedResourceSizes(among urls: [String]) throws -> [String: Int64] {
        reads += 1
        return try store.storedResourceSizes(among: urls)
    }
    func meanResourceSize(kind: ResourceKind) throws -> Double? { reads += 1; return try store.meanResourceSize(kind: kind) }
    func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow] {
        reads += 1
        return try store.tileRows(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom, after: after, limit: limit)
    }
}

final class ReadOnlyInventoryTests: XCTestCase {
    /// The counts and actions a plan decides, to compare two plans.
    private func summary(_ plan: Plan) -> [String] {
        ["add \(plan.tilesToAdd) remove \(plan.tilesToRemove) keep \(plan.tilesToKeep) download \(plan.tilesToDownload)",
         "bytes \(plan.bytesToDownload) removed \(plan.removedRegions.map(\.rowID))"]
            + plan.regions.map { "\($0.key) \($0.action) \($0.rowID.map(String.init) ?? "new") stale \($0.staleTileCounts.count)" }
    }

    func testThePlannerPlansTheSameThroughAReadOnlyInventory() throws {
        let store = InMemoryStore()
        let first = [PlannerTests.region("west", PlannerTests.berlin, zooms: 0...7),
                     PlannerTests.region("east", PlannerTests.berlinEast, zooms: 0...7)]
        let lock = try PlannerTests.apply(Planner.plan(PlannerTests.input(first), store: store), to: store)
        // Next job: "east" dropped, "west" narrowed to 0...5 and a new region added.
        let next = PlannerTests.input([PlannerTests.region("west", PlannerTests.berlin, zooms: 0...5),
                                       PlannerTests.region("north", PlannerTests.berlin, zooms: 6...6)],
                                      lockedRows: lock)
        let writesBefore = store.writeCount
        let inventory = ReadOnlyInventory(store)
        let throughInventory = try Planner.plan(next, store: inventory)
        let throughStore = try Planner.plan(next, store: store)
        XCTAssertGreaterThan(inventory.reads, 0)
        XCTAssertEqual(store.writeCount, writesBefore)
        XCTAssertEqual(summary(throughInventory), summary(throughStore))
        XCTAssertEqual(throughInventory.removedRegions.map(\.rowID), [lock["east/demo"]].compactMap { $0 },
                       "the plan must have changes for the comparison to mean anything")
        XCTAssertGreaterThan(throughInventory.tilesToRemove, 0)
    }
}
