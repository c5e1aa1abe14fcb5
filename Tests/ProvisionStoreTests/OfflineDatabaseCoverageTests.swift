import Foundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// The reads of the coverage pictures: the links of one zoom in geographic tile order over every
/// template and ratio, TMS rows flipped, and the zooms that hold links.
final class OfflineDatabaseCoverageTests: XCTestCase {
    private let vector = "https://tiles.example.com/v/{z}/{x}/{y}.pbf"
    private let tms = "https://tiles.example.com/t/{z}/{x}/{y}.png"
    private var store: OfflineDatabase!

    override func setUpWithError() throws {
        store = try OfflineDatabase(url: try makeTemporaryDirectory(self).appendingPathComponent("offline.db"), epoch: 1_700_000_000)
    }

    override func tearDownWithError() throws {
        try store?.close()
    }

    private func write(_ keys: [TileKey]) throws {
        try store.write(keys.map { key in
            FetchedItem(request: FetchRequest(url: "\(key.urlTemplate)#\(key.pixelRatio)/\(key.tile)", kind: .tile, tileKey: key, tile: key.tile),
                        body: FetchedBody(data: Data([0x1a, UInt8(key.tile.x & 0xff)])))
        })
    }

    func testLinksComeZoomByZoomInGeographicOrderWithTMSRowsFlipped() throws {
        let a = try store.insertRegion(definition: Data("{}".utf8), description: nil)
        let b = try store.insertRegion(definition: Data("[]".utf8), description: nil)
        // Stored rows: the TMS template's y counts from the south.
        let vectorKeys = [(5, 3), (4, 9), (5, 1), (4, 2)].map { TileKey(urlTemplate: vector, pixelRatio: 1, tile: TileID(z: 4, x: $0.0, y: $0.1)) }
        let retina = TileKey(urlTemplate: vector, pixelRatio: 2, tile: TileID(z: 4, x: 4, y: 5))
        let tmsKeys = [(4, 15 - 3), (6, 15 - 0)].map { TileKey(urlTemplate: tms, pixelRatio: 1, tile: TileID(z: 4, x: $0.0, y: $0.1)) }
        let otherZoom = TileKey(urlTemplate: vector, pixelRatio: 1, tile: TileID(z: 7, x: 1, y: 1))
        let orphan = TileKey(urlTemplate: vector, pixelRatio: 1, tile: TileID(z: 9, x: 0, y: 0))
        try write(vectorKeys + [retina] + tmsKeys + [otherZoom, orphan])
        try store.linkTiles(vectorKeys + [retina, otherZoom], toRegion: a)
        try store.linkTiles([vectorKeys[0]] + tmsKeys, toRegion: b)

        var seen: [String] = []
        try store.forEachLinkedTile(zoom: 4, tmsTemplates: [tms]) { row, key in
            seen.append("\(row == a ? "a" : "b") \(key.urlTemplate == tms ? "t" : "v")@\(key.pixelRatio) \(key.tile)")
        }
        // Ordered by column then geographic row; ties in any order.
        XCTAssertEqual(Set(seen), ["a v@1 4/4/2", "b t@1 4/4/3", "a v@2 4/4/5", "a v@1 4/4/9", "a v@1 4/5/1", "a v@1 4/5/3",
                                   "b v@1 4/5/3", "b t@1 4/6/0"])
        XCTAssertEqual(seen.count, 8)
        let positions = seen.map { line -> [Int] in
            let tile = line.split(separator: " ")[2].split(separator: "/").map { Int($0) ?? -1 }
            return [tile[1], tile[2]]
        }
        XCTAssertEqual(positions, positions.sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }, "\(seen)")
        // Without the TMS template named, its rows come as stored.
        var stored: [TileID] = []
        try store.forEachLinkedTile(zoom: 4, tmsTemplates: []) { _, key in if key.urlTemplate == tms { stored.append(key.tile) } }
        XCTAssertEqual(Set(stored), Set(tmsKeys.map(\.tile)))

        XCTAssertEqual(try store.linkedZooms(), [4, 7], "z9 holds only an orphan")
        XCTAssertEqual(try store.tilePairs().map { "\($0.urlTemplate) \($0.pixelRatio)" }, ["\(tms) 1", "\(vector) 1", "\(vector) 2"])
        var none = 0
        try store.forEachLinkedTile(zoom: 12, tmsTemplates: [tms]) { _, _ in none += 1 }
        XCTAssertEqual(none, 0)
    }

    func testAnEmptyStoreHasNoLinkedZooms() throws {
        XCTAssertEqual(try store.linkedZooms(), [])
        XCTAssertTrue(try store.tilePairs().isEmpty)
    }
}
