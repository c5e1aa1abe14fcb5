import Foundation
import ProvisionModel
import TileMath

/// Reading every row of a table in id order, one row at a time, for `provision merge`.
///
/// Why stepping a statement and not returning arrays: a merge copies every row of stores of any
/// size, and memory must stay flat however many rows there are; each call holds one row at a
/// time. Each reader steps its own prepared statement (cached by the connection), so `body` may
/// use the database for other reads, but not start the same reader again before it returns.
extension OfflineDatabase {
    /// Calls `body` with every region row, by id ascending.
    public func forEachRegion(_ body: (StoredRegion) throws -> Void) throws {
        try step("SELECT id, definition, description FROM regions ORDER BY id", []) { row in
            try body(StoredRegion(rowID: row.int64(0), definition: row.data(1), description: row.optionalData(2)))
        }
    }

    /// Calls `body` with every resource row and its id, by id ascending; the row is as stored
    /// (`StoredResourceRow`, content unchanged).
    public func forEachResource(_ body: (_ id: Int64, _ row: StoredResourceRow) throws -> Void) throws {
        let sql = """
            SELECT id, url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate
            FROM resources ORDER BY id
            """
        try step(sql, []) { row in
            try body(row.int64(0), StoredResourceRow(url: row.text(1), kind: row.int64(2),
                                                     content: OfflineDatabase.content(row, from: 3)))
        }
    }

    /// Calls `body` with every tile row and its id, by id ascending; the row is as stored
    /// (`StoredTileRow`: key, cache fields, `compressed` flag and bytes unchanged).
    public func forEachTile(_ body: (_ id: Int64, _ row: StoredTileRow) throws -> Void) throws {
        let sql = """
            SELECT id, url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed, accessed,
                   must_revalidate
            FROM tiles ORDER BY id
            """
        try step(sql, []) { row in
            let key = TileKey(urlTemplate: row.text(1), pixelRatio: Int(row.int64(2)),
                              tile: TileID(z: Int(row.int64(3)), x: Int(row.int64(4)), y: Int(row.int64(5))))
            try body(row.int64(0), StoredTileRow(key: key, content: OfflineDatabase.content(row, from: 6)))
        }
    }

    /// How many tile rows there are, and their least and greatest ids (0 when there are none).
    public func tileIDSpan() throws -> (count: Int, first: Int64, last: Int64) {
        try db.queryFirst("SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM tiles") {
            (Int($0.int64(0)), $0.int64(1), $0.int64(2))
        } ?? (0, 0, 0)
    }

    /// Calls `body` with the id of every tile linked to region row `region`, ascending.
    public func forEachLinkedTileID(region: Int64, _ body: (Int64) throws -> Void) throws {
        try step("SELECT tile_id FROM region_tiles WHERE region_id = ?1 ORDER BY tile_id", [.int(region)]) { row in
            try body(row.int64(0))
        }
    }

    /// Calls `body` with the id of every resource linked to region row `region`, ascending.
    public func forEachLinkedResourceID(region: Int64, _ body: (Int64) throws -> Void) throws {
        try step("SELECT resource_id FROM region_resources WHERE region_id = ?1 ORDER BY resource_id", [.int(region)]) { row in
            try body(row.int64(0))
        }
    }

    /// Steps the cached statement of `sql` with `values` bound, calling `body` at each row; the
    /// statement is reset afterwards, also when `body` throws.
    func step(_ sql: String, _ values: [SQLiteValue], _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try db.prepare(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() { try body(statement) }
    }
}
