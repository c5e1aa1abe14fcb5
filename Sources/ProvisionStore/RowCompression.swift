import Foundation
import ProvisionCodecs

/// The compressed form of stored rows: zlib streams (`compressed = 1`), as MapLibre writes them,
/// with codec failures reported as the store's `.compression` errors.
enum RowCompression {
    /// The zlib stream of `data` at the default level (MapLibre's `util::compress`).
    static func deflate(_ data: Data) throws(StoreError) -> Data {
        do {
            return try Zlib.deflate(data)
        } catch {
            throw StoreError(.compression, error.description)
        }
    }

    /// The payload of a stored zlib stream (a gzip one is read too), at most `Zlib.defaultInflateLimit` bytes.
    static func inflate(_ data: Data) throws(StoreError) -> Data {
        do {
            return try Zlib.inflate(data, framing: .zlibOrGzip)
        } catch {
            throw StoreError(.compression, error.description)
        }
    }
}
