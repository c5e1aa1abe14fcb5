import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

final class PlannerTests: XCTestCase {
    // MARK: - Fixtures

    static let styleURL = "https://maps.example.com/styles/demo.json"
    static let tileJSONURL = "https://maps.example.com/tiles/streets.json"
    static let spriteURL = "https://maps.example.com/sprites/demo.png"
    static let template = "https://tiles.example.com/streets/{z}/{x}/{y}.pbf"
    static let streets = TileSource(template: template, scheme: .xyz, minZoom: 0, maxZoom: 14, tileSize: 512, type: .vector)

    static let berlin = BoundingBox(west: 13.0, south: 52.3, east: 13.8, north: 52.7)
    static let berlinEast = BoundingBox(west: 13.4, south: 52.5, east: 14.2, north: 52.9)

    static func resolvedPack(sources: [TileSource] = [streets], pixelRatio: Int = 1) -> ResolvedPack {
        ResolvedPack(pack: StylePack(id: "demo", style: styleURL, pixelRatio: pixelRatio),
                     resources: [ResourceRef(url: styleURL, kind: .style), ResourceRef(url: tileJSONURL, kind: .source),
                                 ResourceRef(url: spriteURL, kind: .spriteImage)],
                     tileSources: sources, summaries: [])
    }

    static func region(_ id: String, _ box: BoundingBox = berlin, zooms: ClosedRange<Int> = 0...6,
                       metadata: JSONObject = JSONObject()) -> Region {
        Region(id: id, name: id.capitalized, area: .bbox(box), minZoom: zooms.lowerBound, maxZoom: zooms.upperBound,
               stylePacks: ["demo"], metadata: metadata)
    }

    static func input(_ regions: [Region], limits: Limits = Limits(), rowsInLockFile: [String: Int64] = [:],
                      pack: ResolvedPack = resolvedPack(), assumedTileBytes: Int = Planner.defaultTileBytes) -> PlanInput {
        PlanInput(job: Job(name: "test", stylePacks: [pack.pack], regions: regions, limits: limits),
                  jobDigest: "digest", epoch: 0, packs: [pack.pack.id: pack], rowsInLockFile: rowsInLockFile,
                  assumedTileBytes: assumedTileBytes)
    }

    static func cover(_ box: BoundingBox, _ z: Int) -> Set<TileID> {
        Set(TileCover(.bbox(box), zoom: z))
    }

    /// Carries a plan out on an in-memory store the way `Applier` does, with every download
    /// succeeding; returns the lock's rows by key.
    @discardableResult
    static func apply(_ plan: Plan, to store: InMemoryStore, tilePayload: Data = Data(repeating: 7, count: 100))
        throws -> [String: Int64] {
        var rowIDs: [String: Int64] = [:]
        for region in plan.regions {
            if let rowID = region.rowID {
                if region.action == .update {
                    try store.updateRegion(rowID, definition: region.definition, description: region.description)
                }
                rowIDs[region.key] = rowID
            } else {
                rowIDs[region.key] = try store.insertRegion(definition: region.definition, description: region.description)
            }
        }
        var items: [FetchedItem] = []
        for region in plan.regions {
            for ref in region.resources.wanted where try store.resourceData(url: ref.url) == nil {
                items.append(FetchedItem(request: FetchRequest(url: ref.url, kind: ref.kind),
                                         body: FetchedBody(data: Data(ref.url.utf8))))
            }
        }
        for group in plan.tileGroups {
            try group.forEachTile(store: store) { tile, isStored in
                if !isStored {
                    items.append(FetchedItem(request: group.tileSet.request(for: tile), body: FetchedBody(data: tilePayload)))
                }
            }
        }
        try store.write(items)
        for region in plan.regions {
            guard let rowID = rowIDs[region.key] else { continue }
            var wanted = Set<TileKey>()
            for set in region.tileSets {
                for z in set.zooms {
                    for tile in set.cover(of: region.area, zoom: z) { wanted.insert(set.key(for: tile)) }
                }
            }
            try store.linkTiles(Array(wanted), toRegion: rowID)
            try store.unlinkTiles(Array(store.linkedTileKeys(region: rowID).subtracting(wanted)), fromRegion: rowID)
            let urls = region.resources.wanted.map(\.url)
            try store.linkResources(urls, toRegion: rowID)
            try store.unlinkResources(fromRegion: rowID, keeping: Set(urls))
        }
        try store.deleteRegions(plan.removedRegions.map(\.rowID))
        _ = try store.pruneOrphans()
        return rowIDs
    }

