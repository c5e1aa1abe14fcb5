import Foundation
import ProvisionModel

/// What a store holds, summed and hashed.
public struct ContentDigest: Equatable, Sendable {
    /// Tile rows.
    public var tileCount: Int
    /// Resource rows.
    public var resourceCount: Int
    /// Payload bytes (inflated) of all rows.
    public var byteCount: Int64
    /// sha256 over every row's key and payload digest, in key order.
    public var digest: String
}

extension OfflineDatabase {
    /// Hashes every resource and tile (key, kind and inflated payload) in a fixed key order.
    ///
    /// Why payloads and not the file: the digest names the content a device will read, so it is
    /// the same however SQLite laid the pages out; the lock records it so `audit` can tell a
    /// store that lost or changed content from one that did not.
    public func contentDigest() throws -> ContentDigest {
        var hash = SHA256()
        var result = ContentDigest(tileCount: 0, resourceCount: 0, byteCount: 0, digest: "")
        let resources = try db.prepare("SELECT url, kind, data, compressed FROM resources ORDER BY url")
        defer { resources.reset() }
        while try resources.step() {
            let payload = try payload(resources, dataColumn: 2, compressedColumn: 3)
            result.resourceCount += 1
            result.byteCount += Int64(payload.count)
            hash.update("R \(resources.text(0)) \(resources.int64(1)) \(SHA256.hex(payload))\n")
        }
        let tiles = try db.prepare(
            "SELECT url_template, pixel_ratio, z, x, y, data, compressed FROM tiles ORDER BY url_template, pixel_ratio, z, x, y")
        defer { tiles.reset() }
        while try tiles.step() {
            let payload = try payload(tiles, dataColumn: 5, compressedColumn: 6)
            result.tileCount += 1
            result.byteCount += Int64(payload.count)
            hash.update("T \(tiles.text(0)) \(tiles.int64(1)) \(tiles.int64(2)) \(tiles.int64(3)) \(tiles.int64(4)) \(SHA256.hex(payload))\n")
        }
        result.digest = hash.finalizeHex()
        return result
    }

    private func payload(_ statement: SQLiteStatement, dataColumn: Int32, compressedColumn: Int32) throws -> Data {
        let stored = statement.optionalData(dataColumn) ?? Data()
        return statement.int64(compressedColumn) != 0 ? try Compression.inflate(stored) : stored
    }
}
