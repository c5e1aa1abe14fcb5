import Foundation
import ProvisionModel
import TileMath

/// A row of the old store the current store no longer holds: a side-load merge never deletes,
/// so a device that takes a patch keeps it.
public struct PatchDroppedRow: Equatable, Sendable {
    /// The row's URL: a resource's, or a tile's template expanded for its key.
    public var url: String
    /// Whether it is a tile row (else a resource row).
    public var isTile: Bool
    /// Its stored bytes (the length of `data`).
    public var byteCount: Int

    /// Creates a dropped row.
    public init(url: String, isTile: Bool, byteCount: Int) {
        self.url = url
        self.isTile = isTile
        self.byteCount = byteCount
    }
}

/// What a patch database holds, and what it cannot do.
public struct PatchContents: Equatable, Sendable {
    /// Tile rows written: new or changed since the old store, or of a region a device adds as new.
    public var tiles = 0
    /// Resource rows written, by the same rule.
    public var resources = 0
    /// Region rows written: every region of the current store.
    public var regions = 0
    /// The current store's region row ids whose definition or description no old region has:
    /// a device adds them as new regions, so the patch holds every row they link.
    public var newRegions: [Int64] = []
    /// The old store's region row ids no current region equals: a device keeps them.
    public var droppedRegions: [Int64] = []
    /// The old store's rows the current store lacks, by key order.
    public var droppedRows: [PatchDroppedRow] = []

    /// Creates empty contents.
    public init() {}
}

/// A row the current store changed whose `modified` a device would not take as newer than the
/// old store's, even stamped with the build time: a patch carrying it would leave the old bytes.
public struct PatchRowNotNewer: Error, Equatable, Sendable {
    /// The row's URL: a resource's, or a tile's template expanded for its key.
    public var url: String
    /// The old store's `modified` (nil when NULL, which nothing replaces).
    public var oldModified: Int64?
    /// The current store's `modified`.
    public var newModified: Int64?
}

/// Writing a patch: the rows a device needs to turn the old store into the current one by
/// MapLibre's side-load merge (the offline database fact sheet, "Merge / side-load").
///
/// Why each rule: the merge copies a tile or resource only when the device lacks it or the
/// incoming `modified` is newer, so every row whose bytes changed carries a newer `modified`
/// (the current row's, else the build time, else the row is refused); it matches a region on
/// definition and description, so an unchanged region is written with exactly those values and
/// a device merges into it; it links only the rows the side database holds, so a region a device
/// adds as new (its definition or description changed) comes with every row it links; rows the
/// merge would copy only to equal what the device has are left out. Nothing is deleted by a
/// merge, so the rows the current store dropped are only reported. Row and region ids are the
/// current store's, and every write runs in key order, so one pair of stores gives one file.
extension OfflineDatabase {
    /// The page size of a patch file.
    ///
    /// Why not SQLite's 4096: a patch is mostly small, and each of its tables and indexes (SQLite's
    /// own included, sixteen) takes a page however empty it is (64 KiB at 4096 for a patch of one
    /// tile); 1024 cuts that to 19 KiB and, with rows of a few hundred bytes, makes the patch of one
    /// tile in six of the demo job 14% smaller than 4096 does (512 pays more in overflow pages than
    /// it saves).
    static let patchPageSize = 1024

    /// Writes the patch from the store at `old` to the store at `current` into a new database at
    /// `destination` (which must not exist), stamping changed rows not newer than the old ones
    /// with `buildTime`. Throws `PatchRowNotNewer` for a row even that does not make newer.
    public static func writePatch(current: URL, since old: URL, to destination: URL, buildTime: Int64) throws -> PatchContents {
        let patch = try OfflineDatabase(url: destination, epoch: buildTime, options: .init(pageSize: patchPageSize))
        // Best effort: a failure closes the file the caller removes; success closed it in finish().
        defer { try? patch.close() }
        let contents = try patch.fillPatch(current: current, old: old, buildTime: buildTime)
        try patch.finish()
        return contents
    }

    private func fillPatch(current: URL, old: URL, buildTime: Int64) throws -> PatchContents {
        for (name, url) in [("cur", current), ("old", old)] {
            try db.run("ATTACH DATABASE ?1 AS \(name)", [.text(url.standardizedFileURL.absoluteString + "?mode=ro")])
        }
        // Best effort: detaching read-only attachments; closing the connection detaches anyway.
        defer { for name in ["old", "cur"] { try? db.exec("DETACH DATABASE \(name)") } }
        return try db.inTransaction {
            var contents = PatchContents()
            let sameRegion = "o.definition = c.definition AND o.description IS c.description"
            contents.newRegions = try db.query(
                "SELECT c.id FROM cur.regions c WHERE NOT EXISTS (SELECT 1 FROM old.regions o WHERE \(sameRegion)) ORDER BY c.id"
            ) { $0.int64(0) }
            contents.droppedRegions = try db.query(
                "SELECT o.id FROM old.regions o WHERE NOT EXISTS (SELECT 1 FROM cur.regions c WHERE \(sameRegion)) ORDER BY o.id"
            ) { $0.int64(0) }
            contents.regions = try db.run("INSERT INTO main.regions (id, definition, description) "
                                          + "SELECT id, definition, description FROM cur.regions ORDER BY id")
            for table in PatchTable.all {
                try refuseRowsNotNewer(table, buildTime: buildTime)
                let count = try copyRows(table, newRegions: contents.newRegions, buildTime: buildTime)
                if table.isTile { contents.tiles = count } else { contents.resources = count }
                contents.droppedRows += try droppedRows(table)
            }
            return contents
        }
    }

