import Foundation
import ProvisionModel
import ProvisionStore
import TileMath
@_exported import ProvisionTestSupport
import XCTest

/// A fresh temporary directory removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("provision-store-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}


extension OfflineDatabase {
    /// The stored ones of `keys`, each asked for as a one-row column.
    func storedKeys(_ keys: [TileKey]) throws -> Set<TileKey> {
        var found = Set<TileKey>()
        for key in keys {
            let column = StoredTileColumn(urlTemplate: key.urlTemplate, pixelRatio: key.pixelRatio, zoom: key.tile.z,
                                          x: key.tile.x, rows: key.tile.y..<(key.tile.y + 1))
            try forEachStoredTile(in: column, linkedTo: nil) { _ in found.insert(key) }
        }
        return found
    }

    /// The tiles of one template, pixel ratio and zoom linked to `region`, by x then y (as stored).
    func linkedTiles(region: Int64, urlTemplate: String, zoom: Int, pixelRatio: Int = 1) throws -> [TileID] {
        var tiles: [TileID] = []
        for x in 0..<(1 << zoom) {
            let column = StoredTileColumn(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom, x: x, rows: 0..<(1 << zoom))
            try forEachStoredTile(in: column, linkedTo: region) { tiles.append(TileID(z: zoom, x: x, y: $0)) }
        }
        return tiles
    }
}
