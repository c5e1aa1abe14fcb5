import Foundation
import ProvisionCodecs
import XCTest

/// gzip framing against zlib framing, and rewrapping a gzip member as a zlib stream.
final class GzipTests: XCTestCase {
    /// Python: `gzip.compress(b'gzip payload\n', mtime=0).hex()`.
    let pythonGzip = Data(hex: "1f8b08000000000002034bafca2c502848acccc94f4ce10200ec4dc2d70d000000")
    /// Python: a member with the file name `tile.pbf` (FNAME) around `named member`.
    let namedMember = Data(hex: "1f8b08080000000002ff74696c652e70626600cb4bcc4d4d51c84dcd4d4a2d0200acb73b430c000000")

    func testInflatesGzipWrittenByOthers() throws {
        XCTAssertEqual(try Gzip.inflate(pythonGzip), Data("gzip payload\n".utf8))
        XCTAssertEqual(try Gzip.inflate(namedMember), Data("named member".utf8))
        XCTAssertTrue(Gzip.isGzip(pythonGzip))
        XCTAssertFalse(Gzip.isGzip(Data([0x1f])))
        XCTAssertFalse(Gzip.isGzip(try Zlib.deflate(Data("x".utf8))))
    }

    func testCompressWritesOneMemberWithNoNameAndTimeZero() throws {
        let gzip = try Gzip.compress(Data("gzip payload\n".utf8))
        // Python's zlib.compressobj(-1, DEFLATED, 31): same header up to the OS byte, same deflate data and trailer.
        let python = Data(hex: "1f8b08000000000000034bafca2c502848acccc94f4ce10200ec4dc2d70d000000")
        XCTAssertEqual(gzip.prefix(9), python.prefix(9))
        XCTAssertEqual(gzip.dropFirst(10), python.dropFirst(10))
        for payload in [Data(), randomBytes(70_000), Data(repeating: 1, count: 200_000)] {
            XCTAssertEqual(try Gzip.inflate(Gzip.compress(payload)), payload, "\(payload.count) bytes")
        }
    }

    func testEachFramingRefusesTheOtherAndAutoReadsBoth() throws {
        let payload = Data("framing".utf8)
        let zlib = try Zlib.deflate(payload)
        let gzip = try Gzip.compress(payload)
        XCTAssertThrowsError(try Zlib.inflate(gzip, framing: .zlib)) { error in
            guard case .corrupt(.zlib, _)? = error as? CodecError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try Gzip.inflate(zlib)) { error in
            guard case .corrupt(.gzip, _)? = error as? CodecError else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains("gzip"), "\(error)")
        }
        XCTAssertEqual(try Zlib.inflate(zlib, framing: .zlibOrGzip), payload)
        XCTAssertEqual(try Zlib.inflate(gzip, framing: .zlibOrGzip), payload)
    }

    func testTruncatedAndConcatenatedMembersAreRefused() throws {
        for length in [0, 2, 10, pythonGzip.count - 8, pythonGzip.count - 1] {
            XCTAssertThrowsError(try Gzip.inflate(pythonGzip.prefix(length)), "\(length) bytes") { error in
                XCTAssertEqual(error as? CodecError, .truncated(.gzip), "\(length) bytes")
                XCTAssertTrue("\(error)".contains("truncated gzip"), "\(error)")
            }
        }
        XCTAssertThrowsError(try Gzip.inflate(pythonGzip + pythonGzip)) {
            XCTAssertEqual($0 as? CodecError, .trailingBytes(.gzip, count: self.pythonGzip.count))
        }
        let bomb = try Gzip.compress(Data(count: 100_000))
        XCTAssertThrowsError(try Gzip.inflate(bomb, limit: 99_999)) { XCTAssertEqual($0 as? CodecError, .tooLarge(.gzip, limit: 99_999)) }
    }

    /// The inflated size a member states in its trailer sizes the output buffer; a size that
    /// is wrong (smaller, larger, far beyond the data) is still refused by zlib's length check,
    /// and a member of exactly the limit inflates.
    func testAMemberWhoseTrailerMisstatesItsSizeIsRefused() throws {
        let payload = randomBytes(50_000, seed: 3)
        let member = try Gzip.compress(payload)
        XCTAssertEqual(try Gzip.inflate(member), payload)
        for stated in [UInt32(10), UInt32(payload.count - 1), UInt32(payload.count + 1), UInt32(60 << 20)] {
            var bytes = [UInt8](member)
            for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: stated >> (8 * UInt32(index))) }
            XCTAssertThrowsError(try Gzip.inflate(Data(bytes)), "stated \(stated)") { error in
                guard case .corrupt(.gzip, let message)? = error as? CodecError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("length"), message)
            }
        }
        let zeros = try Gzip.compress(Data(count: 100_000))
        XCTAssertEqual(try Gzip.inflate(zeros, limit: 100_000), Data(count: 100_000), "exactly the limit is allowed")
        XCTAssertEqual(try Zlib.inflate(zeros, framing: .zlibOrGzip, limit: 100_000).count, 100_000)
    }

    func testRewrappingAMemberGivesTheZlibStreamOfTheSameDeflateData() throws {
        for payload in [Data("r".utf8), randomBytes(5_000), Data(repeating: 9, count: 100_000)] {
            let rewrapped = try XCTUnwrap(Gzip.zlibStream(fromGzip: Gzip.compress(payload), payload: payload))
            // Same level, same window: the deflate data is what zlib framing would carry.
            XCTAssertEqual(rewrapped, try Zlib.deflate(payload), "\(payload.count) bytes")
            XCTAssertEqual(try Zlib.inflate(rewrapped, framing: .zlib), payload)
        }
        let named = try XCTUnwrap(Gzip.zlibStream(fromGzip: namedMember, payload: Data("named member".utf8)))
        XCTAssertEqual(try Zlib.inflate(named), Data("named member".utf8), "FNAME is skipped")
    }

    func testRewrapRefusesWhatIsNotOneMemberOfThePayload() throws {
        let payload = Data("gzip payload\n".utf8)
        XCTAssertNil(Gzip.zlibStream(fromGzip: pythonGzip, payload: payload + Data("x".utf8)), "ISIZE differs")
        XCTAssertNil(Gzip.zlibStream(fromGzip: try Zlib.deflate(payload), payload: payload), "not gzip")
        XCTAssertNil(Gzip.zlibStream(fromGzip: pythonGzip.prefix(17), payload: payload), "too short")
        XCTAssertNil(Gzip.zlibStream(fromGzip: pythonGzip + pythonGzip, payload: payload + payload), "two members")
    }
}

