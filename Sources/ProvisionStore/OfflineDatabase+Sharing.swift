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
    /// BLOB reads the row's header, not its bytes, but each tile's row is still visited.
    ///
    /// `tiles`, the tile part as the writer of this file summed it (`ApplyOutcome.tileSharing`),
    /// spares that pass over every tile row: only the resources are read.
    public func contentSharing(tiles: ContentSharing? = nil) throws -> ContentSharing {
        try db.inTransaction(.deferred) {
            var sharing = tiles ?? ContentSharing()
            let queries = tiles == nil ? [OfflineDatabase.tileSharingSQL, OfflineDatabase.resourceSharingSQL]
                : [OfflineDatabase.resourceSharingSQL]
            for sql in queries {
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

    /// Calls `body` with the stored `y` and stored length (compressed where the row is; 0 for an
    /// empty "no content" tile) of every tile of `column`, ascending.
    ///
    /// Why a second column reader: `forEachStoredTile` is answered by the key index alone; a
    /// length reads each row's header in the table as well, which only the footprint needs.
    public func forEachStoredTileLength(in column: StoredTileColumn, _ body: (_ y: Int, _ bytes: Int64) throws -> Void) throws {
        guard !column.rows.isEmpty else { return }
        try step(OfflineDatabase.storedColumnLengthSQL, [
            .text(column.urlTemplate), .int(Int64(column.pixelRatio)), .int(Int64(column.zoom)), .int(Int64(column.x)),
            .int(Int64(column.rows.lowerBound)), .int(Int64(column.rows.upperBound)),
        ]) { row in try body(Int(row.int64(0)), row.int64(1)) }
    }

    static let storedColumnLengthSQL = """
        SELECT y, length(data) FROM tiles
        WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y >= ?5 AND y < ?6
        ORDER BY y
        """

    /// The stored length of each of `urls` that is stored as a resource.
    public func storedResourceSizes(among urls: [String]) throws -> [String: Int64] {
        var sizes: [String: Int64] = [:]
        try db.inTransaction(.deferred) {
            for url in urls {
                if let size = try db.queryFirst("SELECT length(data) FROM resources WHERE url = ?1", [.text(url)], { $0.int64(0) }) {
                    sizes[url] = size
                }
            }
        }
        return sizes
    }

    /// Mean stored length of the resources of a kind, or nil when none is stored.
    public func meanResourceSize(kind: ResourceKind) throws -> Double? {
        try db.queryFirst("SELECT avg(length(data)) FROM resources WHERE kind = ?1", [.int(Int64(kind.rawValue))]) {
            $0.isNull(0) ? nil : $0.double(0)
        } ?? nil
    }
}
