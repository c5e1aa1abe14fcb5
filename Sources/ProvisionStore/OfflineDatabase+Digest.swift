import Foundation
import ProvisionModel

/// What a store holds, summed and hashed.
public struct ContentDigest: Equatable, Sendable {
    /// Tile rows.
    public var tileCount: Int
    /// Resource rows.
    public var resourceCount: Int
    /// Stored bytes of all rows (as written: compressed where the row is).
    public var byteCount: Int64
    /// sha256 over every row's key, `compressed` flag, length and stored bytes, in key order.
    public var digest: String

    public init(tileCount: Int, resourceCount: Int, byteCount: Int64, digest: String) {
        self.tileCount = tileCount
        self.resourceCount = resourceCount
        self.byteCount = byteCount
        self.digest = digest
    }
}

extension OfflineDatabase {
    /// Hashes every resource and tile (key, kind, `compressed` flag and stored bytes) in a fixed
    /// key order.
    ///
    /// Why rows and not the file: the digest names the content a device will read, so it is the
    /// same however SQLite laid the pages out; the lock records it so `audit` can tell a store
    /// that lost or changed content from one that did not. Why stored bytes and not inflated
    /// payloads: the stored form is itself deterministic, and hashing it needs no inflate pass.
    public func contentDigest() throws -> ContentDigest {
        let hash = try StoreHasher()
        var result = ContentDigest(tileCount: 0, resourceCount: 0, byteCount: 0, digest: "")
        let resources = try db.prepare("SELECT url, kind, data, compressed FROM resources ORDER BY url")
        defer { resources.reset() }
        while try resources.step() {
            let stored = resources.optionalData(2) ?? Data()
            result.resourceCount += 1
            result.byteCount += Int64(stored.count)
            hash.update("R \(resources.text(0)) \(resources.int64(1)) \(resources.int64(3)) \(stored.count)\n")
            hash.update(stored)
        }
        let tiles = try db.prepare(
            "SELECT url_template, pixel_ratio, z, x, y, data, compressed FROM tiles ORDER BY url_template, pixel_ratio, z, x, y")
        defer { tiles.reset() }
        while try tiles.step() {
            let stored = tiles.optionalData(5) ?? Data()
            result.tileCount += 1
            result.byteCount += Int64(stored.count)
            hash.update("T \(tiles.text(0)) \(tiles.int64(1)) \(tiles.int64(2)) \(tiles.int64(3)) \(tiles.int64(4)) "
                        + "\(tiles.int64(6)) \(stored.count)\n")
            hash.update(stored)
        }
        result.digest = hash.finalizeHex()
        return result
    }
}
