import Foundation
import ProvisionModel
import TileMath

extension ContentDigest {
    /// Rows per chunk.
    public static let chunkSize = ContentHasher.chunkSize
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
        var result = ContentDigest(tileCount: 0, resourceCount: 0, byteCount: 0, digest: "")
        var hasher = try ContentHasher()
        try forEachHashedRow { row in
            if row.isTile { result.tileCount += 1 } else { result.resourceCount += 1 }
            result.byteCount += Int64(row.bytes.count)
            try hasher.add(row.key, row.line, row.bytes)
        }
        (result.digest, result.chunks) = try hasher.finish()
        return result
    }

    /// One row as the content digest reads it.
    public struct HashedRow {
        /// The key line hashed before the bytes (`R url kind compressed length` or `T template
        /// ratio z x y compressed length`).
        public var line: String
        /// The stored bytes.
        public var bytes: Data
        public var isTile: Bool
        /// The row's key, in the digest's order.
        public var key: ChunkKey
        public var kind: ResourceKind
        public var compressed: Bool
    }

    /// Calls `body` with every row in the content digest's order: resources by URL, then tiles by key.
    public func forEachHashedRow(_ body: (HashedRow) throws -> Void) throws {
        let resources = try db.prepare("SELECT url, kind, data, compressed FROM resources ORDER BY url")
        defer { resources.reset() }
        while try resources.step() {
            let stored = resources.optionalData(2) ?? Data()
            let url = resources.text(0), kind = resources.int64(1), compressed = resources.int64(3)
            try body(HashedRow(line: "R \(url) \(kind) \(compressed) \(stored.count)\n", bytes: stored, isTile: false,
                               key: .resource(url: url), kind: ResourceKind(rawValue: Int(kind)) ?? .unknown,
                               compressed: compressed == 1))
        }
        let tiles = try db.prepare(
            "SELECT url_template, pixel_ratio, z, x, y, data, compressed FROM tiles ORDER BY url_template, pixel_ratio, z, x, y")
        defer { tiles.reset() }
        while try tiles.step() {
            let stored = tiles.optionalData(5) ?? Data()
            let template = tiles.text(0), ratio = tiles.int64(1), z = tiles.int64(2), x = tiles.int64(3), y = tiles.int64(4)
            let compressed = tiles.int64(6)
            let key = TileKey(urlTemplate: template, pixelRatio: Int(ratio), tile: TileID(z: Int(z), x: Int(x), y: Int(y)))
            try body(HashedRow(line: "T \(template) \(ratio) \(z) \(x) \(y) \(compressed) \(stored.count)\n", bytes: stored,
                               isTile: true, key: .tile(key), kind: .tile, compressed: compressed == 1))
        }
    }
}

extension OfflineDatabase {
    /// Tile rows, resource rows and their stored bytes (as `contentDigest()` sums them), counted
    /// without reading a row's bytes (SQLite's `length()` of a blob reads only its header).
    public func storedTotals() throws -> (tiles: Int, resources: Int, bytes: Int64) {
        try db.queryFirst("""
            SELECT (SELECT count(*) FROM tiles), (SELECT count(*) FROM resources),
                   (SELECT coalesce(sum(length(data)), 0) FROM tiles) + (SELECT coalesce(sum(length(data)), 0) FROM resources)
            """) { (Int($0.int64(0)), Int($0.int64(1)), $0.int64(2)) } ?? (0, 0, 0)
    }
}