    // MARK: - Fresh stores

    func testFreshPlanAddsEveryCoveredTilePerZoom() throws {
        for store in [nil, InMemoryStore()] as [InMemoryStore?] {
            let plan = try Planner.plan(Self.input([Self.region("berlin", zooms: 2...9)]), store: store)
            XCTAssertEqual(plan.regions.count, 1)
            let row = try XCTUnwrap(plan.regions.first)
            XCTAssertEqual(row.action, .add)
            XCTAssertNil(row.rowID)
            XCTAssertEqual(row.key, "berlin/demo")
            XCTAssertEqual(row.zoomChanges.map(\.zoom), Array(2...9))
            for change in row.zoomChanges {
                XCTAssertEqual(change.urlTemplate, Self.template)
                XCTAssertEqual(change.counts, ChangeCounts(add: TileCover.count(.bbox(Self.berlin), zoom: change.zoom)),
                               "z\(change.zoom)")
            }
            let total = TileCover.count(.bbox(Self.berlin), zooms: 2...9)
            XCTAssertEqual(plan.tilesToAdd, total)
            XCTAssertEqual(plan.tilesToDownload, total)
            XCTAssertEqual(plan.tilesToKeep, 0)
            XCTAssertEqual(plan.tilesToRemove, 0)
            XCTAssertEqual(plan.bytesToDownload, Int64(total * Planner.defaultTileBytes))
            XCTAssertEqual(row.estimatedBytes, Int64(total * Planner.defaultTileBytes))
            XCTAssertEqual(row.resources.add.map(\.url), [Self.spriteURL, Self.styleURL, Self.tileJSONURL].sorted())
            XCTAssertEqual(plan.stylePacks.first?.missing.count, 3)
            XCTAssertTrue(plan.removedRegions.isEmpty)
            XCTAssertTrue(plan.hasChanges)
        }
    }

    func testPlanningNeverWritesToTheStore() throws {
        let store = InMemoryStore()
        _ = try Planner.plan(Self.input([Self.region("berlin")]), store: store)
        XCTAssertEqual(store.writeCount, 0)
        XCTAssertTrue(try store.regions().isEmpty)
    }

    func testOverlappingRegionsLinkSharedTilesTwiceButDownloadThemOnce() throws {
        let regions = [Self.region("west", Self.berlin), Self.region("east", Self.berlinEast)]
        let plan = try Planner.plan(Self.input(regions), store: InMemoryStore())
        var links = 0
        var union = 0
        for z in 0...6 {
            let a = Self.cover(Self.berlin, z)
            let b = Self.cover(Self.berlinEast, z)
            links += a.count + b.count
            union += a.union(b).count
        }
        XCTAssertEqual(plan.tilesToAdd, links)
        XCTAssertEqual(plan.tilesToDownload, union)
        XCTAssertLessThan(union, links, "the boxes must share tiles for this test to mean anything")
        XCTAssertEqual(plan.bytesToDownload, Int64(union * Planner.defaultTileBytes))
    }

    func testTileSourceZoomRangeClampsTheRegionZooms() throws {
        let source = TileSource(template: Self.template, minZoom: 3, maxZoom: 5)
        let plan = try Planner.plan(Self.input([Self.region("berlin", zooms: 0...8)], pack: Self.resolvedPack(sources: [source])),
                                    store: nil)
        XCTAssertEqual(plan.regions.first?.zoomChanges.map(\.zoom), [3, 4, 5])
    }

    // MARK: - Convergence

