import Foundation
import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

/// What TileJSON `bounds`, `maxzoom` below the region (overzoom) and several templates do to a plan.
final class PlannerTileJSONTests: XCTestCase {
    static let landcoverTemplate = "https://tiles.example.com/landcover/{z}/{x}/{y}.pbf"
    static let landcover = TileSource(template: landcoverTemplate, maxZoom: 6)
    /// Bounds inside `PlannerTests.berlin`, so the clip shows.
    static let centre = TileBounds(west: 13.3, south: 52.45, east: 13.5, north: 52.55)!

    static func pack(_ sources: [TileSource], names: [String], overzoom: Bool = true) -> ResolvedPack {
        var resolved = PlannerTests.resolvedPack(sources: sources)
        resolved.pack.overzoom = overzoom
        resolved.summaries = zip(sources, names).map { source, name in
            SourceSummary(name: name, tileJSONURL: nil, urlTemplate: source.template, scheme: source.scheme.rawValue,
                          minZoom: source.minZoom, maxZoom: source.maxZoom, tileSize: source.tileSize)
        }
        return resolved
    }

    /// The tiles of a bbox clipped to bounds at `z`, by the textbook formulas: the region's
    /// half-open cover (floor of west/north, ceil of east/south) and MapLibre's inclusive bounds range.
    static func expectedTiles(_ box: BoundingBox, _ bounds: TileBounds?, _ z: Int) -> Set<TileID> {
        let n = Double(1 << z)
        func column(_ lng: Double) -> Double { (lng + 180) / 360 * n }
        func row(_ lat: Double) -> Double {
            let phi = lat * .pi / 180
            return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n
        }
        var columns = Int(floor(column(box.west)))..<Int(ceil(column(box.east)))
        var rows = Int(floor(row(box.north)))..<Int(ceil(row(box.south)))
        if let b = bounds {
            columns = columns.clamped(to: Int(floor(column(b.west)))..<Int(floor(column(b.east))) + 1)
            rows = rows.clamped(to: Int(floor(row(b.north)))..<Int(floor(row(b.south))) + 1)
        }
        return Set(columns.flatMap { x in rows.map { TileID(z: z, x: x, y: $0) } })
    }

    func testBoundsClipEveryZoomAndTheStoreConverges() throws {
        var streets = PlannerTests.streets
        streets.bounds = Self.centre
        let input = PlannerTests.input([PlannerTests.region("berlin", zooms: 5...12)],
                                       pack: Self.pack([streets], names: ["streets"]))
        let store = InMemoryStore()
        let plan = try Planner.plan(input, store: store)
        let row = try XCTUnwrap(plan.regions.first)
        XCTAssertEqual(row.tileSets.first?.bounds, Self.centre)
        var total = 0
        var clippedAway = 0
        for change in row.zoomChanges {
            let expected = Self.expectedTiles(PlannerTests.berlin, Self.centre, change.zoom)
            XCTAssertEqual(change.counts, ChangeCounts(add: expected.count), "z\(change.zoom)")
            total += expected.count
            clippedAway += Self.expectedTiles(PlannerTests.berlin, nil, change.zoom).count - expected.count
        }
        XCTAssertGreaterThan(clippedAway, 0, "the bounds must cut tiles for this test to mean anything")
        XCTAssertEqual(plan.tilesToDownload, total)

        try PlannerTests.apply(plan, to: store)
        var stored = Set<TileID>()
        for key in store.tiles.keys { stored.insert(key.tile) }
        let wanted = (5...12).reduce(into: Set<TileID>()) { $0.formUnion(Self.expectedTiles(PlannerTests.berlin, Self.centre, $1)) }
        XCTAssertEqual(stored, wanted)
        let again = try Planner.plan(input, store: store)
        XCTAssertFalse(again.hasChanges)
        XCTAssertEqual(again.tilesToDownload, 0)
        XCTAssertEqual(again.tilesToKeep, total)
    }

    func testBoundsKeepAPlanetRegionUnderTheTileLimit() throws {
        var streets = PlannerTests.streets
        streets.bounds = Self.centre
        let planet = Region(id: "planet", name: "Planet", area: .bbox(.world), minZoom: 0, maxZoom: 14, stylePacks: ["demo"])
        let plan = try Planner.plan(PlannerTests.input([planet], pack: Self.pack([streets], names: ["streets"])), store: nil)
        let expected = (0...14).reduce(0) { $0 + Self.centre.rect(zoom: $1).count }
        XCTAssertEqual(plan.tilesToDownload, expected)
        XCTAssertThrowsError(try Planner.plan(PlannerTests.input([planet]), store: nil), "unbounded, the planet is over the limit")
    }

