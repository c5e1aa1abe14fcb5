import Foundation
import ProvisionModel
import TileMath

/// How many rows of one kind (tiles or resources) a side-loaded region brought in.
public struct SideLoadCounts: Equatable, Sendable {
    /// Rows the store lacked, inserted.
    public var added = 0
    /// Stored rows whose `modified` was older than the incoming one's, replaced in place (same row id).
    public var replaced = 0
    /// Stored rows left as they were: the incoming `modified` is not newer (or either is NULL).
    public var kept = 0
    /// Incoming rows that would have been added or replaced a stored one, but whose bytes are not
    /// valid for their kind: left out (`SideLoadSkippedRow`).
    public var skipped = 0

    /// Creates counts.
    public init(added: Int = 0, replaced: Int = 0, kept: Int = 0, skipped: Int = 0) {
        self.added = added
        self.replaced = replaced
        self.kept = kept
        self.skipped = skipped
    }
}

/// An incoming row a side-load merge left out because its bytes are not valid for its kind.
public struct SideLoadSkippedRow: Equatable, Sendable {
    /// The row's URL: a resource's, or a tile's template expanded for its key.
    public var url: String
    /// Why its bytes are not usable (the check's words, or that they do not inflate).
    public var reason: String
    /// Whether it is a tile row (else a resource row).
    public var isTile: Bool

    /// Creates a skipped row.
    public init(url: String, reason: String, isTile: Bool) {
        self.url = url
        self.reason = reason
        self.isTile = isTile
    }
}

/// What merging one region of a side database into a store did.
public struct SideLoadedRegion: Equatable, Sendable {
    /// The region's row id in the side database.
    public var sideRowID: Int64
    /// The region's row id in the store: the (first) equal region it merged into, or the new row.
    public var rowID: Int64
    /// True when the region was added as a new row; false when it merged into an equal one
    /// (same definition, same description).
    public var isNew: Bool
    /// The region's description bytes (nil when NULL).
    public var description: Data?
    /// The region's tiles.
    public var tiles: SideLoadCounts
    /// The region's resources.
    public var resources: SideLoadCounts
}

/// Side-loading: MapLibre's rule for merging another offline database into this one, the way a
/// device takes in a bundle (`MLNOfflineStorage.addContents(ofFile:)`,
/// `OfflineManager.mergeOfflineRegions`), written from its documented semantics
/// (the offline database fact sheet, "Merge / side-load"; no MapLibre code is copied).
///
/// The rule, region by region in side row id order, all side databases in one transaction:
/// - a region whose definition equals a stored region's and whose description `IS` its
///   description (SQL comparison, so the stored types count) merges into every such region (the
///   first is reported); otherwise it is inserted as a new row;
/// - each tile and resource the region links to is inserted when the store has no row with its
///   key (tile: template, ratio, z, x, y; resource: URL), replaces the stored row's content in
///   place (row id kept) only when the incoming `modified` is newer than the stored one
///   (`side.modified > main.modified`: a NULL on either side never compares newer, so a NULL
///   `modified` never wins and a stored NULL is never replaced), and is kept otherwise; a
///   replaced row takes every column of the incoming one (`accessed` too) but its id;
/// - the region's links are added to the store's region.
/// Rows no side region links to (the side's ambient cache) are ignored, as MapLibre does.
/// One rule is provision's own: an incoming row that would be added or would replace a stored
/// one is first checked by kind (`check`: tiles as MVT, PNG, JPEG or WebP, resources by their
/// kind, after inflating a compressed row); one that fails is skipped (not added, the stored row
/// kept), counted and named, so a device file holding a damaged body newer than the store's good
/// one never replaces it.
/// A row two regions share is counted with the first region that brings it in; the second sees
/// it stored with an equal `modified` and counts it kept.
extension OfflineDatabase {
    /// At most this many side databases in one call: SQLite attaches at most 10 at once.
    public static let maximumSideDatabases = 10

    /// Opens `url` read-only and checks it is a MapLibre offline database (schema version 6,
    /// the six tables); throws the `StoreError` that says why not. Writes nothing. Returns how
    /// many tile rows it holds.
    @discardableResult
    public static func checkSideDatabase(at url: URL) throws -> Int {
        let side = try OfflineDatabase(url: url, epoch: 0, options: .init(readOnly: true, create: false))
        // Best effort: closing a side database opened read-only.
        defer { try? side.close() }
        return Int(try side.db.queryFirst("SELECT count(*) FROM tiles") { $0.int64(0) } ?? 0)
    }