/// Rewrapping a zlib stream (as the offline database stores tiles) as a gzip member.
final class GzipMemberTests: XCTestCase {
    /// The member has the zlib stream's deflate data, so it is byte for byte what compressing the
    /// payload again at the same level gives, and it inflates to the payload.
    func testAZlibStreamBecomesTheGzipMemberOfItsPayload() throws {
        for payload in [Data("tile".utf8), randomBytes(70_000), Data(repeating: 7, count: 300_000)] {
            let zlib = try Zlib.deflate(payload)
            let member = try XCTUnwrap(Gzip.member(fromZlib: zlib, payload: payload))
            XCTAssertEqual(member, try Gzip.compress(payload), "\(payload.count) bytes")
            XCTAssertEqual(try Gzip.inflate(member), payload)
            XCTAssertEqual(member.dropFirst(10).dropLast(8), zlib.dropFirst(2).dropLast(4), "the same deflate data")
        }
    }

    /// Python's `zlib.compress(b'gzip payload\n')` rewrapped is what gzip inflates, as gzip's own
    /// CRC and size say (`Gzip.inflate` checks both).
    func testARewrappedStreamOfAnotherWriterInflates() throws {
        let python = Data(hex: "789c4bafca2c502848acccc94f4ce1020023cd04cf")
        let member = try XCTUnwrap(Gzip.member(fromZlib: python, payload: Data("gzip payload\n".utf8)))
        XCTAssertEqual(try Gzip.inflate(member), Data("gzip payload\n".utf8))
    }

    func testStreamsThatAreNotPlainZlibAreRefused() {
        let payload = Data("x".utf8)
        XCTAssertNil(Gzip.member(fromZlib: Data([0x78, 0x9c]), payload: payload), "too short")
        XCTAssertNil(Gzip.member(fromZlib: Data([0x78, 0xbb, 0, 0, 0, 0, 0, 1]), payload: payload), "preset dictionary")
        XCTAssertNil(Gzip.member(fromZlib: Data([0x79, 0x9c, 0, 0, 0, 0, 0, 1]), payload: payload), "not deflate")
        XCTAssertNil(Gzip.member(fromZlib: Data([0x78, 0x9d, 0, 0, 0, 0, 0, 1]), payload: payload), "bad header check")
    }
}
