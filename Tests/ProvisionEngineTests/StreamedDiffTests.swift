import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
@testable import ProvisionStore
import TileMath
import XCTest

/// The planner reads the store a column at a time (`forEachStoredTile`). These tests plan against
/// a real offline database holding every awkward kind of row near the job's covers, and compare
/// with the diff made the old way: every stored key and every link read into sets (by SQL of
/// their own) and intersected with the covers.
final class StreamedDiffTests: XCTestCase {
    private static let vector = "https://v.example.com/{z}/{x}/{y}.pbf"
    private static let raster = "https://r.example.com/{z}/{x}/{y}{ratio}.png"
    private static let elsewhere = "https://old.example.com/{z}/{x}/{y}.pbf"
    private static let sources = [
        TileSource(template: vector, scheme: .xyz, maxZoom: 14, type: .vector),
        TileSource(template: raster, scheme: .tms, maxZoom: 14, tileSize: 256, type: .raster),
    ]
    private static let style = "https://s.example.com/style.json"

    private var store: OfflineDatabase!
    private var url: URL!

    override func setUpWithError() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("streamed-diff-\(UUID().uuidString).db")
        store = try OfflineDatabase(url: url, epoch: 1_700_000_000)
    }

    override func tearDownWithError() throws {
        try store?.close()
        try? FileManager.default.removeItem(at: url)
    }

    private static func box(_ id: String, _ box: BoundingBox, _ zooms: ClosedRange<Int>) -> Region {
        Region(id: id, name: id, area: .bbox(box), minZoom: zooms.lowerBound, maxZoom: zooms.upperBound, stylePacks: ["demo"])
    }

    /// A concave polygon with a hole, so its columns have one, two or no spans.
    private static let polygon: Region = {
        let outer = [LngLat(lng: 12.6, lat: 52.0), LngLat(lng: 14.4, lat: 52.1), LngLat(lng: 13.5, lat: 52.5),
                     LngLat(lng: 14.3, lat: 53.1), LngLat(lng: 12.7, lat: 52.9), LngLat(lng: 12.6, lat: 52.0)]
        let hole = [LngLat(lng: 12.9, lat: 52.55), LngLat(lng: 13.3, lat: 52.55), LngLat(lng: 13.3, lat: 52.85),
                    LngLat(lng: 12.9, lat: 52.85), LngLat(lng: 12.9, lat: 52.55)]
        return Region(id: "poly", name: "poly", area: .geometry([Polygon(rings: [outer, hole])], geoJSON: .null),
                      minZoom: 5, maxZoom: 11, stylePacks: ["demo"])
    }()

    private static let regions = [
        box("box", BoundingBox(west: 12.9, south: 52.2, east: 14.1, north: 52.9), 3...10),
        polygon,
        // Linked below at every zoom from 1 to 11: the zooms outside 2...4 are stale.
        box("gap", BoundingBox(west: 13.3, south: 52.4, east: 13.5, north: 52.6), 2...4),
        box("fresh", BoundingBox(west: 13.6, south: 52.3, east: 14.6, north: 52.7), 4...6),
    ]

    /// A deterministic coin for a key and a purpose: true for `percent` % of keys.
    private static func coin(_ key: TileKey, _ salt: Int, _ percent: Int) -> Bool {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.urlTemplate.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for value in [key.pixelRatio, key.tile.z, key.tile.x, key.tile.y, salt] {
            h = (h ^ UInt64(bitPattern: Int64(value))) &* 0x100_0000_01b3
            h ^= h >> 29
        }
        return Int(h % 100) < percent
    }

    /// Fills the store: for three templates (one not in the job), both pixel ratios and zooms
    /// 1–11, about 60% of the tiles of a margin around the job's covers, some empty; TMS rows
    /// stored flipped for the most part and unflipped for the rest; each linked to each of four
    /// region rows (three the job continues, one it drops) with `linkPercent` % chance, else to
    /// none. Returns the rows by key.
    private func fill(linkPercent: Int) throws -> [String: Int64] {
        var rows: [String: Int64] = [:]
        for key in ["box/demo", "poly/demo", "gap/demo", "other/demo"] {
            rows[key] = try store.insertRegion(definition: Data(#"{"k":"\#(key)"}"#.utf8), description: nil)
        }
        let west = BoundingBox(west: 12.4, south: 51.8, east: 14.8, north: 53.3)
        for template in [Self.vector, Self.raster, Self.elsewhere] {
            for ratio in [1, 2] {
                for z in 1...11 {
                    var keys: [TileKey] = []
                    for tile in TileCover(.bbox(west), zoom: z) {
                        var key = TileKey(urlTemplate: template, pixelRatio: ratio, tile: tile)
                        if template == Self.raster && !Self.coin(key, 1, 20) { key.tile.y = tile.tmsY }
                        if Self.coin(key, 2, 60) { keys.append(key) }
                    }
                    try store.write(keys.map { key in
                        FetchedItem(request: FetchRequest(url: "\(key)", kind: .tile, tileKey: key, tile: key.tile),
                                    body: FetchedBody(data: Self.coin(key, 3, 10) ? Data() : Data("\(key.tile)".utf8)))
                    })
                    for (n, rowKey) in ["box/demo", "poly/demo", "gap/demo", "other/demo"].enumerated() {
                        guard let row = rows[rowKey] else { continue }
                        try store.linkTiles(keys.filter { Self.coin($0, 10 + n, linkPercent) }, toRegion: row)
                    }
                }
            }
        }
        return rows
    }

    /// Links to region row `row` a tile row that does not exist, as a database written with
    /// foreign keys off may hold.
    private func addDanglingLink(_ row: Int64) throws {
        try store.db.exec("PRAGMA foreign_keys = OFF")
        try store.db.run("INSERT INTO region_tiles (region_id, tile_id) VALUES (?1, 1000000000)", [.int(row)])
        try store.db.exec("PRAGMA foreign_keys = ON")
    }

    private func input(rowsInLockFile: [String: Int64]) -> PlanInput {
        let pack = ResolvedPack(pack: StylePack(id: "demo", style: Self.style, pixelRatio: 2),
                                resources: [ResourceRef(url: Self.style, kind: .style)], tileSources: Self.sources,
                                summaries: [])
        return PlanInput(job: Job(name: "streamed", stylePacks: [pack.pack], regions: Self.regions),
                         jobDigest: "d", epoch: 0, packs: ["demo": pack], rowsInLockFile: rowsInLockFile)
    }

    /// Every stored key and every region's linked keys, read by plain SQL.
    private func contents() throws -> (stored: Set<TileKey>, links: [Int64: Set<TileKey>]) {
        let key = { (row: SQLiteStatement, from: Int32) in
            TileKey(urlTemplate: row.text(from), pixelRatio: Int(row.int64(from + 1)),
                    tile: TileID(z: Int(row.int64(from + 2)), x: Int(row.int64(from + 3)), y: Int(row.int64(from + 4))))
        }
        let stored = Set(try store.db.query("SELECT url_template, pixel_ratio, z, x, y FROM tiles") { key($0, 0) })
        var links: [Int64: Set<TileKey>] = [:]
        let linked = try store.db.query("""
            SELECT rt.region_id, t.url_template, t.pixel_ratio, t.z, t.x, t.y
            FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id
            """) { ($0.int64(0), key($0, 1)) }
        for (region, tile) in linked { links[region, default: []].insert(tile) }
        return (stored, links)
    }

    /// Checks `plan` against the diff of the store's contents read into sets; returns how many
    /// tiles were kept and how many links at another pixel ratio were seen.
    @discardableResult
    private func assertEqualsTheDiffInMemory(_ plan: Plan, file: StaticString = #filePath, line: UInt = #line) throws
        -> (kept: Int, otherRatio: Int) {
        let (stored, links) = try contents()
        var kept = 0, otherRatio = 0
        for row in plan.regions {
            let linked = row.rowID.map { links[$0] ?? [] } ?? []
            var expected: [ZoomChange] = []
            for set in row.tileSets {
                for z in set.zooms {
                    let desired = Set(set.cover(of: row.area, zoom: z).map(set.key(for:)))
                    let linkedAtZoom = linked.filter { $0.urlTemplate == set.urlTemplate && $0.tile.z == z }
                    let keep = desired.intersection(linkedAtZoom.filter { $0.pixelRatio == set.pixelRatio }).count
                    kept += keep
                    otherRatio += linkedAtZoom.filter { $0.pixelRatio != set.pixelRatio }.count
                    expected.append(ZoomChange(urlTemplate: set.urlTemplate, zoom: z, counts: ChangeCounts(
                        add: desired.count - keep, remove: linkedAtZoom.count - keep, keep: keep)))
                }
            }
            XCTAssertEqual(row.zoomChanges, expected, row.key, file: file, line: line)
            let wanted = Set(row.tileSets.flatMap { set in set.zooms.map { "\(set.urlTemplate) \($0)" } })
            let stale = Dictionary(grouping: linked.filter { !wanted.contains("\($0.urlTemplate) \($0.tile.z)") }) {
                "\($0.urlTemplate) \($0.tile.z)"
            }
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: row.staleTileCounts.map { ("\($0.urlTemplate) \($0.zoom)", $0.count) }),
                           stale.mapValues(\.count), row.key, file: file, line: line)
            if row.action == .update, let rowID = row.rowID {
                XCTAssertTrue(plan.notes.contains { $0.subject == "region '\(row.regionID)'"
                    && $0.message.contains("the old one with its \(plural(links[rowID]?.count ?? 0, "tile")) ") },
                              "\(row.key): the note counts the tiles the row links", file: file, line: line)
            }
        }
        for removed in plan.removedRegions {
            XCTAssertEqual(removed.tileCount, links[removed.rowID]?.count ?? 0, file: file, line: line)
        }

        // Downloads: each distinct desired key the store lacks, linked or not, at SQLite's
        // average stored size of its template and zoom.
        var missing = 0
        var bytes: Int64 = 0
        for group in plan.tileGroups {
            let keys = Set(group.covers.flatMap { $0.map(group.tileSet.key(for:)) })
            let lacking = keys.subtracting(stored).count
            missing += lacking
            let mean = try store.db.queryFirst("SELECT avg(length(data)) FROM tiles WHERE url_template = ?1 AND z = ?2",
                                               [.text(group.tileSet.urlTemplate), .int(Int64(group.zoom))]) {
                $0.isNull(0) ? nil : $0.double(0)
            } ?? nil
            // Nothing stored to measure: the size assumed for the source's format (docs/job-file.md).
            let assumed = Planner.assumedTileBytes(for: group.tileSet.urlTemplate == Self.raster ? .raster : .vector,
                                                   vectorBytes: Planner.defaultTileBytes)
            bytes += Int64((Double(lacking) * (mean ?? Double(assumed))).rounded())
            // The walk the apply makes: every tile of the union once, ascending, flagged as stored or not.
            var walked: [TileID] = []
            try group.forEachTile(store: store) { tile, isStored in
                walked.append(tile)
                XCTAssertEqual(isStored, stored.contains(group.tileSet.key(for: tile)), "\(group.tileSet.urlTemplate) \(tile)",
                               file: file, line: line)
            }
            XCTAssertEqual(walked, Array(group.tiles), file: file, line: line)
        }
        XCTAssertEqual(plan.tilesToDownload, missing, file: file, line: line)
        XCTAssertEqual(plan.bytesToDownload, bytes, file: file, line: line)
        XCTAssertGreaterThan(missing, 0, file: file, line: line)
        XCTAssertLessThan(missing, plan.tilesToAdd, "some tiles to add are stored already, unlinked or under another row",
                          file: file, line: line)

        // Shards: the ordinals of each share, looked up in the set of stored keys.
        let groups = Plan.keyOrder(plan.tileGroups)
        var walk: [(TileGroup, TileID)] = []
        for group in groups { group.forEachColumn { column in walk += column.map { (group, $0) } } }
        for count in [1, 3, 7] {
            var total = 0
            for index in 0..<count {
                let share = try plan.shardShare(Shard(index: index, count: count), store: store)
                let lacking = walk[share.tiles].filter { !stored.contains($0.0.tileSet.key(for: $0.1)) }.count
                XCTAssertEqual(share.missingTiles, lacking, "shard \(index)/\(count)", file: file, line: line)
                total += share.missingTiles
            }
            XCTAssertEqual(total, missing, file: file, line: line)
        }
        return (kept, otherRatio)
    }

    func testTheStreamedDiffEqualsTheDiffOfEveryKeyInMemory() throws {
        let rows = try fill(linkPercent: 45)
        try addDanglingLink(try XCTUnwrap(rows["box/demo"]))
        let plan = try Planner.plan(input(rowsInLockFile: rows), store: store)
        XCTAssertEqual(plan.regions.map(\.key), ["box/demo", "poly/demo", "gap/demo", "fresh/demo"])
        XCTAssertEqual(plan.removedRegions.map(\.rowID), [rows["other/demo"]].compactMap { $0 })
        let seen = try assertEqualsTheDiffInMemory(plan)
        XCTAssertTrue(seen.kept > 0 && seen.otherRatio > 0, "the store must hold kept tiles and links at another pixel ratio")
        XCTAssertTrue(plan.regions.contains { !$0.staleTileCounts.isEmpty }, "a row must have stale zooms")
    }

    func testRowsThatLinkOnlyTilesTheyKeepAreDiffedTheSame() throws {
        // Stored tiles linked to no row; then each row links some of the stored tiles it wants,
        // as after an apply of a smaller job: every link is kept, nothing is removed.
        let rows = try fill(linkPercent: 0)
        let first = try Planner.plan(input(rowsInLockFile: rows), store: store)
        for row in first.regions {
            guard let rowID = row.rowID else { continue }
            var keys: [TileKey] = []
            for set in row.tileSets {
                for z in set.zooms { keys += set.cover(of: row.area, zoom: z).map(set.key(for:)).filter { Self.coin($0, 20, 50) } }
            }
            try store.linkTiles(keys, toRegion: rowID)
        }
        let plan = try Planner.plan(input(rowsInLockFile: rows), store: store)
        XCTAssertGreaterThan(try assertEqualsTheDiffInMemory(plan).kept, 0)
        for row in plan.regions {
            XCTAssertEqual(row.totals.remove, 0, row.key)
            XCTAssertEqual(row.staleTileCounts, [], row.key)
        }
        // A link to a tile row that is gone is no kept tile: the row's links are counted by
        // template and zoom instead, and the diff is the same as the sets'.
        try addDanglingLink(try XCTUnwrap(rows["poly/demo"]))
        try assertEqualsTheDiffInMemory(try Planner.plan(input(rowsInLockFile: rows), store: store))
    }


    func testAStoreThatHoldsEveryTileUnlinkedIsDownloadedNothingAndLinkedEverything() throws {
        let plan = try Planner.plan(input(rowsInLockFile: [:]), store: store)
        XCTAssertGreaterThan(plan.tilesToDownload, 0)
        var items: [FetchedItem] = []
        for group in plan.tileGroups {
            for tile in group.tiles { items.append(FetchedItem(request: group.tileSet.request(for: tile), body: FetchedBody(data: Data([1])))) }
        }
        try store.write(items)
        let again = try Planner.plan(input(rowsInLockFile: [:]), store: store)
        XCTAssertEqual(again.tilesToDownload, 0)
        XCTAssertEqual(again.tilesToAdd, plan.tilesToAdd, "stored but linked to no row: every tile is still added")
    }
}
