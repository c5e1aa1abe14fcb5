import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionPlanning

/// MapLibre's merge refuses a bundle past `offlineMapboxTileCountLimit`: the plan refuses it first.
final class VendorLimitTests: XCTestCase {
    private let mapbox = TileSource(template: "mapbox://tiles/mapbox.mapbox-streets-v8/{z}/{x}/{y}.vector.pbf", maxZoom: 16)
    private let other = TileSource(template: "https://tiles.example.com/{z}/{x}/{y}.pbf", maxZoom: 16)
    private let box = BoundingBox(west: 13.0, south: 52.3, east: 13.8, north: 52.7)

    private func input(_ sources: [TileSource], zooms: ClosedRange<Int>, limits: Limits = Limits()) -> PlanInput {
        var input = PlannerTests.input([PlannerTests.region("berlin", box, zooms: zooms)], limits: limits,
                                       pack: PlannerTests.resolvedPack(sources: sources))
        input.job.limits.maxTiles = 1_000_000
        return input
    }

    func testMapboxTilesPastTheDefaultLimitAreRefusedWithHowToRaiseIt() throws {
        let count = TileCover.count(.bbox(box), zooms: 0...16)
        XCTAssertGreaterThan(count, Limits.defaultMapboxTiles)
        XCTAssertThrowsError(try Planner.plan(input([mapbox], zooms: 0...16), store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("\(count) mapbox:// tiles, over MapLibre's default offlineMapboxTileCountLimit of 6000"), message)
            XCTAssertTrue(message.contains("setOfflineMapboxTileCountLimit"), message)
            XCTAssertTrue(message.contains("already hold"), message)
        }
        XCTAssertNoThrow(try Planner.plan(input([other], zooms: 0...16), store: nil), "other hosts have no such limit")
        XCTAssertNoThrow(try Planner.plan(input([mapbox], zooms: 0...16, limits: Limits(mapboxTiles: count)), store: nil))
        XCTAssertThrowsError(try Planner.plan(input([mapbox, other], zooms: 0...16, limits: Limits(mapboxTiles: count - 1)), store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("over limits.mapboxTiles of \(count - 1)"), message)
        }
    }
}
