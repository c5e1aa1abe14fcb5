import Foundation
import ProvisionModel
import TileMath

/// One tile template and pixel ratio of the store, as an export sees it: a tileset.
public struct StoredTileSet: Equatable, Sendable {
    /// The URL template (`tiles.url_template`).
    public var urlTemplate: String
    /// The pixel ratio (`tiles.pixel_ratio`).
    public var pixelRatio: Int
    /// Tiles with content (data neither NULL nor empty).
    public var tileCount: Int
    /// Tiles stored as "no content" (NULL or empty data): left out of an export, as an archive
    /// without the tile means the same.
    public var emptyCount: Int
    /// The lowest and highest zooms with content.
    public var minZoom: Int
    public var maxZoom: Int

    public init(urlTemplate: String, pixelRatio: Int, tileCount: Int, emptyCount: Int, minZoom: Int, maxZoom: Int) {
        self.urlTemplate = urlTemplate
        self.pixelRatio = pixelRatio
        self.tileCount = tileCount
        self.emptyCount = emptyCount
        self.minZoom = minZoom
        self.maxZoom = maxZoom
    }
}

/// Reading tiles out for `provision export`, one row at a time.
///
/// Why cursors and row ids: an export of a million tiles must stay in bounded memory, so tiles
/// are stepped one at a time in the order the archive needs. MBTiles takes them in key order
/// (the unique index); PMTiles wants its Hilbert order, which no index has, so its writer first
/// collects (id, row id) pairs (16 bytes a tile) and then reads each row by its id.
/// `regions` limits every call to the tiles linked to those region rows (nil: every tile).
extension OfflineDatabase {
    /// The tilesets of the store with content counts and zooms, by template then ratio.
    public func storedTileSets(regions: [Int64]? = nil) throws -> [StoredTileSet] {
        try db.inTransaction(.deferred) {
            try db.query("""
                SELECT url_template, pixel_ratio,
                       sum(data IS NOT NULL AND length(data) > 0), sum(data IS NULL OR length(data) = 0),
                       min(CASE WHEN length(data) > 0 THEN z END), max(CASE WHEN length(data) > 0 THEN z END)
                FROM tiles \(Self.regionFilter(regions, prefix: "WHERE"))
                GROUP BY url_template, pixel_ratio ORDER BY url_template, pixel_ratio
                """) { row in
                StoredTileSet(urlTemplate: row.text(0), pixelRatio: Int(row.int64(1)), tileCount: Int(row.int64(2)),
                              emptyCount: Int(row.int64(3)), minZoom: Int(row.optionalInt64(4) ?? 0),
                              maxZoom: Int(row.optionalInt64(5) ?? 0))
            }
        }
    }

    /// The stored x and y extent (as stored: post-TMS for a TMS template) of a tileset's tiles
    /// with content at zoom `z`; nil when there are none.
    public func storedExtent(of set: StoredTileSet, zoom z: Int, regions: [Int64]? = nil)
        throws -> (minX: Int, minY: Int, maxX: Int, maxY: Int)? {
        try db.queryFirst("""
            SELECT min(x), min(y), max(x), max(y), count(*) FROM tiles
            WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND length(data) > 0
            \(Self.regionFilter(regions, prefix: "AND"))
            """, [.text(set.urlTemplate), .int(Int64(set.pixelRatio)), .int(Int64(z))]) { row in
            row.int64(4) == 0 ? nil : (Int(row.int64(0)), Int(row.int64(1)), Int(row.int64(2)), Int(row.int64(3)))
        } ?? nil
    }

    /// Calls `body` with every tile of a tileset that has content, in key order (z, x, y as
    /// stored): the stored tile, its stored bytes and whether they are a zlib stream.
    public func forEachTile(of set: StoredTileSet, regions: [Int64]? = nil,
                            _ body: (_ tile: TileID, _ data: Data, _ compressed: Bool) throws -> Void) throws {
        try db.inTransaction(.deferred) {
            let statement = try db.prepare("""
                SELECT z, x, y, data, compressed FROM tiles
                WHERE url_template = ?1 AND pixel_ratio = ?2 AND length(data) > 0
                \(Self.regionFilter(regions, prefix: "AND"))
                ORDER BY url_template, pixel_ratio, z, x, y
                """)
            defer { statement.reset() }
            try statement.bind([.text(set.urlTemplate), .int(Int64(set.pixelRatio))])
            while try statement.step() {
                let tile = TileID(z: Int(statement.int64(0)), x: Int(statement.int64(1)), y: Int(statement.int64(2)))
                try body(tile, statement.data(3), statement.int64(4) != 0)
            }
        }
    }

