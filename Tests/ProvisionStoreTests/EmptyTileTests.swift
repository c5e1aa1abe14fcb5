import Foundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// Empty tiles (`missingTiles: skip`) are stored with data NULL, as MapLibre stores "no content".
final class EmptyTileTests: XCTestCase {
    private let template = "https://t.example.com/{z}/{x}/{y}.pbf"

    private func key(_ x: Int) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: 5, x: x, y: 3))
    }

    private func tile(_ key: TileKey, _ data: Data) -> FetchedItem {
        FetchedItem(request: FetchRequest(url: "https://t.example.com/5/\(key.tile.x)/3.pbf", kind: .tile,
                                          tileKey: key, tile: key.tile),
                    body: FetchedBody(data: data))
    }

    func testAnEmptyTileIsStoredAsNullCountsAsStoredAndReadsBackEmpty() throws {
        let url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        let store = try OfflineDatabase(url: url, epoch: 7)
        defer { try? store.close() }
        let region = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        try store.write([tile(key(0), Data()), tile(key(1), Data(repeating: 1, count: 500))])
        try store.linkTiles([key(0), key(1)], toRegion: region)

        let rows = try store.db.query("SELECT x, typeof(data), compressed FROM tiles ORDER BY x") {
            "\($0.int64(0)) \($0.text(1)) \($0.int64(2))"
        }
        XCTAssertEqual(rows, ["0 null 0", "1 blob 0"], "a tile that arrived raw is stored as it came")
        XCTAssertEqual(try store.storedKeys([key(0), key(1), key(2)]), [key(0), key(1)])
        XCTAssertEqual(try store.tileData(key(0)), Data())
        XCTAssertEqual(try store.linkedTiles(region: region, urlTemplate: template, zoom: 5).map(\.x), [0, 1])
        XCTAssertEqual(try store.emptyTileCount(), 1)
        XCTAssertEqual(try store.meanTileSizes(urlTemplate: template, zooms: 5...5),
                       [5: 500],
                       "an empty tile does not drag the size estimate down")

        let summary = try store.summary()
        XCTAssertEqual(summary.emptyTileCount, 1)
        XCTAssertEqual(summary.tileCount, 2)
        XCTAssertEqual(summary.regions.first?.emptyTileCount, 1)
        XCTAssertEqual(summary.regions.first?.tileCount, 2)
        XCTAssertEqual(try store.integrityCheck(), [])

        // A tile later found is rewritten in place, and a tile that turned empty goes NULL.
        try store.write([tile(key(0), Data("found".utf8)), tile(key(1), Data())])
        XCTAssertEqual(try store.tileData(key(0)), Data("found".utf8))
        XCTAssertEqual(try store.db.queryFirst("SELECT x FROM tiles WHERE data IS NULL") { $0.int64(0) }, 1)
        XCTAssertEqual(try store.summary().regions.first?.emptyTileCount, 1)
        XCTAssertEqual(try store.summary().regions.first?.tileCount, 2, "links kept")
    }
}
