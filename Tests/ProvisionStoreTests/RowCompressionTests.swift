import Foundation
import ProvisionCodecs
import XCTest
@testable import ProvisionStore

/// Stored rows are zlib streams; a codec failure on one is the store's `.compression` error.
final class RowCompressionTests: XCTestCase {
    func testRoundTripsAsZlibAndReadsGzipToo() throws {
        let payload = Data(#"{"version":8,"sources":{}}"#.utf8)
        let stored = try RowCompression.deflate(payload)
        XCTAssertEqual(stored, try Zlib.deflate(payload), "MapLibre's form: zlib at the default level")
        XCTAssertEqual(try RowCompression.inflate(stored), payload)
        XCTAssertEqual(try RowCompression.inflate(Gzip.compress(payload)), payload)
    }

    func testDamagedBytesAreCompressionErrors() throws {
        let stored = try RowCompression.deflate(randomBytes(2_000))
        for damaged in [stored.prefix(stored.count / 2), stored + Data([0]), Data("plain".utf8)] {
            XCTAssertThrowsError(try RowCompression.inflate(damaged)) { error in
                XCTAssertEqual((error as? StoreError)?.code, .compression, "\(error)")
            }
        }
    }

    func testABombIsRefusedAtTheDefaultLimit() throws {
        let bomb = try Zlib.deflate(Data(count: Zlib.defaultInflateLimit + 1))
        XCTAssertThrowsError(try RowCompression.inflate(bomb)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .compression)
            XCTAssertTrue("\(error)".contains("beyond \(Zlib.defaultInflateLimit) bytes"), "\(error)")
        }
    }
}
