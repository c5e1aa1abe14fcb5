import Foundation
import ProvisionCodecs

/// A tile as an exported archive holds it: its bytes in the archive's tile compression, and a
/// key of its payload, so equal tiles are stored once.
public struct ArchiveTile: Sendable {
    /// The first 128 bits of the SHA-256 of a tile's payload: equal keys mean equal tiles (a
    /// collision among a billion tiles has odds of about 10^-21).
    public struct ContentKey: Hashable, Sendable {
        public var high: UInt64
        public var low: UInt64

        /// The key of `payload`.
        public init(payload: Data) {
            var hash = SHA256()
            hash.update(payload)
            let digest = hash.finalize()
            var high: UInt64 = 0, low: UInt64 = 0
            for i in 0..<8 {
                high = high << 8 | UInt64(digest[i])
                low = low << 8 | UInt64(digest[8 + i])
            }
            self.high = high
            self.low = low
        }
    }

    /// The bytes the archive stores.
    public var bytes: Data
    /// The tile's payload, as a renderer reads it (inflated).
    public var payload: Data
    /// The key of `payload`.
    public var key: ContentKey

    /// The tile stored as `stored` (a zlib stream when `compressed`) in an archive whose tiles
    /// are gzip members when `gzip`, else bare payloads.
    ///
    /// A zlib stream's deflate data is rewrapped as the gzip member (`Gzip.member(fromZlib:)`)
    /// instead of being compressed again; a payload stored bare is compressed.
    public init(stored: Data, compressed: Bool, gzip: Bool) throws {
        payload = compressed ? try RowCompression.inflate(stored) : stored
        key = ContentKey(payload: payload)
        if !gzip {
            bytes = payload
        } else if compressed, let member = Gzip.member(fromZlib: stored, payload: payload) {
            bytes = member
        } else {
            do {
                bytes = try Gzip.compress(payload)
            } catch {
                throw StoreError(.compression, error.description)
            }
        }
    }
}
