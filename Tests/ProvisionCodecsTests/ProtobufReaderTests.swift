import Foundation
import ProvisionCodecs
import XCTest

/// The protobuf walker the vector tile checks and the label scan read tiles with.
final class ProtobufReaderTests: XCTestCase {
    /// Skipping varints eight bytes at a time stops where skipping them one by one does, for
    /// streams of one- to ten-byte varints, counts of 0 to past the end, and any alignment.
    func testSkippingVarintsStopsAfterTheLastOneWanted() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var stream: [UInt8] = Array(repeating: 0xFF, count: Int.random(in: 0...3, using: &generator))
            let start = stream.count
            var ends: [Int] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let length = Int.random(in: 0...9, using: &generator) < 7 ? 1 : Int.random(in: 2...10, using: &generator)
                stream += (0..<(length - 1)).map { _ in UInt8.random(in: 0x80...0xFF, using: &generator) }
                stream.append(UInt8.random(in: 0...0x7F, using: &generator))
                ends.append(stream.count)
            }
            let tail = Int.random(in: 0...2, using: &generator)
            stream += Array(repeating: 0x80, count: tail)  // an unfinished varint at the end
            for count in 0...(ends.count + 1) {
                stream.withUnsafeBytes { bytes in
                    var reader = ProtobufReader(bytes, range: start..<bytes.count)
                    let skipped = reader.skipVarints(UInt64(count))
                    if count == 0 {
                        XCTAssertTrue(skipped)
                        XCTAssertEqual(reader.offset, start)
                    } else if count <= ends.count {
                        XCTAssertTrue(skipped, "\(count) of \(ends.count)")
                        XCTAssertEqual(reader.offset, ends[count - 1], "\(count) of \(ends.count)")
                    } else {
                        XCTAssertFalse(skipped, "\(count) of \(ends.count)")
                    }
                }
            }
        }
    }
}
