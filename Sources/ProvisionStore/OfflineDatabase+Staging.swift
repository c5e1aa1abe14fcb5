import Foundation
import ProvisionModel
import TileMath

/// Reading rows back in key order, for the canonical file an apply assembles.
extension OfflineDatabase: StagingStore {
    /// The row a downloaded tile is stored as: "no content" (NULL data) for an empty body, else
    /// the form `storedForm(of:isTile:)` picks; `modified` falls back to the epoch, `accessed`
    /// is the epoch.
    func tileRow(_ key: TileKey, body: FetchedBody) throws -> StoredTileRow {
        guard !body.isNotModified else {
            throw StoreError(.invalidInput, "tile \(key.urlTemplate) z\(key.tile.z) has a 304 answer and no bytes", path: path)
        }
        var content = StoredContent(expires: body.expires, modified: body.modified ?? epoch, etag: body.etag, data: nil,
                                    compressed: false, accessed: epoch, mustRevalidate: false)
        if !body.data.isEmpty {
            let stored = try OfflineDatabase.storedForm(of: body, isTile: true)
            content.data = stored.data
            content.compressed = stored.compressed
        }
        return StoredTileRow(key: key, content: content)
    }

    /// The content columns `expires, modified, etag, data, compressed, accessed, must_revalidate`
    /// of a row, starting at column `first`.
    static func content(_ row: SQLiteStatement, from first: Int32) -> StoredContent {
        StoredContent(expires: row.optionalInt64(first), modified: row.optionalInt64(first + 1),
                      etag: row.optionalText(first + 2), data: row.optionalData(first + 3),
                      compressed: row.int64(first + 4) != 0, accessed: row.int64(first + 5),
                      mustRevalidate: row.int64(first + 6) != 0)
    }

    private static let tileRowsSQL = """
        SELECT x, y, expires, modified, etag, data, compressed, accessed, must_revalidate FROM tiles
        WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND (x, y) > (?4, ?5)
        ORDER BY x, y LIMIT ?6
        """

    public func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow] {
        let start = after ?? (x: -1, y: -1)
        return try db.query(OfflineDatabase.tileRowsSQL, [
            .text(urlTemplate), .int(Int64(pixelRatio)), .int(Int64(zoom)), .int(Int64(start.x)), .int(Int64(start.y)),
            .int(Int64(limit)),
        ]) { row in
            StoredTileRow(key: TileKey(urlTemplate: urlTemplate, pixelRatio: pixelRatio,
                                       tile: TileID(z: zoom, x: Int(row.int64(0)), y: Int(row.int64(1)))),
                          content: OfflineDatabase.content(row, from: 2))
        }
    }

    public func resourceRows(urls: [String]) throws -> [StoredResourceRow] {
        let sql = """
            SELECT url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate FROM resources WHERE url = ?1
            """
        var rows: [StoredResourceRow] = []
        for url in urls.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            if let row = try db.queryFirst(sql, [.text(url)], {
                StoredResourceRow(url: $0.text(0), kind: $0.int64(1), content: OfflineDatabase.content($0, from: 2))
            }) {
                rows.append(row)
            }
        }
        return rows
    }

    public func rowCounts() throws -> (tiles: Int, resources: Int) {
        let tiles = try db.queryFirst("SELECT count(*) FROM tiles") { $0.int64(0) } ?? 0
        let resources = try db.queryFirst("SELECT count(*) FROM resources") { $0.int64(0) } ?? 0
        return (Int(tiles), Int(resources))
    }

    /// Deletes a database file and the rollback journal beside it, if they are there.
    public static func removeFiles(at url: URL) {
        // Best effort: removing files that may not be there.
        for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    /// Takes in the tiles and resources of a canonical file an apply was killed while writing
    /// (`partial`), as unlinked rows, so the next apply finds them stored and does not fetch
    /// them again; then deletes the file. Rows the store already has are left as they are. A
    /// file that is not a readable offline database is deleted. Returns how many tiles came in.
    @discardableResult
    public func takeInPartialBuild(at partial: URL) throws -> Int {
        defer { OfflineDatabase.removeFiles(at: partial) }
        guard FileManager.default.fileExists(atPath: partial.path) else { return 0 }
        // Opening it read-write plays back a journal the kill left, restoring its last commit.
        do {
            try OfflineDatabase(url: partial, epoch: epoch, options: .init(create: false)).close()
        } catch {
            return 0
        }
        try db.run("ATTACH DATABASE ?1 AS partial", [.text(partial.path)])
        // Best effort: closing the connection detaches anyway; the transaction's result is what matters.
        defer { try? db.exec("DETACH DATABASE partial") }
        return try db.inTransaction {
            try db.exec("""
                INSERT OR IGNORE INTO main.resources (url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate)
                SELECT url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate FROM partial.resources
                """)
            return try db.run("""
                INSERT OR IGNORE INTO main.tiles (url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed,
                                                  accessed, must_revalidate)
                SELECT url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed, accessed, must_revalidate
                FROM partial.tiles
                """)
        }
    }
}
