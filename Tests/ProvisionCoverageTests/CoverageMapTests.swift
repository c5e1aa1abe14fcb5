import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import TileMath
import XCTest

/// The coverage picture's model: which tile is in which state for which regions, per zoom, and
/// how views coarsen under the cell budget. Checked against an oracle made of plain sets.
final class CoverageMapTests: XCTestCase {
    typealias F = CoverageFixtures

    // MARK: - The oracle

    /// What a cell of one tile should say, from sets: per region, the tiles it wants (per tile
    /// set) and the tiles the store links to its rows.
    struct Expected: Equatable, CustomStringConvertible {
        var state: CoverageState
        var regions: [String]
        var change: CoverageState?
        var description: String { "\(state.rawValue) \(regions) \(change?.rawValue ?? "-")" }
    }

    /// The oracle for a plan at `zoom`: each region's own state, then one cell per tile.
    func oracle(_ plan: Plan, store: InMemoryCoverageStore, zoom: Int) -> [TileID: Expected] {
        var regionOfRow: [Int64: String] = [:]
        var order: [String] = []
        for row in plan.regions {
            if !order.contains(row.regionID) { order.append(row.regionID) }
            if let id = row.rowID { regionOfRow[id] = row.regionID }
        }
        for removed in plan.removedRegions {
            let id = removed.key.map { String($0.split(separator: "/")[0]) } ?? "row-\(removed.rowID)"
            if !order.contains(id) { order.append(id) }
            regionOfRow[removed.rowID] = id
        }
        let linked = Set(store.links.filter { $0.key.tile.z == zoom }.map { "\($0.row) \($0.key.urlTemplate) \($0.key.pixelRatio) \($0.key.tile)" })
        var own: [String: [TileID: CoverageState]] = [:]
        for id in order {
            var wanted: [TileID: Bool] = [:]  // tile → every wish of it is linked
            for row in plan.regions where row.regionID == id {
                for set in row.tileSets where set.zooms.contains(zoom) {
                    for tile in F.tiles(row.area, zoom: zoom) {
                        let stored = set.isTMS ? TileID(z: zoom, x: tile.x, y: tile.tmsY) : tile
                        let isLinked = row.rowID.map { linked.contains("\($0) \(set.urlTemplate) \(set.pixelRatio) \(stored)") } ?? false
                        wanted[tile] = (wanted[tile] ?? true) && isLinked
                    }
                }
            }
            var states = wanted.mapValues { $0 ? CoverageState.present : .add }
            for link in store.links where link.key.tile.z == zoom && regionOfRow[link.row] == id {
                let tms = plan.regions.contains { $0.tileSets.contains { $0.urlTemplate == link.key.urlTemplate && $0.isTMS } }
                let tile = tms ? TileID(z: zoom, x: link.key.tile.x, y: link.key.tile.tmsY) : link.key.tile
                if states[tile] == nil { states[tile] = .remove }
            }
            own[id] = states
        }
        var cells: [TileID: Expected] = [:]
        let all = Set(own.values.flatMap(\.keys))
        for tile in all {
            let regions = order.filter { own[$0]?[tile] != nil }
            let states = regions.compactMap { own[$0]?[tile] }
            if regions.count == 1 {
                cells[tile] = Expected(state: states[0], regions: regions, change: nil)
            } else {
                let change = [CoverageState.add, .missing, .present, .remove].first { states.contains($0) }
                cells[tile] = Expected(state: .shared, regions: regions, change: change)
            }
        }
        return cells
    }

    func actual(_ map: CoverageMap, zoom: Int, file: StaticString = #filePath, line: UInt = #line) -> [TileID: Expected] {
        guard let view = map.view(zoom: zoom) else {
            XCTFail("no view of z\(zoom)", file: file, line: line)
            return [:]
        }
        XCTAssertEqual(view.cellZoom, zoom, "z\(zoom) is aggregated", file: file, line: line)
        var cells: [TileID: Expected] = [:]
        for cell in view.cells {
            XCTAssertNil(cells[cell.tile], "\(cell.tile) drawn twice", file: file, line: line)
            XCTAssertNil(cell.tally, file: file, line: line)
            cells[cell.tile] = Expected(state: cell.state, regions: cell.regions.map { map.regions[$0].id }, change: cell.change)
        }
        return cells
    }

    func assertSame(_ actual: [TileID: Expected], _ expected: [TileID: Expected], zoom: Int,
                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(expected.isEmpty, "the oracle has no tile at z\(zoom)", file: file, line: line)
        XCTAssertEqual(actual.count, expected.count, "cells at z\(zoom)", file: file, line: line)
        let wrong = expected.filter { actual[$0.key] != $0.value }.sorted { $0.key < $1.key }
        XCTAssertTrue(wrong.isEmpty, "z\(zoom): \(wrong.count) cells differ, first: "
                      + wrong.prefix(3).map { "\($0.key) expected \($0.value), got \(actual[$0.key].map(\.description) ?? "nothing")" }
                      .joined(separator: "; "), file: file, line: line)
    }

