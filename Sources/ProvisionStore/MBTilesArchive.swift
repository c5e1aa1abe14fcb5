import Foundation
import ProvisionModel
import TileMath

/// A read-only MBTiles 1.3 archive used as a tile origin.
///
/// Opened read-only and immutable (no locks, no journal), so a shared archive is never
/// modified. MBTiles numbers rows from the south (TMS); `tileData` takes geographic XYZ tiles
/// and flips y. Safe to call from several threads (calls are serialised).
public final class MBTilesArchive: TileArchive {
    /// The archive path.
    public let path: String
    private let db: SQLiteDatabase
    private let lock = NSLock()
    /// The look-up of one tile, prepared when the archive is opened.
    private let tileStatement: SQLiteStatement

    /// Opens the archive; throws when the file is missing, not SQLite, or has no `tiles` table or view.
    public init(url: URL) throws {
        path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.cannotOpen, "MBTiles archive does not exist", path: path)
        }
        db = try SQLiteDatabase(path: path, options: .init(readOnly: true, create: false, immutable: true))
        guard try MBTilesArchive.hasRelation("tiles", in: db) else {
            throw StoreError(.schemaMismatch, "not an MBTiles archive: no tiles table", path: path)
        }
        let columns = Set(try db.query("SELECT name FROM pragma_table_info('tiles')") { $0.text(0) })
        let required: Set = ["zoom_level", "tile_column", "tile_row", "tile_data"]
        guard required.isSubset(of: columns) else {
            throw StoreError(.schemaMismatch, "not an MBTiles archive: tiles lacks "
                                + required.subtracting(columns).sorted().joined(separator: ", "), path: path)
        }
        tileStatement = try db.prepare(MBTilesArchive.tileSQL)
    }

    deinit {
        try? db.close()
    }

    /// Rows read per zoom to measure the mean tile size: enough for a stable mean, few enough
    /// that a planet archive answers in milliseconds (the zoom's first rows in index order).
    static let sizeSampleRows = 10_000

    /// The mean `tile_data` length per zoom among `zooms`, over the first `sizeSampleRows` rows
    /// of each (SQLite reads a blob's length from its record header, not its bytes).
    public func meanTileSizes(zooms: ClosedRange<Int>) throws -> [Int: Double] {
        lock.lock()
        defer { lock.unlock() }
        var sizes: [Int: Double] = [:]
        for z in zooms {
            let mean = try db.queryFirst("""
                SELECT count(*), avg(n) FROM (SELECT length(tile_data) AS n FROM tiles WHERE zoom_level = ?1 LIMIT ?2)
                """, [.int(Int64(z)), .int(Int64(Self.sizeSampleRows))]) { ($0.int64(0), $0.double(1)) }
            if let mean, mean.0 > 0 { sizes[z] = mean.1 }
        }
        return sizes
    }

    private static func hasRelation(_ name: String, in db: SQLiteDatabase) throws -> Bool {
        try db.queryFirst("SELECT 1 FROM sqlite_master WHERE name = ?1 AND type IN ('table', 'view')",
                          [.text(name)]) { _ in true } != nil
    }

    /// The stored bytes of a geographic XYZ tile (possibly gzip-wrapped), or nil when absent.
    public func tileData(_ tile: TileID) throws -> Data? {
        guard tile.z >= 0, tile.z <= 30, tile.x >= 0, tile.y >= 0, tile.x < 1 << tile.z, tile.y < 1 << tile.z else {
            return nil
        }
        lock.lock()
        defer { lock.unlock() }
        // Bound directly on the statement prepared once: this runs for every tile of an apply.
        let statement = tileStatement
        defer { statement.reset() }
        try statement.bind(.int(Int64(tile.z)), at: 1)
        try statement.bind(.int(Int64(tile.x)), at: 2)
        try statement.bind(.int(Int64(tile.tmsY)), at: 3)
        return try statement.step() ? statement.data(0) : nil
    }

    private static let tileSQL = "SELECT tile_data FROM tiles WHERE zoom_level = ?1 AND tile_column = ?2 AND tile_row = ?3"

    /// The `metadata` table as name → value; throws when the table is missing.
    public func metadata() throws -> [String: String] {
        lock.lock()
        defer { lock.unlock() }
        guard try MBTilesArchive.hasRelation("metadata", in: db) else {
            throw StoreError(.schemaMismatch, "not an MBTiles archive: no metadata table", path: path)
        }
        var result: [String: String] = [:]
        for (name, value) in try db.query("SELECT name, value FROM metadata", [], { ($0.text(0), $0.text(1)) }) {
            result[name] = value
        }
        return result
    }

    /// Closes the archive; later calls fail.
    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        try db.close()
    }
}
