import Foundation
import TileMath

/// Writes an MBTiles 1.3 archive: `metadata`, and `tiles` as a view over deduplicated `map`
/// (one row a tile, TMS rows) and `images` (one row a distinct content) tables.
///
/// The file is built under a temporary name beside the destination (no journal: a failed
/// build is thrown away whole) and renamed into place by `finish`. Tiles should come in key
/// order; the same tiles in the same order and the same metadata give the same bytes (SQLite
/// writes no time or random value into a file). Memory holds one 128-bit key and a row id per
/// distinct content.
public final class MBTilesArchiveWriter {
    /// What the archive holds, for the report.
    public struct Summary: Equatable, Sendable {
        /// Tiles (`map` rows).
        public var tileCount: Int
        /// Distinct contents (`images` rows).
        public var contentCount: Int
        /// The file's size in bytes.
        public var byteCount: UInt64
    }

    /// `PRAGMA application_id` MBTiles 1.3 suggests: "MPBX".
    public static let applicationID: Int32 = 0x4D50_4258

    private let destination: URL
    private let temporary: URL
    private let db: SQLiteDatabase
    private var contents: [ArchiveTile.ContentKey: Int64] = [:]
    private var tileCount = 0
    private var finished = false

    /// Starts an archive that `finish` moves to `destination`.
    public init(destination: URL) throws {
        self.destination = destination
        temporary = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).tmp-\(getpid())")
        unlink(temporary.path)
        db = try SQLiteDatabase(path: temporary.path)
        do {
            try db.exec("""
                PRAGMA page_size = 4096;
                PRAGMA journal_mode = OFF;
                PRAGMA synchronous = OFF;
                PRAGMA locking_mode = EXCLUSIVE;
                PRAGMA application_id = \(Self.applicationID);
                CREATE TABLE metadata (name TEXT NOT NULL, value TEXT);
                CREATE TABLE map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                                  tile_id INTEGER NOT NULL);
                CREATE TABLE images (tile_id INTEGER PRIMARY KEY, tile_data BLOB NOT NULL);
                CREATE VIEW tiles AS
                    SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row,
                           images.tile_data AS tile_data
                    FROM map JOIN images ON images.tile_id = map.tile_id;
                BEGIN;
                """)
        } catch {
            abandon()
            throw error
        }
    }

    deinit {
        abandon()
    }

    /// Adds `tile` (geographic XYZ; its row is flipped to TMS here).
    public func add(_ id: TileID, tile: ArchiveTile) throws {
        var image = contents[tile.key]
        if image == nil {
            try db.run("INSERT INTO images (tile_data) VALUES (?1)", [.blob(tile.bytes)])
            image = db.lastInsertRowID
            contents[tile.key] = image
        }
        try db.run("INSERT INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?1, ?2, ?3, ?4)",
                   [.int(Int64(id.z)), .int(Int64(id.x)), .int(Int64(id.tmsY)), .int(image ?? 0)])
        tileCount += 1
    }

    /// Writes `metadata` (name, value pairs, in the order given), indexes the tables, and renames
    /// the archive over the destination; throws when two tiles had the same address.
    public func finish(metadata: [(name: String, value: String)]) throws -> Summary {
        guard !finished else { throw StoreError(.invalidInput, "the archive is already finished", path: destination.path) }
        finished = true
        do {
            for (name, value) in metadata {
                try db.run("INSERT INTO metadata (name, value) VALUES (?1, ?2)", [.text(name), .text(value)])
            }
            try db.exec("""
                CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row);
                CREATE UNIQUE INDEX name ON metadata (name);
                COMMIT;
                PRAGMA journal_mode = DELETE;
                """)
            try db.close()
            try AtomicFile.replace(destination, with: temporary)
        } catch {
            abandon()
            throw (error as? StoreError).map { StoreError($0.code, $0.message, path: destination.path,
                                                           underlyingCode: $0.underlyingCode,
                                                           underlyingIsErrno: $0.underlyingIsErrno) } ?? error
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        } catch {
            throw StoreError(.io, "the archive was written but its size cannot be read: \(error.localizedDescription)",
                             path: destination.path)
        }
        let size = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        return Summary(tileCount: tileCount, contentCount: contents.count, byteCount: size)
    }

    /// Gives up: closes and removes the temporary file (idempotent).
    public func abandon() {
        // Best effort: giving up; the temporary file is removed just below.
        try? db.close()
        unlink(temporary.path)
        unlink(temporary.path + "-journal")
    }
}