    // MARK: - Plans

    func testWithoutAStoreEveryTileIsToAdd() throws {
        let plan = F.plan([F.row("west", rowID: nil, area: F.west, sets: [F.tileSet(F.vector, zooms: 3...7)])])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: nil)
        XCTAssertEqual(map.views.map(\.zoom), Array(3...7))
        for view in map.views {
            let cover = F.tiles(F.west, zoom: view.zoom)
            XCTAssertEqual(Set(view.cells.map(\.tile)), cover)
            XCTAssertTrue(view.cells.allSatisfy { $0.state == .add && $0.regions == [0] })
            XCTAssertEqual(view.tiles[.add], cover.count)
            XCTAssertEqual(view.regionTiles[0][.add], cover.count)
        }
    }

    func testStatesAgainstTheStoreMatchTheSetOracle() throws {
        let store = InMemoryCoverageStore()
        let west = F.row("west", rowID: 1, area: F.west, sets: [F.tileSet(F.vector, zooms: 4...7), F.tileSet(F.raster, zooms: 5...6, tms: true)])
        let east = F.row("east", rowID: 2, area: F.east, sets: [F.tileSet(F.vector, zooms: 4...7)])
        let fresh = F.row("fresh", rowID: nil, area: .bbox(BoundingBox(west: 10, south: 50, east: 16, north: 54)),
                          sets: [F.tileSet(F.vector, zooms: 5...7)])
        for z in 4...7 {
            // West: every other wanted tile linked, plus tiles outside its box and at another ratio.
            let wanted = F.tiles(F.west, zoom: z).sorted()
            store.link(wanted.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), row: 1, template: F.vector)
            store.link([TileID(z: z, x: 0, y: 0), TileID(z: z, x: (1 << z) - 1, y: 1)], row: 1, template: F.vector)
            store.link(Array(wanted.prefix(3)), row: 1, template: F.vector, ratio: 2)
            if (5...6).contains(z) { store.link(Array(wanted.suffix(5)), row: 1, template: F.raster, tms: true) }
            // East: all of its tiles linked, at the one zoom it no longer wants too.
            store.link(F.tiles(F.east, zoom: z).sorted(), row: 2, template: F.vector)
            // A dropped region of its own, and a dropped row of west (another pack).
            store.link(F.tiles(.bbox(BoundingBox(west: -10, south: 36, east: -6, north: 42)), zoom: z).sorted(), row: 7, template: F.vector)
            store.link(F.tiles(.bbox(BoundingBox(west: 0, south: 44, east: 9, north: 46)), zoom: z).sorted(), row: 8, template: F.raster)
        }
        store.link(F.tiles(F.east, zoom: 8).sorted(), row: 2, template: F.vector)
        store.rows = [1, 2, 7, 8].map { StoredRegion(rowID: $0, definition: F.definition(BoundingBox(west: -10, south: 36, east: -6, north: 42)),
                                                     description: nil) }
        let plan = F.plan([west, east, fresh], removed: [RemovedRegion(rowID: 7, key: "iberia/streets", tileCount: 0, resourceCount: 0),
                                                          RemovedRegion(rowID: 8, key: "west/terrain", tileCount: 0, resourceCount: 0)])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: store)
        XCTAssertEqual(map.regions.map(\.id), ["west", "east", "fresh", "iberia"])
        XCTAssertEqual(map.regions.map(\.role), [.job, .job, .job, .removed])
        XCTAssertEqual(map.views.map(\.zoom), Array(4...8), "z8 holds only links the plan removes")
        for z in 4...8 {
            let expected = oracle(plan, store: store, zoom: z)
            assertSame(actual(map, zoom: z), expected, zoom: z)
            let states = Set(expected.values.map(\.state))
            if z == 5 { XCTAssertEqual(states, [.present, .add, .remove, .shared], "the fixture reaches every plan state") }
        }
    }

    func testPerRegionCountsCountASharedTileForEachRegion() throws {
        let plan = F.plan([F.row("west", rowID: nil, area: F.west, sets: [F.tileSet(F.vector, zooms: 6...6)]),
                           F.row("east", rowID: nil, area: F.east, sets: [F.tileSet(F.vector, zooms: 6...6)])])
        let view = try XCTUnwrap(try CoverageMap.plan(plan, document: F.document(plan), store: nil).view(zoom: 6))
        let west = F.tiles(F.west, zoom: 6), east = F.tiles(F.east, zoom: 6)
        XCTAssertEqual(view.regionTiles[0][.add], west.count)
        XCTAssertEqual(view.regionTiles[1][.add], east.count)
        XCTAssertEqual(view.regionTiles[0][.shared], west.intersection(east).count)
        XCTAssertEqual(view.tiles[.shared], west.intersection(east).count)
        XCTAssertEqual(view.tiles[.add], west.symmetricDifference(east).count)
        XCTAssertGreaterThan(view.tiles[.shared], 0)
        XCTAssertTrue(view.cells.filter { $0.state == .shared }.allSatisfy { $0.regions == [0, 1] && $0.change == .add })
    }

    // MARK: - The cell budget

    func testADenseZoomIsDrawnAsCoarserTilesThatCountEveryTile() throws {
        let store = InMemoryCoverageStore()
        let row = F.row("west", rowID: 1, area: F.west, sets: [F.tileSet(F.vector, zooms: 9...9)])
        let cover = F.tiles(F.west, zoom: 9).sorted()
        store.link(cover.enumerated().filter { $0.offset % 3 != 0 }.map(\.element), row: 1, template: F.vector)
        let plan = F.plan([row])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: store, options: CoverageOptions(cellBudget: 40))
        let view = try XCTUnwrap(map.view(zoom: 9))
        let exact = oracle(plan, store: store, zoom: 9)
        XCTAssertLessThanOrEqual(view.cells.count, 40)
        XCTAssertLessThan(view.cellZoom, 9)
        // The finest zoom that fits: one zoom finer would not.
        let shift = 9 - view.cellZoom
        XCTAssertGreaterThan(Set(cover.map { TileID(z: 0, x: $0.x >> (shift - 1), y: $0.y >> (shift - 1)) }).count, 40)
        var seen = 0
        for cell in view.cells {
            XCTAssertEqual(cell.tile.z, view.cellZoom)
            let inside = exact.filter { $0.key.x >> shift == cell.tile.x && $0.key.y >> shift == cell.tile.y }
            var counts = StateCounts()
            for value in inside.values { counts[value.state] += 1 }
            XCTAssertEqual(cell.tally, counts, "\(cell.tile)")
            XCTAssertEqual(cell.state, CoverageState.precedence.first { counts[$0] > 0 }, "\(cell.tile)")
            XCTAssertNil(cell.change)
            seen += inside.count
        }
        XCTAssertEqual(seen, cover.count, "every tile is in one cell")
        XCTAssertEqual(view.tiles[.add] + view.tiles[.present], cover.count)
    }

    func testViewsShareOneBudget() throws {
        let plan = F.plan([F.row("west", rowID: nil, area: F.west, sets: [F.tileSet(F.vector, zooms: 0...10)])])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: nil, options: CoverageOptions(cellBudget: 500))
        XCTAssertLessThanOrEqual(map.views.reduce(0) { $0 + $1.cells.count }, 500)
        XCTAssertEqual(map.views.first { $0.zoom == 4 }?.cellZoom, 4, "sparse zooms are drawn tile for tile")
        XCTAssertLessThan(map.views.last?.cellZoom ?? 10, 10)
        for view in map.views {
            XCTAssertEqual(view.cells.reduce(0) { $0 + ($1.tally?.total ?? 1) }, F.tiles(F.west, zoom: view.zoom).count, "z\(view.zoom)")
        }
    }

    func testOneZoomMayBeAskedForAndOnlyAZoomWithTiles() throws {
        let plan = F.plan([F.row("west", rowID: nil, area: F.west, sets: [F.tileSet(F.vector, zooms: 3...5)])])
        let map = try CoverageMap.plan(plan, document: F.document(plan), store: nil, options: CoverageOptions(zoom: 4))
        XCTAssertEqual(map.views.map(\.zoom), [4])
        XCTAssertThrowsError(try CoverageMap.plan(plan, document: F.document(plan), store: nil, options: CoverageOptions(zoom: 9))) {
            XCTAssertEqual($0 as? CoverageError, .zoomNotCovered(9, available: [3, 4, 5]))
            XCTAssertEqual(String(describing: $0), "--zoom 9: the picture has tiles at z3–5 only")
        }
    }

    // MARK: - Audits

    func testAnAuditPlacesMissingTilesWhereTheCoverMatchesTheLock() throws {
        let box = BoundingBox(west: -4, south: 43, east: 6, north: 50)
        let store = InMemoryCoverageStore()
        store.rows = [StoredRegion(rowID: 3, definition: F.definition(box), description: Data(#"{"name":"West"}"#.utf8))]
        let cover6 = F.tiles(.bbox(box), zoom: 6).sorted(), cover7 = F.tiles(.bbox(box), zoom: 7).sorted()
        let dropped = Set(cover6.enumerated().filter { $0.offset % 4 == 1 }.map(\.element))
        store.link(cover6.filter { !dropped.contains($0) }, row: 3, template: F.vector, tms: true)
        store.link(Array(cover7.dropLast(5)), row: 3, template: F.vector, tms: true)
        let lock = auditLock(rowID: 3, expected: [6: cover6.count, 7: cover7.count + 2])
        let doc = AuditDocument(store: "./store", summary: StoreSummary(
            regions: [StoreSummary.Region(rowID: 3, definition: F.definition(box), description: Data(#"{"name":"West"}"#.utf8),
                                          tileCounts: [TileCount(urlTemplate: F.vector, zoom: 6, count: cover6.count - dropped.count),
                                                       TileCount(urlTemplate: F.vector, zoom: 7, count: cover7.count - 5)],
                                          resourceCount: 0, tileBytes: 0, resourceBytes: 0, emptyTileCount: 0)],
            tileCount: 0, resourceCount: 0, tileBytes: 0, resourceBytes: 0, orphanTileCount: 0, orphanResourceCount: 0,
            emptyTileCount: 0, resourceCountsByKind: []), integrity: [], lock: lock, unexpectedFiles: [])
        let map = try CoverageMap.audit(doc, lock: lock, store: store)
        XCTAssertEqual(map.regions.map(\.id), ["west"])
        XCTAssertEqual(map.regions.map(\.name), ["West"])
        let z6 = try XCTUnwrap(map.view(zoom: 6))
        XCTAssertEqual(Set(z6.cells.filter { $0.state == .missing }.map(\.tile)), dropped)
        XCTAssertEqual(Set(z6.cells.filter { $0.state == .present }.map(\.tile)), Set(cover6).subtracting(dropped))
        XCTAssertEqual(z6.notes, [])
        // At z7 the lock expects two tiles more than the cover holds: missing ones cannot be placed.
        let z7 = try XCTUnwrap(map.view(zoom: 7))
        XCTAssertEqual(Set(z7.cells.map(\.state)), [.present])
        XCTAssertEqual(z7.notes, ["west/streets: 7 of \(grouped(cover7.count + 2)) tiles missing (\(F.vector)), not placed: "
                                  + "the region's cover differs from the lock's count"])
    }

    private func auditLock(rowID: Int64, expected: [Int: Int]) -> LockDocument {
        let source = SourceSummary(name: "v", tileJSONURL: nil, urlTemplate: F.vector, scheme: "tms", minZoom: 0, maxZoom: 14, tileSize: 512)
        return LockDocument(
            jobName: "coverage", jobDigest: "sha256:0", epoch: 0,
            stylePacks: [LockDocument.PackEntry(id: "streets", style: "s", styleDigest: nil, sources: [source], tileJSONDigests: [:])],
            regions: [LockDocument.RegionEntry(key: "west/streets", regionID: "west", stylePack: "streets", rowID: rowID,
                                               definitionDigest: "", expectedTiles: expected.sorted { $0.key < $1.key }.map {
                                                   TileCount(urlTemplate: F.vector, zoom: $0.key, count: $0.value)
                                               }, expectedResources: 0, isComplete: false)],
            tileCount: 0, resourceCount: 0, byteCount: 0, contentDigest: "")
    }

    // MARK: - Shapes

    func testDefinitionsAreReadLeniently() throws {
        func area(_ json: String) throws -> CoverArea? { CoverageShape.area(definition: try JSONValue.parse(Data(json.utf8))) }
        XCTAssertEqual(try area(#"{"bounds":[48.8,2.3,48.9,2.4]}"#), .bbox(BoundingBox(west: 2.3, south: 48.8, east: 2.4, north: 48.9)))
        XCTAssertEqual(try area(#"{"geometry":{"type":"Point","coordinates":[2,48]}}"#),
                       .paths(lines: [], points: [LngLat(lng: 2, lat: 48)]))
        let collection = #"{"geometry":{"type":"GeometryCollection","geometries":[{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]},"# +
            #"{"type":"LineString","coordinates":[[0,0],[5,5]]}]}}"#
        XCTAssertEqual(try area(collection), .polygons([Polygon(rings: [[LngLat(lng: 0, lat: 0), LngLat(lng: 1, lat: 0),
                                                                          LngLat(lng: 1, lat: 1), LngLat(lng: 0, lat: 0)]])]))
        XCTAssertNil(try area(#"{"geometry":{"type":"Polygon","coordinates":"nonsense"}}"#))
        XCTAssertNil(try area(#"{"bounds":[1,2,3]}"#))
        // A box across the antimeridian is drawn in one piece, east of 180°.
        let shape = CoverageShape(area: .bbox(BoundingBox(west: 170, south: -20, east: -170, north: -10)))
        XCTAssertEqual(shape.rings.first?.map(\.lng), [170, 190, 190, 170])
    }
}
