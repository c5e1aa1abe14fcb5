import Foundation
import ProvisionModel
import XCTest

/// SHA-256 against the FIPS 180-4 examples and a chunked feed that crosses block boundaries.
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
}