    func testReplanAfterApplyHasNoChanges() throws {
        let store = InMemoryStore()
        let regions = [Self.region("west", Self.berlin, zooms: 0...8), Self.region("east", Self.berlinEast, zooms: 0...8)]
        let first = try Planner.plan(Self.input(regions), store: store)
        let lock = try Self.apply(first, to: store)

        var plans: [Plan] = []
        for rowsInLockFile in [lock, [:]] {
            let plan = try Planner.plan(Self.input(regions, rowsInLockFile: rowsInLockFile), store: store)
            plans.append(plan)
            XCTAssertEqual(plan.regions.map(\.rowID), [lock["west/demo"], lock["east/demo"]])
            XCTAssertEqual(plan.tilesToAdd, 0)
            XCTAssertEqual(plan.tilesToRemove, 0)
            XCTAssertEqual(plan.tilesToKeep, first.tilesToAdd)
            XCTAssertEqual(plan.tilesToDownload, 0)
            XCTAssertEqual(plan.bytesToDownload, 0)
            XCTAssertTrue(plan.removedRegions.isEmpty)
            XCTAssertEqual(plan.stylePacks.first?.missing, [])
            for row in plan.regions {
                XCTAssertFalse(row.hasTileChanges)
                XCTAssertFalse(row.resources.hasChanges)
                XCTAssertTrue(row.staleTileCounts.isEmpty)
                XCTAssertEqual(row.estimatedBytes, 0)
            }
        }
        XCTAssertFalse(plans.contains { plan in plan.regions.contains { $0.rowID != nil && $0.action == .add } },
                       "a matched, unchanged row is kept, not created again")
        for plan in plans {
            XCTAssertEqual(plan.regions.map(\.action), [.keep, .keep])
            XCTAssertFalse(plan.hasChanges)
        }
    }

    // MARK: - Changes

    func testDroppedRegionIsRemovedWithItsTileCount() throws {
        let store = InMemoryStore()
        let west = Self.region("west", Self.berlin)
        let east = Self.region("east", Self.berlinEast)
        let lock = try Self.apply(try Planner.plan(Self.input([west, east]), store: store), to: store)

        let plan = try Planner.plan(Self.input([west], rowsInLockFile: lock), store: store)
        let eastTiles = TileCover.count(.bbox(Self.berlinEast), zooms: 0...6)
        XCTAssertEqual(plan.removedRegions, [RemovedRegion(rowID: try XCTUnwrap(lock["east/demo"]), key: "east/demo",
                                                           tileCount: eastTiles, resourceCount: 3)])
        XCTAssertEqual(plan.tilesToRemove, eastTiles)
        XCTAssertEqual(plan.tilesToDownload, 0)
        XCTAssertTrue(plan.hasChanges)

        // Without a lock the row is still found to be unwanted, but has no key.
        let unlocked = try Planner.plan(Self.input([west]), store: store)
        XCTAssertEqual(unlocked.removedRegions.map(\.key), [nil])
        XCTAssertEqual(unlocked.removedRegions.map(\.tileCount), [eastTiles])
    }

    func testNarrowedZoomRangeReportsTheDroppedZoomsAsStale() throws {
        let store = InMemoryStore()
        let lock = try Self.apply(try Planner.plan(Self.input([Self.region("berlin", zooms: 0...6)]), store: store), to: store)

        let plan = try Planner.plan(Self.input([Self.region("berlin", zooms: 2...4)], rowsInLockFile: lock), store: store)
        let row = try XCTUnwrap(plan.regions.first)
        XCTAssertEqual(row.rowID, lock["berlin/demo"])
        XCTAssertEqual(row.action, .update, "min_zoom and max_zoom changed")
        XCTAssertEqual(row.zoomChanges.map(\.zoom), [2, 3, 4])
        for change in row.zoomChanges {
            XCTAssertEqual(change.counts, ChangeCounts(keep: TileCover.count(.bbox(Self.berlin), zoom: change.zoom)))
        }
        let expectedStale = [0, 1, 5, 6].map {
            TileCount(urlTemplate: Self.template, zoom: $0, count: TileCover.count(.bbox(Self.berlin), zoom: $0))
        }
        XCTAssertEqual(row.staleTileCounts, expectedStale)
        XCTAssertEqual(row.totals.remove, expectedStale.reduce(0) { $0 + $1.count })
        XCTAssertEqual(plan.tilesToDownload, 0)
        XCTAssertTrue(plan.removedRegions.isEmpty)

        // After the apply the stale links are gone and nothing is left to do.
        let lock2 = try Self.apply(plan, to: store)
        XCTAssertEqual(lock2, lock)
        let again = try Planner.plan(Self.input([Self.region("berlin", zooms: 2...4)], rowsInLockFile: lock2), store: store)
        XCTAssertEqual(again.tilesToRemove, 0)
        XCTAssertEqual(again.tilesToAdd, 0)
    }

