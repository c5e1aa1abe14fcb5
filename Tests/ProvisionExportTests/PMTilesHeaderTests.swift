import Foundation
import ProvisionCodecs
@testable import ProvisionExport
import ProvisionStore
import TileMath
import XCTest

/// The PMTiles writer owns its header: what `export` says about a tileset (type, compression,
/// zooms, extent) lands in the header fields a reader takes them from.
final class PMTilesHeaderTests: XCTestCase {
    func testTheHeaderSaysWhatTheTilesAreWhereAndAtWhichZooms() throws {
        let directory = try makeTemporaryDirectory(self)
        let url = directory.appendingPathComponent("a.pmtiles")
        let extent = ExportExtent(definitions: [], stored: BoundingBox(west: -10, south: 40, east: 20, north: 60), minZoom: 3)
        let writer = try PMTilesArchiveWriter(destination: url)
        let tile = try ArchiveTile(stored: Data([1, 2, 3]), compressed: false, gzip: false)
        try writer.add(tileID: try XCTUnwrap(TileID(z: 3, x: 4, y: 2).pmtilesID), tile: tile)
        _ = try writer.finish(tileType: .png, gzipped: false, zooms: 3...9, extent: extent, metadata: Data("{}".utf8))

        let header = try PMTiles.Header(decoding: try Data(contentsOf: url))
        XCTAssertEqual(header.tileType, .png)
        XCTAssertEqual(header.tileCompression, PMTiles.Compression.none)
        XCTAssertEqual([header.minZoom, header.maxZoom, header.centerZoom], [3, 9, 3])
        XCTAssertEqual([header.minLonE7, header.minLatE7, header.maxLonE7, header.maxLatE7],
                       [-100_000_000, 400_000_000, 200_000_000, 600_000_000])
        XCTAssertEqual([header.centerLonE7, header.centerLatE7], [50_000_000, 500_000_000])
        XCTAssertEqual(header.addressedTilesCount, 1)
    }

    func testVectorTilesAreDeclaredGzipped() {
        let extent = ExportExtent(definitions: [], stored: BoundingBox(west: 0, south: 0, east: 1, north: 1), minZoom: 0)
        let header = PMTilesArchiveWriter.header(tileType: .mvt, gzipped: true, zooms: 0...14, extent: extent)
        XCTAssertEqual(header.tileType, .mvt)
        XCTAssertEqual(header.tileCompression, .gzip)
        XCTAssertEqual([header.minZoom, header.maxZoom], [0, 14])
    }
}
