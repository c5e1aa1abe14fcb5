import Foundation
import ProvisionCodecs
import XCTest

/// The streaming inflater: pieces of any size, small output blocks, stopping, bytes after the end.
final class InflaterTests: XCTestCase {
    /// Feeds `data` in pieces of `pieceSize`, collecting the output; the last progress reported.
    private func inflate(_ data: Data, framing: ZlibFraming, pieceSize: Int, blockSize: Int)
        throws -> (output: Data, progress: Inflater.Progress, inflater: Inflater) {
        let inflater = try Inflater(framing: framing, blockSize: blockSize)
        var output = Data()
        var progress = Inflater.Progress.needsInput
        var offset = 0
        repeat {
            let piece = data.subdata(in: offset..<min(offset + pieceSize, data.count))
            progress = try piece.withUnsafeBytes { raw in
                try inflater.inflate(raw) { block in
                    XCTAssertLessThanOrEqual(block.count, blockSize)
                    output.append(contentsOf: block)
                    return true
                }
            }
            offset += pieceSize
        } while offset < data.count && progress == .needsInput
        return (output, progress, inflater)
    }

    func testPiecesOfAnySizeGiveTheWholePayload() throws {
        let payload = randomBytes(20_000) + Data(repeating: 3, count: 50_000)
        for (framing, stream) in [(ZlibFraming.zlib, try Zlib.deflate(payload)), (.gzip, try Gzip.compress(payload))] {
            for pieceSize in [1, 7, 1_000, stream.count] {
                let result = try inflate(stream, framing: framing, pieceSize: pieceSize, blockSize: 4_096)
                XCTAssertEqual(result.output, payload, "\(framing.name), pieces of \(pieceSize)")
                XCTAssertEqual(result.progress, .finished)
                XCTAssertTrue(result.inflater.isFinished)
                XCTAssertEqual(result.inflater.unusedInputCount, 0)
            }
        }
    }

    func testAStreamCutShortAsksForMoreInput() throws {
        let stream = try Zlib.deflate(randomBytes(5_000))
        let result = try inflate(stream.prefix(stream.count - 3), framing: .zlib, pieceSize: 100, blockSize: 1_024)
        XCTAssertEqual(result.progress, .needsInput)
        XCTAssertFalse(result.inflater.isFinished)
    }

    func testBytesAfterTheEndAreCountedNotInflated() throws {
        let stream = try Zlib.deflate(Data("end".utf8)) + Data([9, 9, 9, 9])
        let result = try inflate(stream, framing: .zlib, pieceSize: stream.count, blockSize: 64)
        XCTAssertEqual(result.output, Data("end".utf8))
        XCTAssertEqual(result.progress, .finished)
        XCTAssertEqual(result.inflater.unusedInputCount, 4)
        let again = try Data([1, 2]).withUnsafeBytes { raw in try result.inflater.inflate(raw) { _ in true } }
        XCTAssertEqual(again, .finished)
        XCTAssertEqual(result.inflater.unusedInputCount, 2)
    }

    func testOutputReturningFalseStops() throws {
        let stream = try Zlib.deflate(Data(repeating: 5, count: 100_000))
        let inflater = try Inflater(framing: .zlib, blockSize: 1_000)
        var blocks = 0
        let progress = try stream.withUnsafeBytes { raw in
            try inflater.inflate(raw) { _ in
                blocks += 1
                return blocks < 3
            }
        }
        XCTAssertEqual(progress, .stopped)
        XCTAssertEqual(blocks, 3)
        XCTAssertFalse(inflater.isFinished)
    }

    func testCorruptDataThrowsWithZlibsMessage() throws {
        let inflater = try Inflater(framing: .zlib)
        XCTAssertThrowsError(try Data("plain text, no header".utf8).withUnsafeBytes { raw in
            try inflater.inflate(raw) { _ in true }
        }) { error in
            XCTAssertEqual(error as? CodecError, .corrupt(.zlib, "incorrect header check"))
        }
    }
}