    /// Throws `PatchRowNotNewer` for the first row (in key order) whose bytes changed and whose
    /// `modified`, the current one or the build time, is not newer than the old store's.
    private func refuseRowsNotNewer(_ table: PatchTable, buildTime: Int64) throws {
        let sql = """
            SELECT \(table.urlColumns("c")), o.modified, c.modified FROM cur.\(table.name) c JOIN old.\(table.name) o ON \(table.sameKey)
            WHERE \(table.bytesDiffer) AND NOT coalesce(c.modified > o.modified, 0) AND NOT coalesce(?1 > o.modified, 0)
            ORDER BY \(table.keyOrder("c")) LIMIT 1
            """
        let refused = try db.queryFirst(sql, [.int(buildTime)]) { row in
            PatchRowNotNewer(url: table.url(row), oldModified: row.optionalInt64(table.urlColumnCount),
                             newModified: row.optionalInt64(table.urlColumnCount + 1))
        }
        if let refused { throw refused }
    }

    /// Copies the current store's linked rows of `table` that are new, changed, or linked to a
    /// new region, and their links; returns how many rows.
    private func copyRows(_ table: PatchTable, newRegions: [Int64], buildTime: Int64) throws -> Int {
        let regions = newRegions.map(String.init).joined(separator: ", ")
        let columns = table.columns.joined(separator: ", ")
        let values = table.columns.map { column in
            column == "modified"
                ? "CASE WHEN o.id IS NOT NULL AND \(table.bytesDiffer) AND NOT coalesce(c.modified > o.modified, 0) "
                    + "THEN ?1 ELSE c.modified END"
                : "c.\(column)"
        }.joined(separator: ", ")
        let count = try db.run("""
            INSERT INTO main.\(table.name) (id, \(columns))
            SELECT c.id, \(values) FROM cur.\(table.name) c LEFT JOIN old.\(table.name) o ON \(table.sameKey)
            WHERE c.id IN (SELECT \(table.linkColumn) FROM cur.\(table.links))
              AND (o.id IS NULL OR \(table.bytesDiffer)
                   OR c.id IN (SELECT \(table.linkColumn) FROM cur.\(table.links) WHERE region_id IN (\(regions))))
            ORDER BY c.id
            """, [.int(buildTime)])
        try db.run("""
            INSERT INTO main.\(table.links) (region_id, \(table.linkColumn))
            SELECT region_id, \(table.linkColumn) FROM cur.\(table.links)
            WHERE \(table.linkColumn) IN (SELECT id FROM main.\(table.name))
            ORDER BY region_id, \(table.linkColumn)
            """)
        return count
    }

    /// The old store's rows of `table` whose key the current store lacks, in key order.
    private func droppedRows(_ table: PatchTable) throws -> [PatchDroppedRow] {
        try db.query("""
            SELECT \(table.urlColumns("o")), coalesce(length(o.data), 0) FROM old.\(table.name) o
            WHERE NOT EXISTS (SELECT 1 FROM cur.\(table.name) c WHERE \(table.sameKey))
            ORDER BY \(table.keyOrder("o"))
            """) { row in
            PatchDroppedRow(url: table.url(row), isTile: table.isTile, byteCount: Int(row.int64(table.urlColumnCount)))
        }
    }
}

/// The columns a patch reads and writes of a table; `c` is the current store's row, `o` the old one's.
private struct PatchTable {
    var name: String
    var links: String
    var linkColumn: String
    /// The row's key (its UNIQUE constraint).
    var key: [String]
    /// Every column but `id`, in schema order.
    var columns: [String]

    var isTile: Bool { name == "tiles" }
    var sameKey: String { key.map { "o.\($0) = c.\($0)" }.joined(separator: " AND ") }
    /// The stored bytes differ: another body, or the same one stored otherwise.
    var bytesDiffer: String { "(o.data IS NOT c.data OR o.compressed <> c.compressed)" }
    func keyOrder(_ alias: String) -> String { key.map { "\(alias).\($0)" }.joined(separator: ", ") }

    /// The columns `url(_:)` reads, first in a query.
    func urlColumns(_ alias: String) -> String {
        (isTile ? ["url_template", "pixel_ratio", "z", "x", "y"] : ["url"]).map { "\(alias).\($0)" }.joined(separator: ", ")
    }
    var urlColumnCount: Int32 { isTile ? 5 : 1 }

    /// The row's URL from the `urlColumns` of a query row.
    func url(_ row: SQLiteStatement) -> String {
        guard isTile else { return row.text(0) }
        return TileURLTemplate.expand(row.text(0), tile: TileID(z: Int(row.int64(2)), x: Int(row.int64(3)), y: Int(row.int64(4))),
                                      pixelRatio: Int(row.int64(1)))
    }

    static let content = ["expires", "modified", "etag", "data", "compressed", "accessed", "must_revalidate"]
    static let all = [
        PatchTable(name: "resources", links: "region_resources", linkColumn: "resource_id", key: ["url"],
                   columns: ["url", "kind"] + content),
        PatchTable(name: "tiles", links: "region_tiles", linkColumn: "tile_id", key: ["url_template", "pixel_ratio", "z", "x", "y"],
                   columns: ["url_template", "pixel_ratio", "z", "x", "y"] + content),
    ]
}
