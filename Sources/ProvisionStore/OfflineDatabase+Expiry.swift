import Foundation
import ProvisionModel
import TileMath

extension OfflineDatabase {
    /// Revalidation requests for every region-linked resource and tile whose expiry is before
    /// `now`: each carries the stored ETag and Last-Modified, so an origin that still has the
    /// same bytes answers 304 and the store keeps them without a rewrite.
    public func expiredRequests(before now: Int64) throws -> [FetchRequest] {
        var requests = try db.query("""
            SELECT url, kind, etag, modified FROM resources
            WHERE expires IS NOT NULL AND expires < ?1 AND id IN (SELECT resource_id FROM region_resources)
            ORDER BY url
            """, [.int(now)]) {
            FetchRequest(url: $0.text(0), kind: ResourceKind(rawValue: Int($0.int64(1))) ?? .unknown,
                         etag: $0.optionalText(2), modifiedSince: $0.optionalInt64(3))
        }
        requests += try db.query("""
            SELECT url_template, pixel_ratio, z, x, y, etag, modified FROM tiles
            WHERE expires IS NOT NULL AND expires < ?1 AND id IN (SELECT tile_id FROM region_tiles)
            ORDER BY url_template, pixel_ratio, z, x, y
            """, [.int(now)]) {
            let key = TileKey(urlTemplate: $0.text(0), pixelRatio: Int($0.int64(1)),
                              tile: TileID(z: Int($0.int64(2)), x: Int($0.int64(3)), y: Int($0.int64(4))))
            return FetchRequest(url: TileURLTemplate.expand(key.urlTemplate, tile: key.tile, pixelRatio: key.pixelRatio),
                                kind: .tile, tileKey: key, tile: key.tile, etag: $0.optionalText(5),
                                modifiedSince: $0.optionalInt64(6))
        }
        return requests
    }

    /// How many region-linked resources and tiles expired before `now`.
    public func expiredCounts(before now: Int64) throws -> (resources: Int, tiles: Int) {
        let resources = try db.queryFirst("""
            SELECT count(*) FROM resources
            WHERE expires IS NOT NULL AND expires < ?1 AND id IN (SELECT resource_id FROM region_resources)
            """, [.int(now)]) { Int($0.int64(0)) } ?? 0
        let tiles = try db.queryFirst("""
            SELECT count(*) FROM tiles
            WHERE expires IS NOT NULL AND expires < ?1 AND id IN (SELECT tile_id FROM region_tiles)
            """, [.int(now)]) { Int($0.int64(0)) } ?? 0
        return (resources, tiles)
    }
}
