import RoutingGraph
import XCTest

/// The header check on made-up tiles: each way a body can differ from the tile asked for is its
/// own typed error naming what is wrong.
final class GraphTileHeaderTests: XCTestCase {
    /// A tile body of `size` bytes whose header says what the arguments say.
    static func tile(_ tile: GraphTileID, size: Int = 1_000, base: (Float, Float)? = nil, version: [UInt8] = Array("3.9.1".utf8),
                     dataset: UInt64 = 4242, flags: UInt64 = 0, endOffset: UInt32? = nil) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xAB, count: size)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { raw in
                for (i, byte) in raw.enumerated() where offset + i < size { bytes[offset + i] = byte }
            }
        }
        let corner = base ?? (Float(tile.baseCorner.lng), Float(tile.baseCorner.lat))
        put(tile.graphID | flags << 46, at: 0)
        put(corner.0.bitPattern, at: 8)
        put(corner.1.bitPattern, at: 12)
        for i in 0..<16 where 16 + i < size { bytes[16 + i] = i < version.count ? version[i] : 0 }
        put(dataset, at: 32)
        put(endOffset ?? UInt32(size), at: 224)
        return bytes
    }

    let helsinki = GraphTileID(level: GraphLevel(2)!, index: 864_819)!

    func testAWellFormedTilePassesAndReportsItsBuild() throws {
        let header = try GraphTileHeader.check(Self.tile(helsinki, flags: 0x3FFFF), expected: helsinki)
        XCTAssertEqual(header.graphID, helsinki.graphID)
        XCTAssertEqual(header.baseLng, 24.75)
        XCTAssertEqual(header.baseLat, 60)
        XCTAssertEqual(header.buildIdentity, GraphBuildIdentity(datasetID: 4242, version: "3.9.1"))
        XCTAssertEqual(header.buildIdentity.description, "dataset 4242, Valhalla 3.9.1")
        // A tile without nodes may carry (0, 0) as its base corner.
        XCTAssertNoThrow(try GraphTileHeader.check(Self.tile(helsinki, base: (0, 0)), expected: helsinki))
        // The smallest tile is its header.
        XCTAssertNoThrow(try GraphTileHeader.check(Self.tile(helsinki, size: GraphTileHeader.size), expected: helsinki))
    }

    func testEachDefectIsItsOwnTypedError() {
        let other = GraphTileID(level: GraphLevel(1)!, index: 54_204)!
        let cases: [(String, [UInt8], GraphTileHeaderError)] = [
            ("short", Array(Self.tile(helsinki).prefix(271)), .tooShort(byteCount: 271)),
            ("another tile", Self.tile(other), .graphIDMismatch(expected: helsinki, found: other.graphID)),
            ("an object id", Self.tile(helsinki, flags: 0) .enumerated().map { $0.offset == 3 ? $0.element | 0x02 : $0.element },
             .graphIDMismatch(expected: helsinki, found: helsinki.graphID | 1 << 25)),
            ("another corner", Self.tile(helsinki, base: (24, 60)), .baseCornerMismatch(expected: helsinki, lng: 24, lat: 60)),
            ("binary version", Self.tile(helsinki, version: [0x33, 0xFF]), .versionNotText(bytes: [0x33, 0xFF] + [UInt8](repeating: 0, count: 14))),
            ("empty version", Self.tile(helsinki, version: []), .versionNotText(bytes: [UInt8](repeating: 0, count: 16))),
            ("text after padding", Self.tile(helsinki, version: Array("3.9.1\u{0}x".utf8)),
             .versionNotText(bytes: Array("3.9.1\u{0}x".utf8) + [UInt8](repeating: 0, count: 9))),
            ("truncated", Array(Self.tile(helsinki, size: 1_000).prefix(900)), .sizeMismatch(endOffset: 1_000, byteCount: 900)),
            ("padded", Self.tile(helsinki, size: 1_000) + [0], .sizeMismatch(endOffset: 1_000, byteCount: 1_001)),
        ]
        for (name, bytes, expected) in cases {
            XCTAssertThrowsError(try GraphTileHeader.check(bytes, expected: helsinki), name) { error in
                XCTAssertEqual(error as? GraphTileHeaderError, expected, name)
            }
        }
        XCTAssertEqual(GraphTileHeaderError.graphIDMismatch(expected: helsinki, found: other.graphID).description,
                       "graph tile header has graph id 433633 (tile 1/54204), expected 6918554 (tile 2/864819)")
        XCTAssertEqual(GraphTileHeaderError.sizeMismatch(endOffset: 1_000, byteCount: 900).description,
                       "graph tile header's end offset is 1000 bytes, the body is 900 bytes")
    }

    /// An HTML error page served for a tile URL is not a tile.
    func testAnHTMLPageIsRefused() {
        let page = Array(("<!DOCTYPE html><html><body>" + String(repeating: "Not found. ", count: 40) + "</body></html>").utf8)
        XCTAssertThrowsError(try GraphTileHeader.check(page, expected: helsinki)) { error in
            guard case .graphIDMismatch = error as? GraphTileHeaderError else { return XCTFail("\(error)") }
        }
    }
}
