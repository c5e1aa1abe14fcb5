import Foundation
import ProvisionModel
import TileMath

/// Tiles and resources: writing, lookup, payloads.
extension OfflineDatabase {
    private static let upsertTile = """
        INSERT INTO tiles (url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed,
                           accessed, must_revalidate)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0)
        ON CONFLICT (url_template, pixel_ratio, z, x, y) DO UPDATE SET
          expires = excluded.expires, modified = excluded.modified, etag = excluded.etag,
          data = excluded.data, compressed = excluded.compressed, accessed = excluded.accessed,
          must_revalidate = 0
        """
    private static let upsertResource = """
        INSERT INTO resources (url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)
        ON CONFLICT (url) DO UPDATE SET
          kind = excluded.kind, expires = excluded.expires, modified = excluded.modified,
          etag = excluded.etag, data = excluded.data, compressed = excluded.compressed,
          accessed = excluded.accessed, must_revalidate = 0
        """
    private static let touchTile = """
        UPDATE tiles SET expires = ?1, etag = coalesce(?2, etag), modified = coalesce(?3, modified)
        WHERE url_template = ?4 AND pixel_ratio = ?5 AND z = ?6 AND x = ?7 AND y = ?8
        """
    private static let touchResource = """
        UPDATE resources SET expires = ?1, etag = coalesce(?2, etag), modified = coalesce(?3, modified) WHERE url = ?4
        """
    static let tileIDSQL = """
        SELECT id FROM tiles WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y = ?5
        """

    /// The bytes and `compressed` flag MapLibre would store for a payload: the zlib stream when
    /// strictly smaller than the raw bytes, else the raw bytes.
    public static func storedForm(of data: Data) throws -> (data: Data, compressed: Bool) {
        let deflated = try RowCompression.deflate(data)
        return deflated.count < data.count ? (deflated, true) : (data, false)
    }

    /// How a fetched body is stored. A body that arrived compressed keeps its DEFLATE data
    /// (rewrapped as zlib by the fetcher) when that is smaller; a tile that arrived raw is stored
    /// raw, as it came: deflating every tile again would cost more CPU than the whole download.
    /// Resources (styles, TileJSON, glyphs, sprites: few and small) are deflated as MapLibre does.
    static func storedForm(of body: FetchedBody, isTile: Bool) throws -> (data: Data, compressed: Bool) {
        if let zlib = body.zlibData { return zlib.count < body.data.count ? (zlib, true) : (body.data, false) }
        return isTile ? (body.data, false) : try storedForm(of: body.data)
    }

    /// The parameters identifying a tile key (?1...?5 of `tileIDSQL`).
    static func keyValues(_ key: TileKey) -> [SQLiteValue] {
        [.text(key.urlTemplate), .int(Int64(key.pixelRatio)),
         .int(Int64(key.tile.z)), .int(Int64(key.tile.x)), .int(Int64(key.tile.y))]
    }

    private static func optional(_ value: Int64?) -> SQLiteValue { value.map { .int($0) } ?? .null }
    private static func optional(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }

    /// Writes verified items in one transaction, replacing rows with equal keys in place
    /// (row ids, and so region links, are kept). Payloads are compressed before the
    /// transaction starts, so the write lock is held only for the inserts.
    ///
    /// A tile with an empty body is stored with `data` NULL ("no content", e.g. a 404 the job
    /// allows with `missingTiles: skip`): MapLibre serves it as an empty tile and it counts as
    /// stored. An empty resource body stays a zero-length blob.
    ///
    /// Throws `.diskFull` when the file system fills up; the batch is then rolled back whole.
    public func write(_ items: [FetchedItem]) throws {
        guard !items.isEmpty else { return }
        var rows: [(sql: String, values: [SQLiteValue])] = []
        rows.reserveCapacity(items.count)
        for item in items {
            let isTile = item.request.kind == .tile || item.request.tileKey != nil
            if item.body.isNotModified {
                // A 304: the stored bytes stay; only the cache fields move on.
                let fields: [SQLiteValue] = [OfflineDatabase.optional(item.body.expires),
                                             OfflineDatabase.optional(item.body.etag),
                                             OfflineDatabase.optional(item.body.modified)]
                if isTile, let key = item.request.tileKey {
                    rows.append((OfflineDatabase.touchTile, fields + OfflineDatabase.keyValues(key)))
                } else {
                    rows.append((OfflineDatabase.touchResource, fields + [.text(item.request.url)]))
                }
                continue
            }
            let payload: [SQLiteValue]
            if isTile && item.body.data.isEmpty {
                payload = [.null, .int(0)]  // "no content": MapLibre serves an empty tile
            } else {
                let stored = try OfflineDatabase.storedForm(of: item.body, isTile: isTile)
                payload = [.blob(stored.data), .int(stored.compressed ? 1 : 0)]
            }
            let cache: [SQLiteValue] = [
                OfflineDatabase.optional(item.body.expires), .int(item.body.modified ?? epoch),
                OfflineDatabase.optional(item.body.etag),
            ] + payload + [.int(epoch)]
            if isTile {
                guard let key = item.request.tileKey else {
                    throw StoreError(.invalidInput, "tile \(item.request.url) has no tile key", path: path)
                }
                rows.append((OfflineDatabase.upsertTile, OfflineDatabase.keyValues(key) + cache))
            } else {
                rows.append((OfflineDatabase.upsertResource,
                             [.text(item.request.url), .int(Int64(item.request.kind.rawValue))] + cache))
            }
        }
        try db.inTransaction {
            for row in rows { try db.run(row.sql, row.values) }
        }
    }