    /// Calls `body` with the row id and stored tile of every tile row of a tileset, with content
    /// or without (an empty row: the caller skips it when it reads the bytes).
    ///
    /// Why not only those with content: asking for the length of `data` reads every row's page,
    /// the whole file; without it the tiles' key index answers alone (it holds the row id). On a
    /// 200k-tile store that was a second of a five-second PMTiles export.
    public func forEachTileRowID(of set: StoredTileSet, regions: [Int64]? = nil,
                                 _ body: (_ rowID: Int64, _ tile: TileID) throws -> Void) throws {
        let statement = try db.prepare("""
            SELECT id, z, x, y FROM tiles
            WHERE url_template = ?1 AND pixel_ratio = ?2
            \(Self.regionFilter(regions, prefix: "AND"))
            """)
        defer { statement.reset() }
        try statement.bind([.text(set.urlTemplate), .int(Int64(set.pixelRatio))])
        while try statement.step() {
            try body(statement.int64(0), TileID(z: Int(statement.int64(1)), x: Int(statement.int64(2)),
                                                y: Int(statement.int64(3))))
        }
    }

    /// The row id of the first tile with content of a tileset in key order; nil when it has none.
    public func firstTileRowID(of set: StoredTileSet, regions: [Int64]? = nil) throws -> Int64? {
        try db.queryFirst("""
            SELECT id FROM tiles WHERE url_template = ?1 AND pixel_ratio = ?2 AND length(data) > 0
            \(Self.regionFilter(regions, prefix: "AND"))
            ORDER BY url_template, pixel_ratio, z, x, y LIMIT 1
            """, [.text(set.urlTemplate), .int(Int64(set.pixelRatio))]) { $0.int64(0) }
    }

    /// The stored bytes of tile row `rowID` and whether they are a zlib stream; nil when there is
    /// no such row.
    public func tileRow(_ rowID: Int64) throws -> (data: Data, compressed: Bool)? {
        try db.queryFirst("SELECT data, compressed FROM tiles WHERE id = ?1", [.int(rowID)]) {
            ($0.data(0), $0.int64(1) != 0)
        }
    }

    /// The region rows linking at least one tile of a tileset, among `regions` (nil: all), by id.
    public func regionRows(linking set: StoredTileSet, among regions: [Int64]? = nil) throws -> [Int64] {
        let candidates = try regions ?? db.query("SELECT id FROM regions ORDER BY id") { $0.int64(0) }
        return try candidates.filter { region in
            try db.queryFirst("""
                SELECT EXISTS (SELECT 1 FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id
                               WHERE rt.region_id = ?1 AND t.url_template = ?2 AND t.pixel_ratio = ?3)
                """, [.int(region), .text(set.urlTemplate), .int(Int64(set.pixelRatio))]) { $0.int64(0) != 0 } ?? false
        }
    }

    /// Runs `body` in one read transaction, so several reads see one state of the file (and SQLite
    /// takes and drops its file lock once, not once a query).
    public func reading<T>(_ body: () throws -> T) throws -> T {
        try db.inTransaction(.deferred, body)
    }

    /// The stored resource rows of `kind` (MapLibre's number), as URL and inflated payload, by URL.
    public func resources(ofKind kind: ResourceKind) throws -> [(url: String, data: Data)] {
        try db.query("SELECT url, data, compressed FROM resources WHERE kind = ?1 AND data IS NOT NULL ORDER BY url",
                     [.int(Int64(kind.rawValue))]) { row in
            (row.text(0), row.int64(2) != 0 ? try RowCompression.inflate(row.data(1)) : row.data(1))
        }
    }

    /// `AND id IN (…tiles linked to regions…)`, or nothing without a region filter.
    private static func regionFilter(_ regions: [Int64]?, prefix: String) -> String {
        guard let regions else { return "" }
        let list = regions.map(String.init).joined(separator: ", ")
        return "\(prefix) id IN (SELECT tile_id FROM region_tiles WHERE region_id IN (\(list)))"
    }
}