    func testSourceStoppingBelowTheRegionIsFetchedAtItsMaxzoomWithANote() throws {
        let input = PlannerTests.input([PlannerTests.region("berlin", zooms: 10...13)],
                                       pack: Self.pack([PlannerTests.streets, Self.landcover], names: ["streets", "landcover"]))
        let store = InMemoryStore()
        let plan = try Planner.plan(input, store: store)
        let row = try XCTUnwrap(plan.regions.first)
        let landcoverChanges = row.zoomChanges.filter { $0.urlTemplate == Self.landcoverTemplate }
        XCTAssertEqual(landcoverChanges.map(\.zoom), [6])
        let z6 = Self.expectedTiles(PlannerTests.berlin, nil, 6)
        XCTAssertEqual(landcoverChanges.first?.counts.add, z6.count)
        XCTAssertEqual(row.zoomChanges.filter { $0.urlTemplate == PlannerTests.template }.map(\.zoom), Array(10...13))
        let note = try XCTUnwrap(plan.notes.first { $0.message.contains("landcover") })
        XCTAssertEqual(note.subject, "region 'berlin' with style pack 'demo'")
        XCTAssertTrue(note.message.contains("stops at z6"), note.message)
        XCTAssertTrue(note.message.contains("z10–13"), note.message)
        XCTAssertTrue(note.message.contains("its \(z6.count) tile"), note.message)
        XCTAssertEqual(plan.notes.filter { $0.message.contains("streets") }, [])

        try PlannerTests.apply(plan, to: store)
        XCTAssertEqual(Set(store.tiles.keys.filter { $0.urlTemplate == Self.landcoverTemplate }.map(\.tile)), z6)
        XCTAssertFalse(try Planner.plan(input, store: store).hasChanges)
    }

    func testOverzoomFalseFetchesWhatMapLibreFetchesAndSaysSo() throws {
        let input = PlannerTests.input([PlannerTests.region("berlin", zooms: 10...13)],
                                       pack: Self.pack([PlannerTests.streets, Self.landcover], names: ["streets", "landcover"],
                                                       overzoom: false))
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.regions.first?.zoomChanges.filter { $0.urlTemplate == Self.landcoverTemplate }.count, 0)
        let note = try XCTUnwrap(plan.notes.first { $0.message.contains("landcover") })
        XCTAssertTrue(note.message.contains("\"overzoom\": false"), note.message)
    }

    func testRegionReachingDownToMaxzoomGetsNothingExtra() throws {
        let input = PlannerTests.input([PlannerTests.region("berlin", zooms: 4...13)],
                                       pack: Self.pack([Self.landcover], names: ["landcover"]))
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.regions.first?.zoomChanges.map(\.zoom), [4, 5, 6])
        XCTAssertEqual(plan.notes.filter { $0.subject != "byte estimate" }, [])
    }

    func testTilesetOnlyRegionOverzoomsToo() throws {
        let region = Region(id: "berlin", name: "Berlin", area: .bbox(PlannerTests.berlin), minZoom: 9, maxZoom: 11,
                            stylePacks: [], tilesets: ["https://tiles.example.com/landcover.json"])
        var input = PlannerTests.input([region])
        var tilesets = ResolvedTilesets()
        tilesets.append(Self.landcover, tileJSONURL: "https://tiles.example.com/landcover.json")
        input.regionTilesets = ["berlin": tilesets]
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.regions.first?.zoomChanges.map(\.zoom), [6])
        XCTAssertEqual(plan.notes.first?.subject, "region 'berlin'")
        XCTAssertTrue(plan.notes.first?.message.contains("tileset https://tiles.example.com/landcover.json") == true)
    }

    func testSeveralTemplatesAndClampedBoundsAreNotedOncePerSource() throws {
        var streets = PlannerTests.streets
        streets.templateCount = 3
        streets.readingNotes = ["bounds [-200,0,10,20] are clamped to [-180.0, 0.0, 10.0, 20.0] as MapLibre does"]
        let input = PlannerTests.input([PlannerTests.region("a"), PlannerTests.region("b", PlannerTests.berlinEast)],
                                       pack: Self.pack([streets], names: ["streets"]))
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.notes.filter { $0.subject != "byte estimate" }, [
            PlanNote(subject: "stylePack 'demo'",
                     message: "source 'streets' lists 3 templates; MapLibre uses the first, \(PlannerTests.template)"),
            PlanNote(subject: "stylePack 'demo'", message: "source 'streets': \(streets.readingNotes[0])"),
        ])
    }

    func testRefusedTilesetContributesNoTiles() throws {
        var streets = PlannerTests.streets
        streets.refusal = "its bounds have a west edge not left of the east edge"
        let plan = try Planner.plan(PlannerTests.input([PlannerTests.region("berlin")],
                                                       pack: Self.pack([streets], names: ["streets"])), store: nil)
        XCTAssertEqual(plan.regions.first?.tileSets, [])
        XCTAssertEqual(plan.tilesToDownload, 0)
    }
}
