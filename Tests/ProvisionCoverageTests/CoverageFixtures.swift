import Foundation
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import TileMath

/// A store held in memory for the coverage pictures: region rows and their links, read back in
/// the order the protocol promises (column, then geographic row), TMS rows flipped.
final class InMemoryCoverageStore: CoverageStore {
    var rows: [StoredRegion] = []
    /// Links as stored: the key's tile row is a TMS row for TMS templates.
    var links: [(row: Int64, key: TileKey)] = []

    func regions() throws -> [StoredRegion] { rows.sorted { $0.rowID < $1.rowID } }

    func linkedZooms() throws -> [Int] { Set(links.map(\.key.tile.z)).sorted() }

    func forEachLinkedTile(zoom: Int, tmsTemplates: Set<String>, _ body: (Int64, TileKey) throws -> Void) throws {
        let geographic = links.filter { $0.key.tile.z == zoom }.map { link -> (Int64, TileKey) in
            var key = link.key
            if tmsTemplates.contains(key.urlTemplate) { key.tile = TileID(z: zoom, x: key.tile.x, y: key.tile.tmsY) }
            return (link.row, key)
        }
        for (row, key) in geographic.sorted(by: { ($0.1.tile.x, $0.1.tile.y) < ($1.1.tile.x, $1.1.tile.y) }) {
            try body(row, key)
        }
    }

    /// Links every tile of `tiles` (geographic) to `row` under `template` at `ratio`.
    func link(_ tiles: [TileID], row: Int64, template: String, ratio: Int = 1, tms: Bool = false) {
        links += tiles.map { tile in
            (row, TileKey(urlTemplate: template, pixelRatio: ratio, tile: tms ? TileID(z: tile.z, x: tile.x, y: tile.tmsY) : tile))
        }
    }
}

/// Plans and regions for the coverage tests, built as the planner builds them.
enum CoverageFixtures {
    static let vector = "https://tiles.example.com/v/{z}/{x}/{y}.pbf"
    static let raster = "https://tiles.example.com/r/{z}/{x}/{y}.png"

    /// A box of western Europe and one overlapping its south-east corner.
    static let west = CoverArea.bbox(BoundingBox(west: -4, south: 43, east: 6, north: 50))
    static let east = CoverArea.polygons([Polygon(rings: [[
        LngLat(lng: 3, lat: 40), LngLat(lng: 14, lat: 41), LngLat(lng: 12, lat: 47), LngLat(lng: 4, lat: 45), LngLat(lng: 3, lat: 40),
    ]])])

    static func tileSet(_ template: String, zooms: ClosedRange<Int>, ratio: Int = 1, tms: Bool = false) -> PlannedTileSet {
        PlannedTileSet(urlTemplate: template, pixelRatio: ratio, isTMS: tms, zooms: zooms)
    }

    static func row(_ id: String, pack: String? = "streets", rowID: Int64?, area: CoverArea, sets: [PlannedTileSet]) -> RegionPlan {
        RegionPlan(regionID: id, name: id.capitalized, stylePackID: pack, rowID: rowID, action: rowID == nil ? .add : .keep,
                   definition: Data(), description: Data(), area: area, tileSets: sets, zoomChanges: [], staleTileCounts: [],
                   resources: ResourceChanges(wanted: [], add: [], remove: []), estimatedBytes: 0)
    }

    static func plan(_ rows: [RegionPlan], removed: [RemovedRegion] = []) -> Plan {
        Plan(jobName: "coverage", jobDigest: "sha256:0", epoch: 0, regions: rows, removedRegions: removed, stylePacks: [],
             documents: [:], assumedTileBytes: 1)
    }

    static func document(_ plan: Plan) -> PlanDocument {
        PlanDocument(plan: plan, store: "./store", limits: Limits())
    }

    /// The tiles of a cover, as a set.
    static func tiles(_ area: CoverArea, zoom: Int) -> Set<TileID> {
        Set(TileCover(area, zoom: zoom))
    }

    /// A MapLibre definition of a bbox, as the store holds it.
    static func definition(_ box: BoundingBox) -> Data {
        Data("{\"style_url\":\"s\",\"min_zoom\":0.0,\"bounds\":[\(box.south),\(box.west),\(box.north),\(box.east)]}".utf8)
    }
}
