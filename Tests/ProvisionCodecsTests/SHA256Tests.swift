import Foundation
import ProvisionCodecs
import XCTest

/// SHA-256 against the FIPS 180-4 examples, a chunked feed that crosses block boundaries, and
/// the value semantics of a hash in progress.
final class SHA256Tests: XCTestCase {
    func testKnownVectors() {
        XCTAssertEqual(SHA256.hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(SHA256.hex(Data(repeating: UInt8(ascii: "a"), count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testChunkedFeedEqualsOneShot() {
        let data = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        for chunk in [1, 7, 63, 64, 65, 1000] {
            var hash = SHA256()
            var offset = 0
            while offset < data.count {
                hash.update(data.subdata(in: offset..<min(offset + chunk, data.count)))
                offset += chunk
            }
            XCTAssertEqual(hash.finalizeHex(), SHA256.hex(data), "chunks of \(chunk)")
        }
    }

    func testACopyHashesOnIndependently() {
        var first = SHA256()
        first.update("ab")
        var second = first
        first.update("c")
        second.update("d")
        XCTAssertEqual(first.finalizeHex(), SHA256.hex("abc"))
        XCTAssertEqual(second.finalizeHex(), SHA256.hex("abd"))
        let untouched = SHA256()
        var copy = untouched
        copy.update("x")
        var original = untouched
        XCTAssertEqual(original.finalizeHex(), SHA256.hex(""), "writing to a copy leaves the original alone")
    }

    func testFinalizeStartsTheHashOver() {
        var hash = SHA256()
        hash.update("abc")
        XCTAssertEqual(hash.finalize().count, 32)
        hash.update("abc")
        XCTAssertEqual(hash.finalizeHex(), SHA256.hex("abc"))
        XCTAssertEqual(hash.finalizeHex(), SHA256.hex(""))
    }

    func testCopiesSharedAcrossThreadsStayIndependent() {
        var base = SHA256()
        base.update("shared prefix ")
        let frozen = base
        let results = Digests()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            var hash = frozen
            for _ in 0..<1_000 { hash.update("\(index)") }
            results.set(index, hash.finalizeHex())
        }
        for index in 0..<8 {
            XCTAssertEqual(results.get(index), SHA256.hex("shared prefix " + String(repeating: "\(index)", count: 1_000)))
        }
    }

    func testStringAndBufferFeedsEqualTheDataFeed() {
        let text = "Zürich 東京 ✓"
        var byString = SHA256()
        byString.update(text)
        var byBuffer = SHA256()
        Data(text.utf8).withUnsafeBytes { byBuffer.update($0) }
        let expected = SHA256.hex(Data(text.utf8))
        XCTAssertEqual(byString.finalizeHex(), expected)
        XCTAssertEqual(byBuffer.finalizeHex(), expected)
        XCTAssertEqual(SHA256.hexString([0x00, 0x0f, 0xa0, 0xff]), "000fa0ff")
    }
}

/// Digests by index, written from several threads.
private final class Digests: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var values: [Int: String] = [:]

    func set(_ index: Int, _ digest: String) {
        lock.lock()
        defer { lock.unlock() }
        values[index] = digest
    }

    func get(_ index: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return values[index]
    }
}