    func testAGrownRegionIsDiffedWithoutCountingItsLinksByTemplateAndZoom() throws {
        let store = InMemoryStore()
        let lock = try Self.apply(try Planner.plan(Self.input([Self.region("berlin", zooms: 2...6)]), store: store), to: store)
        let counted = store.linkedTileCountsReads

        // Every link is a tile the grown row keeps: the kept tiles add up to the links.
        let grown = try Planner.plan(Self.input([Self.region("berlin", zooms: 2...8)], rowsInLockFile: lock), store: store)
        XCTAssertEqual(store.linkedTileCountsReads, counted, "no join over the links when every link is kept")
        let row = try XCTUnwrap(grown.regions.first)
        XCTAssertEqual(row.zoomChanges.map(\.counts), (2...8).map { z in
            let count = TileCover.count(.bbox(Self.berlin), zoom: z)
            return z <= 6 ? ChangeCounts(keep: count) : ChangeCounts(add: count)
        })
        XCTAssertEqual(row.staleTileCounts, [])
        let linked = TileCover.count(.bbox(Self.berlin), zooms: 2...6)
        XCTAssertTrue(grown.notes.contains { $0.message.contains("with its \(plural(linked, "tile")) until") }, "\(grown.notes)")

        // Narrowed, some links are not kept: they are counted by template and zoom.
        let narrowed = try Planner.plan(Self.input([Self.region("berlin", zooms: 2...4)], rowsInLockFile: lock), store: store)
        XCTAssertEqual(store.linkedTileCountsReads, counted + 1)
        XCTAssertEqual(narrowed.regions.first?.staleTileCounts.map(\.zoom), [5, 6])
        XCTAssertTrue(narrowed.notes.contains { $0.message.contains("with its \(plural(linked, "tile")) until") })
    }

    func testMovedBBoxIsAnUpdateWithPerZoomAddsAndRemoves() throws {
        let store = InMemoryStore()
        let zooms = 0...9
        let lock = try Self.apply(try Planner.plan(Self.input([Self.region("berlin", zooms: zooms)]), store: store), to: store)

        let moved = Self.region("berlin", Self.berlinEast, zooms: zooms)
        let plan = try Planner.plan(Self.input([moved], rowsInLockFile: lock), store: store)
        let row = try XCTUnwrap(plan.regions.first)
        XCTAssertEqual(row.rowID, lock["berlin/demo"])
        XCTAssertEqual(row.action, .update)
        var download = 0
        for change in row.zoomChanges {
            let old = Self.cover(Self.berlin, change.zoom)
            let new = Self.cover(Self.berlinEast, change.zoom)
            XCTAssertEqual(change.counts, ChangeCounts(add: new.subtracting(old).count, remove: old.subtracting(new).count,
                                                       keep: new.intersection(old).count), "z\(change.zoom)")
            download += new.subtracting(old).count
        }
        XCTAssertEqual(row.zoomChanges.map(\.zoom), Array(zooms))
        XCTAssertGreaterThan(download, 0)
        XCTAssertEqual(plan.tilesToDownload, download)
        XCTAssertEqual(row.estimatedBytes, Int64(download * 100), "measured mean tile size (100 bytes) is used")
        XCTAssertTrue(plan.removedRegions.isEmpty)

        // Without the lock the moved region is a new row and the old one goes.
        let unlocked = try Planner.plan(Self.input([moved]), store: store)
        XCTAssertEqual(unlocked.regions.first?.action, .add)
        XCTAssertEqual(unlocked.removedRegions.map(\.rowID), [lock["berlin/demo"]].compactMap { $0 })
    }

    // MARK: - Matching rows

