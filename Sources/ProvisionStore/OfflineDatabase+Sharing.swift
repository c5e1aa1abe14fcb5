import Foundation
import ProvisionModel
import TileMath

/// What each region's content takes, as stored: the sharing of tiles and resources between
/// region rows, and the stored sizes the planner's footprint reads.
extension OfflineDatabase {
    /// Every linked tile and resource, summed per set of region rows that link it, with its
    /// stored bytes (`length(data)`: compressed where the row is; 0 for a NULL "no content" tile).
    ///
    /// Why this query: it reads the links in content-id order through `region_tiles_tile_id`,
    /// so the rows of one tile come together and one tile is summed at a time; memory holds one
    /// tile's rows and one entry per distinct set of rows, never a tile list. `length()` of a
    /// BLOB reads the row's header, not its bytes.
    public func contentSharing() throws -> ContentSharing {
        try db.inTransaction(.deferred) {
            var sharing = ContentSharing()
            for sql in [OfflineDatabase.tileSharingSQL, OfflineDatabase.resourceSharingSQL] {
                try forEachRun(sql) { members, kind, count, bytes in sharing.add(members, kind: kind, count: count, bytes: bytes) }
            }
            return sharing
        }
    }

    /// Every tile link with the tile's stored length, by tile id.
    static let tileSharingSQL = """
        SELECT rt.tile_id, rt.region_id, length(t.data), 3
        FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id ORDER BY rt.tile_id
        """
    /// Every resource link with the resource's stored length and kind, by resource id.
    static let resourceSharingSQL = """
        SELECT rr.resource_id, rr.region_id, length(r.data), r.kind
        FROM region_resources rr JOIN resources r ON r.id = rr.resource_id ORDER BY rr.resource_id
        """

    /// Steps `sql` (content id, region id, stored length, kind; ordered by content id) and calls
    /// `body` once per run of consecutive content rows linked by the same regions and of the
    /// same kind, with the regions (ascending), the kind, the rows in the run and their bytes.
    ///
    /// Why runs: content ids follow key order, so neighbouring tiles mostly belong to the same
    /// regions; summing a run before handing it on keeps the per-row work to a comparison.
    private func forEachRun(_ sql: String, _ body: ([Int64], ResourceKind, Int, Int64) -> Void) throws {
        let statement = try db.prepare(sql)
        defer { statement.reset() }
        var current: Int64?
        var members: [Int64] = [], runMembers: [Int64] = []
        var bytes: Int64 = 0, runBytes: Int64 = 0, runCount = 0
        var kind = ResourceKind.unknown, runKind = ResourceKind.unknown
        func endRow() {
            if members != runMembers || kind != runKind {
                if runCount > 0 { body(runMembers, runKind, runCount, runBytes) }
                swap(&members, &runMembers)
                runKind = kind
                runCount = 0
                runBytes = 0
            }
            runCount += 1
            runBytes += bytes
        }
        while try statement.step() {
            let id = statement.int64(0)
            if id != current {
                if current != nil { endRow() }
                current = id
                members.removeAll(keepingCapacity: true)
                bytes = statement.int64(2)
                kind = ResourceKind(rawValue: Int(statement.int64(3))) ?? .unknown
            }
            // Keep the (few) regions of a row sorted as they come.
            let region = statement.int64(1)
            let at = members.firstIndex { $0 > region } ?? members.endIndex
            members.insert(region, at: at)
        }
        if current != nil { endRow() }
        if runCount > 0 { body(runMembers, runKind, runCount, runBytes) }
    }

    /// The stored (possibly compressed) length of each of `keys` that is stored; 0 for an empty
    /// "no content" tile.
    public func storedTileSizes(among keys: [TileKey]) throws -> [TileKey: Int64] {
        var sizes: [TileKey: Int64] = [:]
        try lookUpTiles(keys, withSizes: true) { sizes[$0] = $1 }
        return sizes
    }

    /// The stored length of each of `urls` that is stored as a resource.
    public func storedResourceSizes(among urls: [String]) throws -> [String: Int64] {
        var sizes: [String: Int64] = [:]
        try lookUpResources(urls, withSizes: true) { sizes[$0] = $1 }
        return sizes
    }

    /// How many tiles of one template, pixel ratio and zoom a region row links, and their stored bytes.
    ///
    /// Why `CROSS JOIN`: it makes SQLite walk the zoom's tiles by the unique index and probe the
    /// row's links, rather than walk every link of the row once per zoom asked.
    public func linkedTileBytes(region rowID: Int64, urlTemplate: String, pixelRatio: Int,
                                zoom: Int) throws -> (count: Int, bytes: Int64) {
        try db.queryFirst(OfflineDatabase.linkedTileBytesSQL,
                          [.text(urlTemplate), .int(Int64(pixelRatio)), .int(Int64(zoom)), .int(rowID)]) {
            (Int($0.int64(0)), $0.int64(1))
        } ?? (0, 0)
    }

    static let linkedTileBytesSQL = """
        SELECT count(*), coalesce(sum(length(t.data)), 0)
        FROM tiles t CROSS JOIN region_tiles rt ON rt.tile_id = t.id AND rt.region_id = ?4
        WHERE t.url_template = ?1 AND t.pixel_ratio = ?2 AND t.z = ?3
        """

    /// Mean stored length of the resources of a kind, or nil when none is stored.
    public func meanResourceSize(kind: ResourceKind) throws -> Double? {
        try db.queryFirst("SELECT avg(length(data)) FROM resources WHERE kind = ?1", [.int(Int64(kind.rawValue))]) {
            $0.isNull(0) ? nil : $0.double(0)
        } ?? nil
    }
}
