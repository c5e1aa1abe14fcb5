import Foundation
import ProvisionModel

extension OfflineDatabase {
    /// Counts and sizes per region and overall, in one read transaction.
    public func summary() throws -> StoreSummary {
        try db.inTransaction(.deferred) {
            var regions: [StoreSummary.Region] = []
            for region in try self.regions() {
                let tiles = try db.queryFirst("""
                    SELECT coalesce(sum(length(t.data)), 0), count(*) - count(t.data)
                    FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id WHERE rt.region_id = ?1
                    """, [.int(region.rowID)]) { ($0.int64(0), Int($0.int64(1))) } ?? (0, 0)
                let resources = try db.queryFirst("""
                    SELECT count(*), coalesce(sum(length(r.data)), 0)
                    FROM region_resources rr JOIN resources r ON r.id = rr.resource_id WHERE rr.region_id = ?1
                    """, [.int(region.rowID)]) { (Int($0.int64(0)), $0.int64(1)) } ?? (0, 0)
                regions.append(StoreSummary.Region(
                    rowID: region.rowID, definition: region.definition, description: region.description,
                    tileCounts: try linkedTileCounts(region: region.rowID), resourceCount: resources.0,
                    tileBytes: tiles.0, resourceBytes: resources.1, emptyTileCount: tiles.1))
            }
            let tiles = try db.queryFirst(
                "SELECT count(*), coalesce(sum(length(data)), 0), count(*) - count(data) FROM tiles"
            ) { (Int($0.int64(0)), $0.int64(1), Int($0.int64(2))) } ?? (0, 0, 0)
            let resources = try db.queryFirst("SELECT count(*), coalesce(sum(length(data)), 0) FROM resources") {
                (Int($0.int64(0)), $0.int64(1))
            } ?? (0, 0)
            let orphanTiles = try db.queryFirst("""
                SELECT count(*) FROM tiles WHERE NOT EXISTS (SELECT 1 FROM region_tiles WHERE tile_id = tiles.id)
                """) { Int($0.int64(0)) } ?? 0
            let orphanResources = try db.queryFirst("""
                SELECT count(*) FROM resources
                WHERE NOT EXISTS (SELECT 1 FROM region_resources WHERE resource_id = resources.id)
                """) { Int($0.int64(0)) } ?? 0
            let kinds = try db.query("SELECT kind, count(*) FROM resources GROUP BY kind ORDER BY kind") {
                (kind: Int($0.int64(0)), count: Int($0.int64(1)))
            }
            return StoreSummary(
                regions: regions, tileCount: tiles.0, resourceCount: resources.0, tileBytes: tiles.1,
                resourceBytes: resources.1, orphanTileCount: orphanTiles, orphanResourceCount: orphanResources,
                emptyTileCount: tiles.2, resourceCountsByKind: kinds)
        }
    }
}