    /// Merges the regions of each side database (opened read-only) into this one, in one
    /// transaction: a failure anywhere leaves the store as it was. Returns what happened to each
    /// region, one array per side database, in order.
    public func mergeSideDatabases(_ urls: [URL]) throws -> [[SideLoadedRegion]] {
        try mergeSideDatabases(urls, check: { _, _ in nil }).regions
    }

    /// `mergeSideDatabases(_:)`, skipping every incoming row that would change the store and that
    /// `check` (kind, inflated payload → why it is unusable) refuses. Returns the regions, and the
    /// rows skipped, one array per side database, in order.
    public func mergeSideDatabases(_ urls: [URL], check: (ResourceKind, Data) -> String?) throws
        -> (regions: [[SideLoadedRegion]], skipped: [[SideLoadSkippedRow]]) {
        guard urls.count <= OfflineDatabase.maximumSideDatabases else {
            throw StoreError(.invalidInput, "\(urls.count) side databases at once; at most "
                                + "\(OfflineDatabase.maximumSideDatabases) can be merged in one call", path: path)
        }
        var attached: [String] = []
        // Best effort: the merge's own error (or success) is what the caller hears; closing the connection detaches anyway.
        defer { for name in attached.reversed() { try? db.exec("DETACH DATABASE \(name)") } }
        for (index, url) in urls.enumerated() {
            let name = "side\(index)"
            try db.run("ATTACH DATABASE ?1 AS \(name)", [.text(url.standardizedFileURL.absoluteString + "?mode=ro")])
            attached.append(name)
        }
        defer {
            for side in attached {
                // Best effort: temporary tables vanish with the connection.
                for table in [SideLoadTable.tiles, .resources] { try? db.exec("DROP TABLE IF EXISTS temp.\(table.skipTable(side))") }
            }
        }
        let merged = try db.inTransaction {
            try attached.map { side in
                let skipped = try skipInvalidRows(.resources, side: side, check: check)
                    + skipInvalidRows(.tiles, side: side, check: check)
                let regions = try db.query("SELECT id, description FROM \(side).regions ORDER BY id") {
                    ($0.int64(0), $0.optionalData(1))
                }
                return (try regions.map { region in try mergeRegion(region.0, description: region.1, from: side) }, skipped)
            }
        }
        return (merged.map(\.0), merged.map(\.1))
    }

    /// Checks every row of `table` in `side` that a region links to and that would be added or
    /// would replace a stored row (the store has no row with its key, or an older one), and
    /// records the ids of those `check` refuses in a temporary table the merge leaves out.
    private func skipInvalidRows(_ table: SideLoadTable, side: String, check: (ResourceKind, Data) -> String?) throws
        -> [SideLoadSkippedRow] {
        try db.exec("CREATE TEMP TABLE IF NOT EXISTS \(table.skipTable(side)) (id INTEGER PRIMARY KEY)")
        let sameKey = table.key.map { "m.\($0) = s.\($0)" }.joined(separator: " AND ")
        let isTile = table.name == "tiles"
        let columns = (isTile ? ["s.id", "s.data", "s.compressed", "s.url_template", "s.pixel_ratio", "s.z", "s.x", "s.y"]
                              : ["s.id", "s.data", "s.compressed", "s.url", "s.kind"]).joined(separator: ", ")
        let sql = """
            SELECT \(columns) FROM \(side).\(table.name) s
            WHERE s.id IN (SELECT \(table.linkColumn) FROM \(side).\(table.links))
              AND NOT EXISTS (SELECT 1 FROM main.\(table.name) m WHERE \(sameKey) AND NOT (s.modified > m.modified))
            ORDER BY s.id
            """
        var skipped: [(Int64, SideLoadSkippedRow)] = []
        try step(sql, []) { row in
            let stored = row.optionalData(1) ?? Data()
            let kind = isTile ? ResourceKind.tile : (ResourceKind(rawValue: Int(row.int64(4))) ?? .unknown)
            var reason: String?
            do {
                let payload = row.int64(2) == 1 ? try RowCompression.inflate(stored) : stored
                if !(isTile && payload.isEmpty) { reason = check(kind, payload) }
            } catch {
                reason = "its bytes do not inflate"
            }
            guard let reason else { return }
            let url = isTile
                ? TileURLTemplate.expand(row.text(3), tile: TileID(z: Int(row.int64(5)), x: Int(row.int64(6)), y: Int(row.int64(7))),
                                         pixelRatio: Int(row.int64(4)))
                : row.text(3)
            skipped.append((row.int64(0), SideLoadSkippedRow(url: url, reason: reason, isTile: isTile)))
        }
        for (id, _) in skipped { try db.run("INSERT OR IGNORE INTO temp.\(table.skipTable(side)) (id) VALUES (?1)", [.int(id)]) }
        return skipped.map(\.1)
    }

