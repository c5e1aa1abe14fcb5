import Foundation
import PlaceIndex
import ProvisionStore
import ProvisionTestSupport
import TileMath
import XCTest

/// A larger world: a grid of long streets, each cut by a dozen tile edges at three zooms, and a
/// kiosk at every crossing.
final class GridCityTests: XCTestCase {
    func testEveryStreetOfAGridIsOneEntryAndEveryKioskFoundByName() throws {
        let area = BoundingBox(west: 24.80, south: 60.10, east: 25.00, north: 60.25)
        let count = 30
        var features: [TestFeature] = []
        for i in 0..<count {
            let lat = area.south + (area.north - area.south) * (Double(i) + 0.5) / Double(count)
            let lng = area.west + (area.east - area.west) * (Double(i) + 0.5) / Double(count)
            features.append(TestWorld.street("Katu \(i)", "minor", [LngLat(lng: area.west, lat: lat), LngLat(lng: area.east, lat: lat)]))
            features.append(TestWorld.street("Tie \(i)", "minor", [LngLat(lng: lng, lat: area.south), LngLat(lng: lng, lat: area.north)]))
        }
        for i in 0..<count {
            for j in 0..<count {
                let at = LngLat(lng: area.west + (area.east - area.west) * (Double(i) + 0.5) / Double(count),
                                lat: area.south + (area.north - area.south) * (Double(j) + 0.5) / Double(count))
                features.append(TestWorld.poi("Kioski \(i)-\(j)", "shop", at, rank: 10, minZoom: 13))
            }
        }
        var tiles: [(TileID, Data)] = []
        for z in 12...14 {
            let nw = WebMercator.tile(containing: LngLat(lng: area.west, lat: area.north), zoom: z)
            let se = WebMercator.tile(containing: LngLat(lng: area.east, lat: area.south), zoom: z)
            for x in nw.x...se.x {
                for y in nw.y...se.y {
                    let tile = TileID(z: z, x: x, y: y)
                    tiles.append((tile, VectorTileEncoder.encode(tile, features: features)))
                }
            }
        }
        let started = Date()
        let builder = PlaceIndexBuilder(options: PlaceIndexOptions(schema: .openMapTiles))
        for (tile, data) in tiles { try builder.add(tile: tile, data: data) }
        let (entries, _) = try builder.finish()
        let url = try scratch().appendingPathComponent("search/grid.db")
        try PlaceIndexDatabase.write(entries, metadata: PlaceIndexTests.metadata, to: url)
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(entries.filter { $0.kind == .street }.count, 2 * count, "one entry per street")
        XCTAssertEqual(entries.filter { $0.kind == .poi }.count, count * count, "one entry per kiosk")
        let misses = try (0..<count).filter { i in
            try PlaceIndexDatabase.search(url, query: "Kioski \(i)-\(i)", limit: 1).first?.name != "Kioski \(i)-\(i)"
        }
        XCTAssertEqual(misses, [])
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
        print(String(format: "grid city: %d tiles, %d entries, %d bytes, built and written in %.2f s (debug build)",
                     tiles.count, entries.count, size, seconds))
    }
}