    func testLockedRowsWinOverDefinitionMatching() throws {
        let store = InMemoryStore()
        let a = Self.region("a", Self.berlin)
        let b = Self.region("b", Self.berlinEast)
        let lock = try Self.apply(try Planner.plan(Self.input([a, b]), store: store), to: store)
        let rowA = try XCTUnwrap(lock["a/demo"])
        let rowB = try XCTUnwrap(lock["b/demo"])

        // A lock that maps each region to the other's row is obeyed, so both rows are updated.
        let swapped = try Planner.plan(Self.input([a, b], rowsInLockFile: ["a/demo": rowB, "b/demo": rowA]), store: store)
        XCTAssertEqual(swapped.regions.map(\.rowID), [rowB, rowA])
        XCTAssertEqual(swapped.regions.map(\.action), [.update, .update])
        XCTAssertTrue(swapped.removedRegions.isEmpty)
    }

    func testLockedRowIsNotTakenByAnEarlierRegionWithTheSameDefinition() throws {
        let store = InMemoryStore()
        let old = Self.region("old", Self.berlin)
        let lock = try Self.apply(try Planner.plan(Self.input([old]), store: store), to: store)
        let row = try XCTUnwrap(lock["old/demo"])

        // "copy" is new and has exactly the definition of the stored row; "old" moved but the
        // lock still maps it to its row. The lock should win: "old" updates its row, "copy" is created.
        let copy = Self.region("copy", Self.berlin)
        let moved = Self.region("old", Self.berlinEast)
        let plan = try Planner.plan(Self.input([copy, moved], rowsInLockFile: lock), store: store)
        XCTAssertNotEqual(plan.regions.first?.rowID, row, "an unlocked region with an equal definition never claims a locked row")
        XCTAssertEqual(plan.regions.map(\.rowID), [nil, row])
        XCTAssertEqual(plan.regions.map(\.action), [.add, .update])
    }

    func testLockNamingAMissingRowFallsBackToDefinitionMatching() throws {
        let store = InMemoryStore()
        let region = Self.region("berlin")
        let lock = try Self.apply(try Planner.plan(Self.input([region]), store: store), to: store)
        let plan = try Planner.plan(Self.input([region], rowsInLockFile: ["berlin/demo": 99]), store: store)
        XCTAssertEqual(plan.regions.first?.rowID, lock["berlin/demo"])
        XCTAssertTrue(plan.removedRegions.isEmpty)
    }

