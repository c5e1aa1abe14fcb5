import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Copying the tile rows and tile links of another canonical file (a shard's) in SQL.
///
/// Why: a merge writes every tile of the job once more; handed over one at a time from Swift,
/// each row was read into memory, bound and copied by SQLite again, and the merge took longer
/// than the slowest shard. `INSERT … SELECT` from the attached shard copies rows inside SQLite,
/// while a second thread hashes them for the digest from a connection of its own.
///
/// Why the file is still byte for byte the one `addTile` writes row by row: the rows go in with
/// the same values (stamped for this build as `StoredContent.stamped(at:)` does, the columns
/// coerced as the Swift readers coerce them), in id order, through the same insert code in
/// SQLite, so the table and index pages are the same. The one record that depends on how many
/// statements wrote the rows is the `tiles` row of `sqlite_sequence`, rewritten with the largest
/// id at the end of every statement; it was added after the `regions` and `resources` rows, so it
/// lies at the start of its page's cells, and it only grows: each larger record takes the place
/// of the last and the bytes before it, so its page ends up the same after one statement as after
/// a million (`ShardReplayTests` crosses the ids where it grows, 127 and 32,767).
extension CanonicalStoreWriter {
    private static let copyTiles = """
        INSERT INTO main.tiles (id, url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed,
                                accessed, must_revalidate)
        SELECT id + ?1, CAST(url_template AS TEXT), CAST(pixel_ratio AS INTEGER), CAST(z AS INTEGER),
               CAST(x AS INTEGER), CAST(y AS INTEGER), CAST(expires AS INTEGER),
               CASE WHEN modified IS NULL OR CAST(modified AS INTEGER) = CAST(accessed AS INTEGER) THEN ?2
                    ELSE CAST(modified AS INTEGER) END,
               CAST(etag AS TEXT), CAST(data AS BLOB), coalesce(compressed, 0) != 0, ?2,
               coalesce(must_revalidate, 0) != 0
        FROM shard.tiles WHERE id BETWEEN 1 AND ?3 ORDER BY id
        """

    private static let copyLinks = """
        INSERT INTO main.region_tiles (region_id, tile_id)
        SELECT ?1, tile_id + ?2 FROM shard.region_tiles WHERE region_id = ?3 ORDER BY tile_id
        """

    /// Appends the `count` tile rows of the canonical file at `source` (ids 1…`count`, which the
    /// caller checked) with the next ids, as `addTile` would add them one by one, and adds them
    /// to the digest. Returns the id of the first (the next id when `count` is 0).
    @discardableResult
    func appendTiles(of source: URL, count: Int) throws -> Int64 {
        let first = nextTile
        guard count > 0 else { return first }
        let last = first + Int64(count) - 1
        // The rows added so far are hashed first; the copied ones follow on a thread of their own.
        let hashing = TileHashing(source: source, hasher: try self.hashing.finish())
        do {
            try withAttached(source) {
                try database.db.run(Self.copyTiles, [.int(first - 1), .int(database.epoch), .int(Int64(count))])
            }
        } catch {
            hashing.cancel()
            if case .success(let hashed) = hashing.result() { self.hashing = HashingStage(hasher: hashed.hasher) }
            throw error
        }
        let hashed = try hashing.result().get()
        self.hashing = HashingStage(hasher: hashed.hasher)
        guard hashed.rows == count else {
            throw StoreError(.invalidInput, "read \(grouped(hashed.rows)) tile rows to hash where \(grouped(count)) were copied", path: source.path)
        }
        content.tileCount += count
        content.byteCount += hashed.bytes
        nextTile = last + 1
        writeback.committed(upTo: content.byteCount)
        return first
    }

    /// Links to region `region` every tile the canonical file at `source` links to its region
    /// `sourceRegion`, by tile id ascending, the ids moved on by `offset`; returns a linked id
    /// outside 1…`tileCount` instead, linking nothing, when there is one.
    func appendTileLinks(of source: URL, region sourceRegion: Int64, toRegion region: Int64, offset: Int64,
                         tileCount: Int) throws -> Int64? {
        try withAttached(source) {
            let outside = try database.db.queryFirst(
                "SELECT tile_id FROM shard.region_tiles WHERE region_id = ?1 AND (tile_id < 1 OR tile_id > ?2) LIMIT 1",
                [.int(sourceRegion), .int(Int64(tileCount))]) { $0.int64(0) }
            if outside != nil { return outside }
            try database.db.run(Self.copyLinks, [.int(region), .int(offset), .int(sourceRegion)])
            return nil
        }
    }

    /// Runs `body` in a transaction of its own with `source` attached (read-only) as `shard`.
    /// ATTACH and DETACH cannot run inside a transaction, so the open one is committed first and
    /// a new one is begun afterwards, also when `body` throws (then what it wrote is rolled back).
    @discardableResult
    private func withAttached<T>(_ source: URL, _ body: () throws -> T) throws -> T {
        let db = database.db
        try db.exec("COMMIT")
        writeback.committed(upTo: content.byteCount)
        try db.run("ATTACH DATABASE ?1 AS shard", [.text(URL(fileURLWithPath: source.path).absoluteString + "?mode=ro")])
        let result: T
        do {
            try db.exec("BEGIN IMMEDIATE")
            result = try body()
            try db.exec("COMMIT")
        } catch {
            // Best effort: the error below is what the caller hears; the state is reset as far as it can be.
            if db.isInTransaction { try? db.exec("ROLLBACK") }
            try? db.exec("DETACH DATABASE shard")
            try? db.exec("BEGIN IMMEDIATE")
            throw error
        }
        try db.exec("DETACH DATABASE shard")
        try db.exec("BEGIN IMMEDIATE")
        return result
    }
}

/// Hashes the tile rows of a canonical file, by id, into a `ContentHasher` on a thread of its own.
private final class TileHashing: Sendable {
    struct Hashed: Sendable {
        var hasher: ContentHasher
        var rows: Int
        var bytes: Int64
    }

    private let outcome = Locked<Result<Hashed, any Error>?>(nil)
    private let cancelled = Locked(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts hashing the rows of `source` after those `hasher` holds.
    init(source: URL, hasher: ContentHasher) {
        let outcome = self.outcome, cancelled = self.cancelled, done = self.done
        let thread = Thread {
            defer { done.signal() }
            let result = Result { () throws -> Hashed in
                var hashed = Hashed(hasher: hasher, rows: 0, bytes: 0)
                let db = try SQLiteDatabase(path: source.path, options: .init(readOnly: true, create: false))
                // Best effort: closing a shard opened read-only.
                defer { try? db.close() }
                let rows = try db.prepare("SELECT url_template, pixel_ratio, z, x, y, data, compressed FROM tiles ORDER BY id")
                defer { rows.reset() }
                var line: [UInt8] = []
                var template = ""
                while try rows.step() {
                    if hashed.rows % 1_024 == 0, cancelled.read({ $0 }) { throw CancellationError() }
                    let key = TileKey(urlTemplate: rows.text(0, reusing: &template), pixelRatio: Int(rows.int64(1)),
                                      tile: TileID(z: Int(rows.int64(2)), x: Int(rows.int64(3)), y: Int(rows.int64(4))))
                    let compressed = rows.int64(6) != 0
                    try rows.withBytes(5) { bytes in
                        CanonicalStoreWriter.tileKeyLine(key, compressed: compressed, count: bytes.count, into: &line)
                        try line.withUnsafeBytes { try hashed.hasher.add(.tile(key), $0, bytes) }
                        hashed.bytes += Int64(bytes.count)
                    }
                    hashed.rows += 1
                }
                return hashed
            }
            outcome.withLock { $0 = result }
        }
        thread.name = "provision.hash"
        thread.start()
    }

    /// Asks the thread to stop early (its result is then an error).
    func cancel() {
        cancelled.withLock { $0 = true }
    }

    /// Waits for the thread and returns what it hashed.
    func result() -> Result<Hashed, any Error> {
        done.wait()
        done.signal()
        return outcome.read { $0 } ?? .failure(CancellationError())
    }
}
