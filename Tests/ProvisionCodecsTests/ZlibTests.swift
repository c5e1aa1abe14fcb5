import Foundation
import ProvisionCodecs
import XCTest

/// zlib streams: MapLibre's stored form, round trips, limits and damaged input.
final class ZlibTests: XCTestCase {
    func testDeflateMatchesZlibCompressAtTheDefaultLevel() throws {
        // Python: zlib.compress(b'hello hello hello hello hello').hex()
        let expected = Data(hex: "789ccb48cdc9c957c8c04e0200a3100ae5")
        XCTAssertEqual(try Zlib.deflate(Data("hello hello hello hello hello".utf8)), expected)
        XCTAssertEqual(try Zlib.inflate(expected), Data("hello hello hello hello hello".utf8))
    }

    func testRoundTripsAndEmptyInput() throws {
        for payload in [Data(), Data("x".utf8), randomBytes(100_000), Data(repeating: 7, count: 300_000)] {
            let deflated = try Zlib.deflate(payload)
            XCTAssertEqual(deflated.first, 0x78, "zlib header")
            XCTAssertEqual(try Zlib.inflate(deflated), payload, "\(payload.count) bytes")
        }
    }

    func testInflatesASliceThatDoesNotStartAtIndexZero() throws {
        let deflated = try Zlib.deflate(Data("sliced".utf8))
        let framed = Data([0xAA, 0xBB]) + deflated
        XCTAssertEqual(try Zlib.inflate(framed.dropFirst(2)), Data("sliced".utf8))
    }

    func testRefusesOutputBeyondTheLimit() throws {
        let bomb = try Zlib.deflate(Data(count: 1 << 20))
        XCTAssertLessThan(bomb.count, 2_000)
        XCTAssertThrowsError(try Zlib.inflate(bomb, limit: 512 * 1024)) { error in
            XCTAssertEqual(error as? CodecError, .tooLarge(.zlib, limit: 512 * 1024))
            XCTAssertEqual("\(error)", "zlib stream inflates beyond 524288 bytes (the limit)")
        }
        XCTAssertEqual(try Zlib.inflate(bomb, limit: 1 << 20).count, 1 << 20, "exactly the limit is allowed")
    }

    func testDefaultLimitIs64MiB() throws {
        XCTAssertEqual(Zlib.defaultInflateLimit, 64 * 1024 * 1024)
        let bomb = try Zlib.deflate(Data(count: Zlib.defaultInflateLimit + 1))
        XCTAssertThrowsError(try Zlib.inflate(bomb)) { XCTAssertEqual($0 as? CodecError, .tooLarge(.zlib, limit: Zlib.defaultInflateLimit)) }
    }

    func testTruncatedInputIsTruncatedAtEveryLength() throws {
        let deflated = try Zlib.deflate(randomBytes(10_000))
        for length in [0, 1, 2, 10, deflated.count / 2, deflated.count - 4, deflated.count - 1] {
            XCTAssertThrowsError(try Zlib.inflate(deflated.prefix(length)), "\(length) bytes") { error in
                XCTAssertEqual(error as? CodecError, .truncated(.zlib), "\(length) bytes")
            }
        }
    }

    func testTrailingBytesAndGarbageAreRefused() throws {
        let deflated = try Zlib.deflate(randomBytes(10_000))
        XCTAssertThrowsError(try Zlib.inflate(deflated + Data([1, 2, 3]))) {
            XCTAssertEqual($0 as? CodecError, .trailingBytes(.zlib, count: 3))
        }
        XCTAssertThrowsError(try Zlib.inflate(Data("not compressed at all".utf8))) { error in
            guard case .corrupt(.zlib, let message)? = error as? CodecError else { return XCTFail("\(error)") }
            XCTAssertFalse(message.isEmpty)
        }
        var flipped = [UInt8](deflated)
        flipped[flipped.count - 1] ^= 0xFF  // the Adler-32 trailer
        XCTAssertThrowsError(try Zlib.inflate(Data(flipped))) { error in
            guard case .corrupt(.zlib, let message)? = error as? CodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("check"), message)
        }
    }

    func testChecksumsMatchTheirStandardCheckValues() {
        XCTAssertEqual(Zlib.crc32(Data("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(Zlib.adler32(Data("Wikipedia".utf8)), 0x11E6_0398)
        XCTAssertEqual(Zlib.crc32(Data()), 0)
        XCTAssertEqual(Zlib.adler32(Data()), 1)
    }
}
