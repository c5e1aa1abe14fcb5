import Foundation
import XCTest
@testable import ProvisionStore

final class CompressionTests: XCTestCase {
    func testDeflateMatchesZlibCompressAtTheDefaultLevel() throws {
        // Python: zlib.compress(b'hello hello hello hello hello').hex()
        let expected = Data(hex: "789ccb48cdc9c957c8c04e0200a3100ae5")
        XCTAssertEqual(try Compression.deflate(Data("hello hello hello hello hello".utf8)), expected)
    }

    func testRoundTripsAndEmptyInput() throws {
        for payload in [Data(), Data("x".utf8), randomBytes(100_000), Data(repeating: 7, count: 300_000)] {
            let deflated = try Compression.deflate(payload)
            XCTAssertEqual(deflated.first, 0x78, "zlib header")
            XCTAssertEqual(try Compression.inflate(deflated), payload)
        }
    }

    func testInflatesGzipAndGunzipIfNeededPassesOtherBytesThrough() throws {
        // Python: gzip.compress(b'gzip payload\n', mtime=0).hex()
        let gzip = Data(hex: "1f8b08000000000002034bafca2c502848acccc94f4ce10200ec4dc2d70d000000")
        XCTAssertEqual(try Compression.inflate(gzip), Data("gzip payload\n".utf8))
        XCTAssertEqual(try Compression.gunzipIfNeeded(gzip), Data("gzip payload\n".utf8))
        let plain = Data([0x1a, 0x00, 0x02])
        XCTAssertEqual(try Compression.gunzipIfNeeded(plain), plain)
    }

    func testRefusesOutputBeyondTheLimit() throws {
        let bomb = try Compression.deflate(Data(count: 1 << 20))
        XCTAssertLessThan(bomb.count, 2_000)
        XCTAssertThrowsError(try Compression.inflate(bomb, limit: 512 * 1024)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .compression)
            XCTAssertTrue("\(error)".contains("limit"))
        }
        XCTAssertEqual(try Compression.inflate(bomb, limit: 1 << 20).count, 1 << 20)
    }

    func testDefaultLimitIs64MiB() throws {
        let bomb = try Compression.deflate(Data(count: Compression.defaultLimit + 1))
        XCTAssertThrowsError(try Compression.inflate(bomb))
        XCTAssertEqual(Compression.defaultLimit, 64 * 1024 * 1024)
    }

    func testRejectsTruncatedTrailingAndGarbageInput() throws {
        let deflated = try Compression.deflate(randomBytes(10_000))
        XCTAssertThrowsError(try Compression.inflate(deflated.prefix(deflated.count - 10)))
        XCTAssertThrowsError(try Compression.inflate(deflated + Data([1, 2, 3])))
        XCTAssertThrowsError(try Compression.inflate(Data("not compressed at all".utf8)))
        XCTAssertThrowsError(try Compression.inflate(Data()))
    }
}