    /// Merges side region `sideID` of the attached database `side`.
    private func mergeRegion(_ sideID: Int64, description: Data?, from side: String) throws -> SideLoadedRegion {
        let equal = """
            SELECT r.id FROM main.regions r JOIN \(side).regions sr
              ON r.definition = sr.definition AND r.description IS sr.description
            WHERE sr.id = ?1 ORDER BY r.id
            """
        var mainIDs = try db.query(equal, [.int(sideID)]) { $0.int64(0) }
        let isNew = mainIDs.isEmpty
        if isNew {
            try db.run("INSERT INTO main.regions (definition, description) SELECT definition, description "
                       + "FROM \(side).regions WHERE id = ?1", [.int(sideID)])
            mainIDs = [db.lastInsertRowID]
        }
        let tiles = try mergeRows(SideLoadTable.tiles, side: side, sideRegion: sideID, mainRegions: mainIDs)
        let resources = try mergeRows(SideLoadTable.resources, side: side, sideRegion: sideID, mainRegions: mainIDs)
        return SideLoadedRegion(sideRowID: sideID, rowID: mainIDs[0], isNew: isNew, description: description,
                                tiles: tiles, resources: resources)
    }

    /// Replaces, inserts and links the rows of one table a side region links to; counts them.
    private func mergeRows(_ table: SideLoadTable, side: String, sideRegion: Int64, mainRegions: [Int64]) throws
        -> SideLoadCounts {
        let linked = "\(side).\(table.links) l JOIN \(side).\(table.name) s ON s.id = l.\(table.linkColumn)"
        let sameKey = table.key.map { "m.\($0) = s.\($0)" }.joined(separator: " AND ")
        let total = try db.queryFirst("SELECT count(*) FROM \(linked) WHERE l.region_id = ?1", [.int(sideRegion)]) {
            Int($0.int64(0))
        } ?? 0
        let valid = "s.id NOT IN (SELECT id FROM temp.\(table.skipTable(side)))"
        let skipped = try db.queryFirst("SELECT count(*) FROM \(linked) WHERE l.region_id = ?1 AND NOT (\(valid))",
                                        [.int(sideRegion)]) { Int($0.int64(0)) } ?? 0
        let assignments = table.replaced.map { "\($0) = s.\($0)" }.joined(separator: ", ")
        let replaced = try db.run("""
            UPDATE main.\(table.name) AS m SET \(assignments)
            FROM \(linked)
            WHERE l.region_id = ?1 AND \(sameKey) AND s.modified > m.modified AND \(valid)
            """, [.int(sideRegion)])
        let columns = (table.key + table.replaced.filter { !table.key.contains($0) })
        let added = try db.run("""
            INSERT INTO main.\(table.name) (\(columns.joined(separator: ", ")))
            SELECT \(columns.map { "s." + $0 }.joined(separator: ", ")) FROM \(linked)
            WHERE l.region_id = ?1 AND NOT EXISTS (SELECT 1 FROM main.\(table.name) m WHERE \(sameKey)) AND \(valid)
            ORDER BY s.id
            """, [.int(sideRegion)])
        for mainRegion in mainRegions {
            try db.run("""
                INSERT OR IGNORE INTO main.\(table.links) (region_id, \(table.linkColumn))
                SELECT ?2, m.id FROM \(linked) JOIN main.\(table.name) m ON \(sameKey)
                WHERE l.region_id = ?1
                """, [.int(sideRegion), .int(mainRegion)])
        }
        return SideLoadCounts(added: added, replaced: replaced, kept: total - added - replaced - skipped, skipped: skipped)
    }
}

/// The columns side-loading reads and writes of a table.
private struct SideLoadTable {
    var name: String
    var links: String
    var linkColumn: String
    /// The row's key (its UNIQUE constraint).
    var key: [String]
    /// The columns a newer incoming row replaces (MapLibre replaces the whole row but its id).
    var replaced: [String]

    /// The temporary table of the ids of `side`'s rows of this table that the merge skips.
    func skipTable(_ side: String) -> String { "skip_\(side)_\(name)" }

    static let content = ["expires", "modified", "etag", "data", "compressed", "accessed", "must_revalidate"]
    static let tiles = SideLoadTable(name: "tiles", links: "region_tiles", linkColumn: "tile_id",
                                     key: ["url_template", "pixel_ratio", "z", "x", "y"], replaced: content)
    static let resources = SideLoadTable(name: "resources", links: "region_resources", linkColumn: "resource_id",
                                         key: ["url"], replaced: ["kind"] + content)
}