    func testWithoutLockRowsMatchOnDefinitionAndDescription() throws {
        let store = InMemoryStore()
        let base = Self.region("r", Self.berlin)
        let definition = RegionDefinition.json(region: base, styleURL: Self.styleURL, pixelRatio: 1, includeIdeographs: false)
        let first = try store.insertRegion(definition: definition, description: Data(#"{"team":"x"}"#.utf8))
        let second = try store.insertRegion(definition: definition, description: Data(#"{"team":"y"}"#.utf8))
        let other = try store.insertRegion(definition: Data("{}".utf8), description: nil)

        let region = Self.region("r", Self.berlin, metadata: JSONObject([("team", "y")]))
        let plan = try Planner.plan(Self.input([region]), store: store)
        XCTAssertEqual(plan.regions.first?.rowID, second)
        XCTAssertEqual(Set(plan.removedRegions.map(\.rowID)), [first, other])

        // Different metadata matches no row: the region is created.
        let stranger = Self.region("r", Self.berlin, metadata: JSONObject([("team", "z")]))
        let created = try Planner.plan(Self.input([stranger]), store: store)
        XCTAssertNil(created.regions.first?.rowID)
        XCTAssertEqual(created.regions.first?.action, .add)
        XCTAssertEqual(created.removedRegions.count, 3)
    }

    // MARK: - Limits

    func testPlanetAtAllZoomsIsRefusedByTheDefaultLimit() throws {
        let planet = Self.region("planet", .world, zooms: 0...22)
        let pack = Self.resolvedPack(sources: [TileSource(template: Self.template, maxZoom: 22)])
        XCTAssertThrowsError(try Planner.plan(Self.input([planet], pack: pack), store: InMemoryStore())) { error in
            guard case PlanError.limitExceeded(let message)? = error as? PlanError else {
                return XCTFail("expected limitExceeded, got \(error)")
            }
            XCTAssertTrue(message.contains("default limit"), message)
            XCTAssertTrue(message.contains(grouped(Planner.defaultMaxTiles)), message)
        }
    }

    func testPlanetPolygonAtAllZoomsIsRefused() throws {
        let ring = [LngLat(lng: -180, lat: -85), LngLat(lng: 180, lat: -85), LngLat(lng: 180, lat: 85),
                    LngLat(lng: -180, lat: 85), LngLat(lng: -180, lat: -85)]
        let geoJSON: JSONValue = ["type": "Polygon",
                                  "coordinates": [.array(ring.map { [.double($0.lng), .double($0.lat)] })]]
        let planet = Region(id: "planet", name: "Planet", area: .geometry([Polygon(rings: [ring])], geoJSON: geoJSON),
                            minZoom: 0, maxZoom: 22, stylePacks: ["demo"])
        let pack = Self.resolvedPack(sources: [TileSource(template: Self.template, maxZoom: 22)])
        XCTAssertThrowsError(try Planner.plan(Self.input([planet], limits: Limits(maxTiles: 1_000), pack: pack), store: nil)) {
            XCTAssertEqual(($0 as? PlanError).map { if case .limitExceeded = $0 { return true } else { return false } }, true)
        }
    }

    func testMaxTilesIsAnInclusiveCap() throws {
        let region = Self.region("berlin", zooms: 0...8)
        let count = TileCover.count(.bbox(Self.berlin), zooms: 0...8)
        XCTAssertNoThrow(try Planner.plan(Self.input([region], limits: Limits(maxTiles: count)), store: nil))
        XCTAssertThrowsError(try Planner.plan(Self.input([region], limits: Limits(maxTiles: count - 1)), store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("limits.maxTiles"), message)
        }
    }

    func testMaxBytesIsCheckedAgainstTheEstimate() throws {
        let region = Self.region("berlin", zooms: 0...8)
        let count = TileCover.count(.bbox(Self.berlin), zooms: 0...8)
        let bytes = Int64(count * 1_000)
        XCTAssertNoThrow(try Planner.plan(Self.input([region], limits: Limits(maxBytes: bytes), assumedTileBytes: 1_000),
                                          store: nil))
        XCTAssertThrowsError(try Planner.plan(Self.input([region], limits: Limits(maxBytes: bytes - 1), assumedTileBytes: 1_000),
                                              store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("limits.maxBytes"), message)
        }
    }

    func testMaxBytesCountsOnlyWhatMustBeDownloaded() throws {
        // docs/job-file.md: "The most bytes a plan may download (estimated)".
        let store = InMemoryStore()
        let region = Self.region("berlin", zooms: 0...8)
        let lock = try Self.apply(try Planner.plan(Self.input([region]), store: store), to: store)
        // maxBytes caps what the store holds (the bundle size), not only what is left to download.
        XCTAssertThrowsError(try Planner.plan(Self.input([region], limits: Limits(maxBytes: 1), rowsInLockFile: lock), store: store)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("limits.maxBytes = 1"), message)
        }
        let roomy = try Planner.plan(Self.input([region], limits: Limits(maxBytes: 1 << 40), rowsInLockFile: lock), store: store)
        XCTAssertEqual(roomy.bytesToDownload, 0)
    }

    func testRegionLimitsRefuseOnlyTheRegionOverItsCap() throws {
        var berlin = Self.region("berlin", zooms: 0...8)
        let count = TileCover.count(.bbox(Self.berlin), zooms: 0...8)
        berlin.limits = Limits(maxTiles: count - 1)
        XCTAssertThrowsError(try Planner.plan(Self.input([berlin, Self.region("other", zooms: 0...2)]), store: nil)) {
            guard case PlanError.limitExceeded(let message)? = $0 as? PlanError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("region 'berlin' covers \(count) tiles"), message)
        }
        berlin.limits = Limits(maxTiles: count, maxBytes: Int64(count * Planner.defaultTileBytes))
        XCTAssertNoThrow(try Planner.plan(Self.input([berlin]), store: nil))
        berlin.limits = Limits(maxBytes: Int64(count * Planner.defaultTileBytes) - 1)
        XCTAssertThrowsError(try Planner.plan(Self.input([berlin]), store: nil))
    }

    func testDriftedTileJSONRefetchesOnlyItsOwnSource() throws {
        // A region with a bare template listed before a TileJSON: the drifted TileJSON's source,
        // and only it, is fetched again, however the two are ordered in the job.
        let bare = TileSource(template: "https://bare.example.com/{z}/{x}/{y}.pbf", maxZoom: 14)
        let fromJSON = TileSource(template: "https://json.example.com/{z}/{x}/{y}.pbf", maxZoom: 14)
        let url = "https://json.example.com/tiles.json"
        var extra = ResolvedTilesets()
        extra.append(bare, tileJSONURL: nil)
        extra.append(fromJSON, tileJSONURL: url)
        var region = Self.region("berlin", zooms: 0...3)
        region.stylePacks = []
        region.tilesets = [bare.template, url]
        var input = Self.input([region])
        input.regionTilesets = ["berlin": extra]
        input.documents = [url: FetchedBody(data: Data("{\"tiles\":[]}".utf8))]
        input.pinnedDigests = [url: "sha256:" + SHA256.hex("an older TileJSON")]
        let plan = try Planner.plan(input, store: nil)
        XCTAssertEqual(plan.drift.map(\.url), [url])
        XCTAssertEqual(plan.refetchTemplates, [fromJSON.template])
        XCTAssertEqual(extra.resources, [ResourceRef(url: url, kind: .source)])
    }

    func testMaxTilesCountsSharedTilesOnce() throws {
        // docs/job-file.md: "The most tiles the store may hold"; two equal regions hold each tile once.
        let regions = [Self.region("a", Self.berlin, zooms: 0...5), Self.region("b", Self.berlin, zooms: 0...5)]
        let count = TileCover.count(.bbox(Self.berlin), zooms: 0...5)
        let result = Result { try Planner.plan(Self.input(regions, limits: Limits(maxTiles: count)), store: nil) }
        XCTAssertEqual(try result.get().tilesToDownload, count)
    }

    // MARK: - TMS and pixel ratios

    func testTMSTilesLinkedWithFlippedRowsAreKept() throws {
        let tms = TileSource(template: "https://tiles.example.com/tms/{z}/{x}/{y}.png", scheme: .tms, maxZoom: 14,
                             tileSize: 512, type: .raster)
        let pack = Self.resolvedPack(sources: [tms])
        let store = InMemoryStore()
        let region = Self.region("berlin", zooms: 1...8)
        let lock = try Self.apply(try Planner.plan(Self.input([region], pack: pack), store: store), to: store)
        let rowID = try XCTUnwrap(lock["berlin/demo"])

        // The store holds the rows counted from the south.
        let expected = Set((1...8).flatMap { z in Self.cover(Self.berlin, z).map { TileID(z: z, x: $0.x, y: $0.tmsY) } })
        XCTAssertEqual(Set(store.linkedTileKeys(region: rowID).map(\.tile)), expected)

        let plan = try Planner.plan(Self.input([region], rowsInLockFile: lock, pack: pack), store: store)
        let row = try XCTUnwrap(plan.regions.first)
        XCTAssertEqual(row.totals, ChangeCounts(keep: TileCover.count(.bbox(Self.berlin), zooms: 1...8)))
        XCTAssertEqual(plan.tilesToDownload, 0)
    }

    func testTMSTilesLinkedWithUnflippedRowsAreReplaced() throws {
        let store = InMemoryStore()
        let region = Self.region("berlin", zooms: 4...4)
        let xyz = Self.resolvedPack(sources: [TileSource(template: Self.template)])
        let lock = try Self.apply(try Planner.plan(Self.input([region], pack: xyz), store: store), to: store)
        let tms = Self.resolvedPack(sources: [TileSource(template: Self.template, scheme: .tms)])
        let plan = try Planner.plan(Self.input([region], rowsInLockFile: lock, pack: tms), store: store)
        let count = TileCover.count(.bbox(Self.berlin), zoom: 4)
        XCTAssertEqual(plan.regions.first?.totals, ChangeCounts(add: count, remove: count))
        XCTAssertEqual(plan.tilesToDownload, count)
    }

    func testPixelRatioChangeReplacesRatioTiles() throws {
        let ratioTemplate = "https://tiles.example.com/sat/{z}/{x}/{y}{ratio}.png"
        let source = TileSource(template: ratioTemplate, maxZoom: 14, tileSize: 512, type: .raster)
        let store = InMemoryStore()
        let region = Self.region("berlin", zooms: 0...5)
        let lock = try Self.apply(try Planner.plan(Self.input([region], pack: Self.resolvedPack(sources: [source])),
                                                   store: store), to: store)
        let plan = try Planner.plan(Self.input([region], rowsInLockFile: lock,
                                               pack: Self.resolvedPack(sources: [source], pixelRatio: 2)), store: store)
        let count = TileCover.count(.bbox(Self.berlin), zooms: 0...5)
        let row = try XCTUnwrap(plan.regions.first)
        XCTAssertEqual(row.tileSets.first?.pixelRatio, 2)
        XCTAssertEqual(plan.tilesToDownload, count, "every @2x tile is new")
        XCTAssertEqual(row.totals, ChangeCounts(add: count, remove: count))
    }
    // MARK: - Region definition

    func testBBoxDefinitionIsMapLibresJSONByteForByte() {
        let region = Region(id: "berlin", name: "Berlin", area: .bbox(BoundingBox(west: 13, south: 52.3, east: 13.8, north: 52.7)),
                            minZoom: 0, maxZoom: 10, stylePacks: ["demo"])
        let json = RegionDefinition.json(region: region, styleURL: "https://maps.example.com/styles/demo.json",
                                         pixelRatio: 2, includeIdeographs: false)
        XCTAssertEqual(String(decoding: json, as: UTF8.self),
                       #"{"style_url":"https://maps.example.com/styles/demo.json","min_zoom":0.0,"max_zoom":10.0,"#
                           + #""pixel_ratio":2.0,"include_ideographs":false,"bounds":[52.3,13.0,52.7,13.8]}"#)
    }

    func testGeometryDefinitionWritesEveryCoordinateAsADouble() {
        let ring = [LngLat(lng: 0, lat: 0), LngLat(lng: 1, lat: 0), LngLat(lng: 1, lat: 1), LngLat(lng: 0, lat: 0)]
        let geoJSON: JSONValue = ["type": "MultiPolygon",
                                  "coordinates": [[[[0, 0], [1, 0], [1.5, 1], [0, 0]]], [[[-2, -3], [-1, -3], [-1, -2], [-2, -3]]]]]
        let region = Region(id: "shape", name: "Shape", area: .geometry([Polygon(rings: [ring])], geoJSON: geoJSON),
                            minZoom: 3, maxZoom: 14, stylePacks: ["demo"])
        let json = RegionDefinition.json(region: region, styleURL: "s", pixelRatio: 1, includeIdeographs: true)
        XCTAssertEqual(String(decoding: json, as: UTF8.self),
                       #"{"style_url":"s","min_zoom":3.0,"max_zoom":14.0,"pixel_ratio":1.0,"include_ideographs":true,"#
                           + #""geometry":{"type":"MultiPolygon","coordinates":[[[[0.0,0.0],[1.0,0.0],[1.5,1.0],[0.0,0.0]]],"#
                           + #"[[[-2.0,-3.0],[-1.0,-3.0],[-1.0,-2.0],[-2.0,-3.0]]]]}}"#)
    }

    func testDescriptionIsTheMetadataInJobKeyOrder() {
        let region = Self.region("r", metadata: JSONObject([("zeta", 1), ("alpha", "x"), ("nested", ["b": 2.5, "a": nil])]))
        XCTAssertEqual(String(decoding: RegionDefinition.description(region: region), as: UTF8.self),
                       #"{"zeta":1,"alpha":"x","nested":{"b":2.5,"a":null}}"#)
        XCTAssertEqual(String(decoding: RegionDefinition.description(region: Self.region("r")), as: UTF8.self), "{}")
    }

    func testPlannedRowsCarryTheDefinitionOfTheirPack() throws {
        let pack = ResolvedPack(pack: StylePack(id: "demo", style: Self.styleURL, pixelRatio: 3, glyphs: .all),
                                resources: [], tileSources: [Self.streets], summaries: [])
        let region = Self.region("berlin", zooms: 1...2)
        let plan = try Planner.plan(Self.input([region], pack: pack), store: nil)
        XCTAssertEqual(plan.regions.first?.definition,
                       RegionDefinition.json(region: region, styleURL: Self.styleURL, pixelRatio: 3, includeIdeographs: true))
        XCTAssertEqual(plan.regions.first?.description, RegionDefinition.description(region: region))
    }
}
