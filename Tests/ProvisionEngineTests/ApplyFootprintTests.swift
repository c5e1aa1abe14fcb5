import Foundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore
import XCTest

/// The tile sharing an apply sums while it writes the file (so that its report need not read
/// every tile row back) is the one the store gives when it is read: for the whole job of
/// overlapping regions, a polygon and two style packs, and for a shard of it.
final class ApplyFootprintTests: XCTestCase {
    private var fixture: EngineFixtures.OverlappingJobRoot!
    private var root: URL { fixture.url }

    override func setUpWithError() throws {
        fixture = try EngineFixtures.OverlappingJobRoot("footprint")
    }

    override func tearDown() {
        fixture = nil
    }

    private func apply(into store: String, shard: Shard? = nil) throws -> ApplyRun.Result {
        try fixture.apply(into: store, shard: shard)
    }

    /// The store's sharing as its rows give it (tiles and resources) and its regions, read after the apply.
    private func readBack(_ store: String, epoch: Int64) throws -> (ContentSharing, [StoredRegion]) {
        let database = try StorePath(url: root.appendingPathComponent(store)).openForReading(epoch: epoch)
        defer { try? database.close() }
        return (try database.contentSharing(), try database.regions())
    }

    private func tilePart(_ sharing: ContentSharing) -> [ContentSharing.Key: ContentAmount] {
        sharing.amounts.filter { $0.key.kind == .tile }
    }

    func testTheSharingSummedWhileWritingIsTheOneReadBack() throws {
        for (store, shard) in [("whole", nil), ("half", Shard(index: 1, count: 2))] as [(String, Shard?)] {
            let result = try apply(into: store, shard: shard)
            let summed = try XCTUnwrap(result.outcome.tileSharing, "\(store): a written file has its sharing")
            let (read, regions) = try readBack(store, epoch: result.report.lock.epoch)
            XCTAssertEqual(summed.amounts, tilePart(read), store)
            XCTAssertTrue(summed.amounts.keys.contains { $0.members.count > 1 }, "\(store): some tiles are shared by regions")
            XCTAssertGreaterThan(summed.total.bytes, 0)
            XCTAssertEqual(summed.total.tiles, result.report.lock.tileCount, "\(store): every tile row is linked and counted once")
            let footprint = try XCTUnwrap(result.report.footprint)
            XCTAssertEqual(footprint, Footprint(sharing: read, regions: regions, lock: result.report.lock),
                           "\(store): the report's footprint is the store's")
        }
    }

    func testAnApplyThatWritesNothingReportsTheStoreAsItIs() throws {
        let first = try apply(into: "store")
        let again = try apply(into: "store")
        XCTAssertEqual(again.report.footprint, first.report.footprint)
    }
}
