import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// A read-only MBTiles 1.3 archive used as a tile origin.
///
/// Opened read-only and immutable (no locks, no journal), so a shared archive is never
/// modified. MBTiles numbers rows from the south (TMS); `tileData` takes geographic XYZ tiles
/// and flips y. Safe to call from several threads: the connection is reached only through its
/// lock (`Locked`), so calls are serialised and the compiler checks it.
public final class MBTilesArchive: TileArchive, Sendable {
    /// The archive path.
    public let path: String
    /// The open database and the look-up of one tile, prepared when the archive is opened.
    private struct Connection {
        let db: SQLiteDatabase
        let tileStatement: SQLiteStatement
    }
    private let connection: Locked<Connection>

    /// Opens the archive; throws when the file is missing, not SQLite, or has no `tiles` table or view.
    public init(url: URL) throws {
        path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.cannotOpen, "MBTiles archive does not exist", path: path)
        }
        let db = try SQLiteDatabase(path: path, options: .init(readOnly: true, create: false, immutable: true))
        guard try MBTilesArchive.hasRelation("tiles", in: db) else {
            throw StoreError(.schemaMismatch, "not an MBTiles archive: no tiles table", path: path)
        }
        let columns = Set(try db.query("SELECT name FROM pragma_table_info('tiles')") { $0.text(0) })
        let required: Set = ["zoom_level", "tile_column", "tile_row", "tile_data"]
        guard required.isSubset(of: columns) else {
            throw StoreError(.schemaMismatch, "not an MBTiles archive: tiles lacks "
                                + required.subtracting(columns).sorted().joined(separator: ", "), path: path)
        }
        let tileStatement = try db.prepare(MBTilesArchive.tileSQL)
        connection = Locked(Connection(db: db, tileStatement: tileStatement))
    }

    deinit {
        // Best effort: the archive is read-only and immutable, so a close that fails loses nothing.
        connection.withLock { _ = try? $0.db.close() }
    }

    /// Rows read per zoom to measure the mean tile size: enough for a stable mean, few enough
    /// that a planet archive answers in milliseconds (the zoom's first rows in index order).
    static let sizeSampleRows = 10_000

    /// The mean `tile_data` length per zoom among `zooms`, over the first `sizeSampleRows` rows
    /// of each (SQLite reads a blob's length from its record header, not its bytes).
    public func meanTileSizes(zooms: ClosedRange<Int>) throws -> [Int: Double] {
        try connection.withLock { try Self.meanTileSizes(zooms: zooms, in: $0.db) }
    }

    private static func meanTileSizes(zooms: ClosedRange<Int>, in db: SQLiteDatabase) throws -> [Int: Double] {
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
        return try connection.withLock { connection in
            // Bound directly on the statement prepared once: this runs for every tile of an apply.
            let statement = connection.tileStatement
            defer { statement.reset() }
            try statement.bind(.int(Int64(tile.z)), at: 1)
            try statement.bind(.int(Int64(tile.x)), at: 2)
            try statement.bind(.int(Int64(tile.tmsY)), at: 3)
            return try statement.step() ? statement.data(0) : nil
        }
    }

    private static let tileSQL = "SELECT tile_data FROM tiles WHERE zoom_level = ?1 AND tile_column = ?2 AND tile_row = ?3"

    /// The `metadata` table as name → value; throws when the table is missing.
    public func metadata() throws -> [String: String] {
        let path = path
        return try connection.withLock { connection in
            guard try MBTilesArchive.hasRelation("metadata", in: connection.db) else {
                throw StoreError(.schemaMismatch, "not an MBTiles archive: no metadata table", path: path)
            }
            var result: [String: String] = [:]
            for (name, value) in try connection.db.query("SELECT name, value FROM metadata", [], { ($0.text(0), $0.text(1)) }) {
                result[name] = value
            }
            return result
        }
    }

    /// Closes the archive; later calls fail.
    public func close() throws {
        try connection.withLock { try $0.db.close() }
    }
}
