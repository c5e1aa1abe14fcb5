import Foundation
@testable import ProvisionCodecs
import XCTest

/// libdeflate, when the system has it, gives the bytes and checksums zlib gives, and every body
/// it refuses is refused with zlib's error.
final class LibdeflateTests: XCTestCase {
    /// Payloads of many sizes and kinds: empty-ish, repetitive, random, larger than a window.
    private func payloads() -> [Data] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ count: Int) -> Data {
            Data((0..<count).map { _ in
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            })
        }
        let text = Data(String(repeating: "layer roads motorway primary 4096 ", count: 3_000).utf8)
        return [Data([7]), Data(repeating: 0, count: 100_000), random(1), random(255), random(40_000), text,
                text + random(70_000) + text]
    }

    func testTheLibraryIsThereWhereCIRuns() {
        // .ci/run installs libdeflate0: without it the apply is slower, never wrong.
        XCTAssertTrue(Libdeflate.isAvailable, "libdeflate.so.0 not found (Debian: libdeflate0)")
    }

    func testItInflatesAndChecksumsAsZlibDoes() throws {
        for payload in payloads() {
            let gzip = try Gzip.compress(payload)
            let direct = try XCTUnwrap(gzip.withUnsafeBytes { Libdeflate.inflateGzip($0, size: payload.count) },
                                       "\(payload.count) bytes: libdeflate takes a member zlib wrote")
            XCTAssertEqual(direct, payload)
            XCTAssertEqual(try Gzip.inflate(gzip), payload)
            XCTAssertEqual(try Zlib.inflateWithZlib(gzip, framing: .gzip, limit: Zlib.defaultInflateLimit), payload)
            XCTAssertEqual(payload.withUnsafeBytes { Libdeflate.adler32($0) }, payload.withUnsafeBytes { Zlib.zlibAdler32($0) })
        }
    }

    func testWhatItRefusesZlibExplains() throws {
        let payload = payloads()[4]
        let gzip = try Gzip.compress(payload)
        var badCRC = gzip
        badCRC[gzip.count - 8] ^= 0xFF
        var badData = gzip
        badData[gzip.count / 2] ^= 0x5A
        let cases: [(String, Data)] = [
            ("truncated", gzip.prefix(gzip.count - 20) + gzip.suffix(8)),
            ("a wrong CRC", badCRC),
            ("corrupt data", badData),
            ("a second member", gzip + gzip),
            ("trailing bytes", gzip + Data([1, 2, 3])),
        ]
        for (name, body) in cases {
            XCTAssertNil(body.withUnsafeBytes { Libdeflate.inflateGzip($0, size: payload.count) }, name)
            var fast: CodecError?, slow: CodecError?
            do { _ = try Gzip.inflate(body) } catch { fast = error }
            do { _ = try Zlib.inflateWithZlib(body, framing: .gzip, limit: Zlib.defaultInflateLimit) } catch { slow = error }
            XCTAssertNotNil(slow, "\(name): zlib refuses it")
            XCTAssertEqual(fast, slow, "\(name): the same error as zlib's")
        }
        // A trailer stating another size: libdeflate does not fill the buffer, zlib decodes it.
        var wrongSize = gzip
        wrongSize[gzip.count - 4] ^= 0x01
        XCTAssertNil(wrongSize.withUnsafeBytes { Libdeflate.inflateGzip($0, size: Gzip.statedSize(wrongSize)!) })
        XCTAssertThrowsError(try Gzip.inflate(wrongSize))
        // Past the limit: refused as zlib refuses it.
        XCTAssertThrowsError(try Gzip.inflate(gzip, limit: payload.count - 1))
    }

    func testZlibStreamsAndCRC32AsZlibGivesThem() throws {
        for payload in payloads() {
            let zlib = try Zlib.deflate(payload)
            let direct = try XCTUnwrap(zlib.withUnsafeBytes { Libdeflate.inflateZlib($0, limit: Zlib.defaultInflateLimit) },
                                       "\(payload.count) bytes: libdeflate takes a stream zlib wrote")
            XCTAssertEqual(direct, payload)
            XCTAssertEqual(try Zlib.inflate(zlib), payload)
            XCTAssertEqual(try Zlib.inflate(zlib, framing: .zlibOrGzip), payload)
            XCTAssertEqual(try Zlib.inflateWithZlib(zlib, framing: .zlib, limit: Zlib.defaultInflateLimit), payload)
            XCTAssertEqual(payload.withUnsafeBytes { Libdeflate.crc32($0) }, payload.withUnsafeBytes { Zlib.zlibCRC32($0) })
            XCTAssertEqual(Zlib.crc32(payload), payload.withUnsafeBytes { Zlib.zlibCRC32($0) })
        }
        // 100,000 zero bytes deflate to about 100 bytes: far past the first guess, the buffer grows.
        let zeros = Data(repeating: 0, count: 100_000)
        XCTAssertEqual(try Zlib.deflate(zeros).withUnsafeBytes { Libdeflate.inflateZlib($0, limit: 1 << 20) }, zeros)
    }

    func testZlibStreamsItRefusesZlibExplains() throws {
        let payload = payloads()[4]
        let zlib = try Zlib.deflate(payload)
        var badAdler = zlib
        badAdler[zlib.count - 1] ^= 0xFF
        var badData = zlib
        badData[zlib.count / 2] ^= 0x5A
        var dictionary = zlib
        dictionary[1] = 0xBB  // FDICT set, the header check still a multiple of 31 (0x78BB % 31 == 0)
        let cases: [(String, Data)] = [
            ("truncated", zlib.prefix(zlib.count - 20)),
            ("a wrong Adler-32", badAdler),
            ("corrupt data", badData),
            ("a preset dictionary", dictionary),
            ("trailing bytes", zlib + Data([1, 2, 3])),
            ("a gzip member", try Gzip.compress(payload)),
        ]
        for (name, body) in cases {
            XCTAssertNil(body.withUnsafeBytes { Libdeflate.inflateZlib($0, limit: Zlib.defaultInflateLimit) }, name)
            var fast: CodecError?, slow: CodecError?
            do { _ = try Zlib.inflate(body) } catch { fast = error }
            do { _ = try Zlib.inflateWithZlib(body, framing: .zlib, limit: Zlib.defaultInflateLimit) } catch { slow = error }
            XCTAssertNotNil(slow, "\(name): zlib refuses it")
            XCTAssertEqual(fast, slow, "\(name): the same error as zlib's")
        }
        // Past the limit: libdeflate gives up, zlib refuses it with its own error.
        XCTAssertNil(zlib.withUnsafeBytes { Libdeflate.inflateZlib($0, limit: payload.count - 1) })
        XCTAssertThrowsError(try Zlib.inflate(zlib, limit: payload.count - 1))
        XCTAssertEqual(try Zlib.inflate(zlib, limit: payload.count), payload, "a limit equal to the size is enough")
    }
}
