import Foundation
import ProvisionModel
@testable import ProvisionStore
import TileMath
import XCTest

/// The hashing thread of the next-store writer gives the digests hashing on the caller's thread
/// gives, over more rows than one batch and more than the batches allowed to wait, and a stage
/// that is cancelled neither blocks nor yields a digest.
final class HashingStageTests: XCTestCase {
    private func rows(_ count: Int) -> [HashingStage.Row] {
        (0..<count).map { index in
            let key = TileKey(urlTemplate: "https://t.invalid/{z}/{x}/{y}.pbf", pixelRatio: 1,
                              tile: TileID(z: 12 + index / 256, x: index / 64, y: index % 64))
            let bytes = Data((0..<(index % 97 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            return HashingStage.Row(key: .tile(key), line: Array("T \(index) \(bytes.count)\n".utf8), bytes: bytes)
        }
    }

    private func inline(_ rows: [HashingStage.Row]) throws -> (digest: String, chunks: [ChunkDigest]) {
        var hasher = try ContentHasher()
        for row in rows {
            try row.line.withUnsafeBytes { line in try row.bytes.withUnsafeBytes { try hasher.add(row.key, line, $0) } }
        }
        return try hasher.finish()
    }

    func testTheThreadHashesWhatTheCallerWouldInTheSameOrder() throws {
        let count = HashingStage.batchSize * (HashingStage.batchLimit + 3) + 17
        let all = rows(count)
        var stage = HashingStage(hasher: try ContentHasher())
        for row in all { stage.add(row.key, line: row.line, bytes: row.bytes) }
        var hasher = try stage.finish()
        let threaded = try hasher.finish()
        let expected = try inline(all)
        XCTAssertEqual(threaded.digest, expected.digest)
        XCTAssertEqual(threaded.chunks, expected.chunks)
        XCTAssertGreaterThan(expected.chunks.count, 1)
        XCTAssertNotEqual(try inline(all.reversed()).digest, expected.digest, "the order is part of the digest")
    }

    func testAStageGoesOnFromTheRowsItsHasherHolds() throws {
        let all = rows(300)
        var first = try ContentHasher()
        for row in all.prefix(100) {
            try row.line.withUnsafeBytes { line in try row.bytes.withUnsafeBytes { try first.add(row.key, line, $0) } }
        }
        var stage = HashingStage(hasher: first)
        for row in all.dropFirst(100) { stage.add(row.key, line: row.line, bytes: row.bytes) }
        var hasher = try stage.finish()
        XCTAssertEqual(try hasher.finish().digest, try inline(all).digest)
    }

    func testACancelledStageTakesNoMoreAndGivesNoDigest() throws {
        var stage = HashingStage(hasher: try ContentHasher())
        stage.cancel()
        // More than the waiting batches allow: a stage that no longer hashes must not block.
        for row in rows(HashingStage.batchSize * (HashingStage.batchLimit + 2)) {
            stage.add(row.key, line: row.line, bytes: row.bytes)
        }
        XCTAssertThrowsError(try stage.finish())
    }
}
