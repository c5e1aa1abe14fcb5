import Foundation
import ProvisionModel
@testable import ProvisionStore
import XCTest

/// libcrypto's SHA-256 (content digests) and the portable one (job and document digests) agree,
/// so a lock's digests mean the same whichever computed them.
final class StoreHasherTests: XCTestCase {
    func testAgreesWithThePortableSHA256() throws {
        for size in [0, 1, 55, 56, 63, 64, 65, 1000, 100_000] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) })
            XCTAssertEqual(try StoreHasher.hex(data), SHA256.hex(data), "\(size) bytes")
        }
        let hasher = try StoreHasher()
        hasher.update("abc")
        XCTAssertEqual(hasher.finalizeHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
