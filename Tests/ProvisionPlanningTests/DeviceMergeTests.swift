import ProvisionFoundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionPlanning

/// MapLibre's merge refuses a bundle past `offlineMapboxTileCountLimit`: the plan refuses it first.
final class DeviceMergeTests: XCTestCase {
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
            XCTAssertTrue(message.contains("\(grouped(count)) mapbox:// tiles, over MapLibre's default offlineMapboxTileCountLimit of 6,000"), message)
            XCTAssertTrue(message.contains("setOfflineMapboxTileCountLimit"), message)
            XCTAssertTrue(message.contains("already hold"), message)
        }
        XCTAssertNoThrow(try Planner.plan(input([other], zooms: 0...16), store: nil), "other hosts have no such limit")
        XCTAssertNoThrow(try Planner.plan(input([mapbox], zooms: 0...16, limits: Limits(mapboxTiles: count)), store: nil))
        XCTAssertThrowsError(try Planner.plan(input([mapbox, other], zooms: 0...16, limits: Limits(mapboxTiles: count - 1)), store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("over limits.mapboxTiles of \(grouped(count - 1))"), message)
        }
    }

    func testAChangedDefinitionOrDescriptionSaysDevicesGetASecondRegion() throws {
        let store = InMemoryStore()
        let original = PlannerTests.region("berlin", box, zooms: 0...6)
        let lock = try PlannerTests.apply(try Planner.plan(PlannerTests.input([original]), store: store), to: store)
        let unchanged = try Planner.plan(PlannerTests.input([original], rowsInLockFile: lock), store: store)
        XCTAssertEqual(unchanged.notes, [])

        let moved = PlannerTests.region("berlin", PlannerTests.berlinEast, zooms: 0...6)
        let note = try XCTUnwrap(try Planner.plan(PlannerTests.input([moved], rowsInLockFile: lock), store: store).notes.first)
        XCTAssertEqual(note.subject, "region 'berlin'")
        XCTAssertTrue(note.message.contains("definition (geometry, zooms, style or pixel ratio) changed"), note.message)
        XCTAssertTrue(note.message.contains("keeps the old one with its \(TileCover.count(.bbox(box), zooms: 0...6)) tiles"), note.message)

        let renamed = PlannerTests.region("berlin", box, zooms: 0...6, metadata: JSONObject([("name", "Berlin (new)")]))
        let described = try Planner.plan(PlannerTests.input([renamed], rowsInLockFile: lock), store: store)
        XCTAssertTrue(described.notes.first?.message.contains("its description (metadata) changed") == true, "\(described.notes)")
    }

    func testARegionPastWebMercatorsLatitudeLimitGetsANote() throws {
        let polar = PlannerTests.region("svalbard", BoundingBox(west: 10, south: 78, east: 20, north: 89), zooms: 0...3)
        let plan = try Planner.plan(PlannerTests.input([polar, PlannerTests.region("berlin", box, zooms: 0...3)]), store: nil)
        XCTAssertEqual(plan.notes.map(\.subject).filter { $0 != "byte estimate" }, ["region 'svalbard'"])
        XCTAssertTrue(plan.notes.first?.message.contains("beyond Web Mercator's limit") == true)
    }
}
