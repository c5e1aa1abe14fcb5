import Foundation
import ProvisionCodecs
@testable import ProvisionExport
import ProvisionStore
import XCTest

/// The export's memo of repeated small rows hands a tile out again only for a row with the same
/// bytes, stops making tiles for a row that keeps coming, and leaves large rows alone.
final class ArchiveTileMemoTests: XCTestCase {
    /// Counts the tiles made, each from its own row.
    private final class Maker {
        var made = 0

        func tile(_ stored: Data, compressed: Bool, memo: ArchiveTileMemo) throws -> ArchiveTile {
            try memo.tile(stored: stored, compressed: compressed) {
                made += 1
                return try ArchiveTile(stored: stored, compressed: compressed, gzip: true)
            }
        }
    }

    func testARowThatKeepsComingIsMadeTwiceThenHandedOutAgain() throws {
        let memo = ArchiveTileMemo(), maker = Maker()
        let row = try Zlib.deflate(Data("open ocean, open ocean, open ocean".utf8))
        let expected = try ArchiveTile(stored: row, compressed: true, gzip: true)
        for _ in 0..<10 {
            let tile = try maker.tile(row, compressed: true, memo: memo)
            XCTAssertEqual(tile.bytes, expected.bytes)
            XCTAssertEqual(tile.key, expected.key)
        }
        XCTAssertEqual(maker.made, 2, "made when first seen and when seen again, then handed out")
    }

    /// Rows of one length, flag and last four bytes share a slot and a mark; each gets its own tile.
    func testRowsThatShareAMarkButNotTheirBytesEachGetTheirOwnTile() throws {
        let memo = ArchiveTileMemo(), maker = Maker()
        let rows = ["land", "lake", "sand"].map { Data("\($0) tile, same tail: WXYZ".utf8) }
        XCTAssertEqual(Set(rows.map { $0.count }).count, 1)
        for round in 0..<6 {
            for row in rows {
                let tile = try maker.tile(row, compressed: false, memo: memo)
                XCTAssertEqual(tile.payload, row, "round \(round)")
                XCTAssertEqual(tile.bytes, try ArchiveTile(stored: row, compressed: false, gzip: true).bytes, "round \(round)")
            }
        }
    }

    /// The same bytes stored as a zlib stream and stored bare are two rows with two payloads.
    func testTheCompressedFlagIsPartOfTheRow() throws {
        let memo = ArchiveTileMemo(), maker = Maker()
        let payload = Data("open ocean, open ocean".utf8)
        let zlib = try Zlib.deflate(payload)
        for round in 0..<4 {
            XCTAssertEqual(try maker.tile(zlib, compressed: true, memo: memo).payload, payload, "round \(round)")
            XCTAssertEqual(try maker.tile(zlib, compressed: false, memo: memo).payload, zlib, "round \(round)")
        }
    }

    func testRowsLargerThanTheLimitAreAlwaysMade() throws {
        let memo = ArchiveTileMemo(), maker = Maker()
        let row = Data(repeating: 7, count: ArchiveTileMemo.largestRow + 1)
        for _ in 0..<4 { _ = try maker.tile(row, compressed: false, memo: memo) }
        XCTAssertEqual(maker.made, 4)
    }

    /// A small row that inflates to more than the limit is not held: the memo's memory stays bounded.
    func testASmallRowWithALargePayloadIsNeverHeld() throws {
        let memo = ArchiveTileMemo(), maker = Maker()
        let row = try Zlib.deflate(Data(repeating: 0, count: ArchiveTileMemo.largestPayload + 1))
        XCTAssertLessThanOrEqual(row.count, ArchiveTileMemo.largestRow)
        for _ in 0..<4 { _ = try maker.tile(row, compressed: true, memo: memo) }
        XCTAssertEqual(maker.made, 4)
    }
}