    /// Calls `body` with the stored `y` of every tile of `column` (empty "no content" tiles
    /// included), ascending; with `region`, only the tiles linked to that region row.
    ///
    /// Why this SQL: the unique key index (url_template, pixel_ratio, z, x, y) holds the row id,
    /// so one seek and a scan of the column's rows answer it without touching the table, and the
    /// link test is one probe of region_tiles' (region_id, tile_id) index per row
    /// (`OfflineDatabaseContentTests` checks the query plans).
    public func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?,
                                  _ body: (_ y: Int) throws -> Void) throws {
        guard !column.rows.isEmpty else { return }
        var values: [SQLiteValue] = [
            .text(column.urlTemplate), .int(Int64(column.pixelRatio)), .int(Int64(column.zoom)), .int(Int64(column.x)),
            .int(Int64(column.rows.lowerBound)), .int(Int64(column.rows.upperBound)),
        ]
        if let region { values.append(.int(region)) }
        try step(region == nil ? OfflineDatabase.storedColumnSQL : OfflineDatabase.linkedColumnSQL, values) { row in
            try body(Int(row.int64(0)))
        }
    }

    static let storedColumnSQL = """
        SELECT y FROM tiles
        WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y >= ?5 AND y < ?6
        ORDER BY y
        """
    static let linkedColumnSQL = """
        SELECT t.y FROM tiles t
        WHERE t.url_template = ?1 AND t.pixel_ratio = ?2 AND t.z = ?3 AND t.x = ?4 AND t.y >= ?5 AND t.y < ?6
          AND EXISTS (SELECT 1 FROM region_tiles rt WHERE rt.region_id = ?7 AND rt.tile_id = t.id)
        ORDER BY t.y
        """

    /// The subset of `urls` stored as resources.
    public func storedResources(among urls: [String]) throws -> Set<String> {
        guard !urls.isEmpty else { return [] }
        return try db.inTransaction(.deferred) {
            var found = Set<String>()
            for url in urls where try db.queryFirst("SELECT 1 FROM resources WHERE url = ?1", [.text(url)],
                                                    { _ in true }) != nil {
                found.insert(url)
            }
            return found
        }
    }

    /// The inflated payload of a resource; nil when absent, empty when its data is NULL.
    public func resourceData(url: String) throws -> Data? {
        let row = try db.queryFirst("SELECT data, compressed FROM resources WHERE url = ?1", [.text(url)]) {
            ($0.data(0), $0.int64(1) != 0)
        }
        guard let (data, compressed) = row else { return nil }
        return compressed ? try RowCompression.inflate(data) : data
    }

    /// Tile rows whose data is NULL ("no content", stored for empty tiles).
    public func emptyTileCount() throws -> Int {
        Int(try db.queryFirst("SELECT count(*) FROM tiles WHERE data IS NULL") { $0.int64(0) } ?? 0)
    }

    /// The inflated payload of a tile; nil when absent, empty when its data is NULL.
    public func tileData(_ key: TileKey) throws -> Data? {
        let sql = """
            SELECT data, compressed FROM tiles
            WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y = ?5
            """
        let row = try db.queryFirst(sql, OfflineDatabase.keyValues(key)) { ($0.data(0), $0.int64(1) != 0) }
        guard let (data, compressed) = row else { return nil }
        return compressed ? try RowCompression.inflate(data) : data
    }

    /// Mean stored (possibly compressed) payload size of the tiles of a template at each of
    /// `zooms` that holds any, by zoom; empty (NULL) tiles are not counted.
    ///
    /// Why one pass summed here and not `avg()` per zoom: the key index leads with the pixel
    /// ratio, so a query per zoom reads every index entry of the template again; one pass reads
    /// each row of the template's zooms once. The sums are exact integers, so each mean equals
    /// SQLite's `avg(length(data))` to the bit.
    public func meanTileSizes(urlTemplate: String, zooms: ClosedRange<Int>) throws -> [Int: Double] {
        var totals: [Int: (bytes: Int64, count: Int64)] = [:]
        let sql = "SELECT z, length(data) FROM tiles WHERE url_template = ?1 AND z BETWEEN ?2 AND ?3 AND data IS NOT NULL"
        try step(sql, [.text(urlTemplate), .int(Int64(zooms.lowerBound)), .int(Int64(zooms.upperBound))]) { row in
            totals[Int(row.int64(0)), default: (0, 0)].bytes += row.int64(1)
            totals[Int(row.int64(0)), default: (0, 0)].count += 1
        }
        return totals.mapValues { Double($0.bytes) / Double($0.count) }
    }

    /// Deletes tiles and resources that no region links to, in one transaction.
    public func pruneOrphans() throws -> (tiles: Int, resources: Int) {
        try db.inTransaction {
            let tiles = try db.run(
                "DELETE FROM tiles WHERE NOT EXISTS (SELECT 1 FROM region_tiles WHERE tile_id = tiles.id)")
            let resources = try db.run("""
                DELETE FROM resources
                WHERE NOT EXISTS (SELECT 1 FROM region_resources WHERE resource_id = resources.id)
                """)
            return (tiles, resources)
        }
    }
}
