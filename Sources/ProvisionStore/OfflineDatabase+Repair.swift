import Foundation
import ProvisionCodecs
import ProvisionModel

extension OfflineDatabase {
    /// Finds every row that must be fetched again: its bytes do not inflate, `check` refuses
    /// them for their kind (`check` returns why), or the chunk of the lock it belongs to
    /// (`lockChunks`, as `ContentHasher` made them) no longer sums to what the lock recorded, which
    /// is how a row valid for its kind but not the one the build wrote (another tile's bytes) is
    /// found. One unusable, missing or extra row in a chunk is solved for (`ChunkSums.explain`) and
    /// the chunk's other rows are then known intact; only a difference no single row explains
    /// makes every row of its chunk suspect. A chunk of a version 4 lock (16 hex digits of the
    /// SHA-256 of its rows, up to 1,024 of them) can only tell that something in it changed: every
    /// row of such a chunk that differs is suspect, as before.
    public func findDamage(lockChunks: [ChunkDigest], check: (ResourceKind, Data) -> String?) throws -> StoreDamage {
        var damage = StoreDamage()
        var chunks = LockChunkCheck(lockChunks: lockChunks)
        try forEachHashedRow { row in
            damage.checked += 1
            chunks.move(to: row.key, damage: &damage)
            let reason = Self.unusableReason(row, check: check)
            if let reason {
                damage.rows.append(StoreDamage.Row(key: row.key, reason: reason, isUnusable: true))
            }
            chunks.add(row, isUnusable: reason != nil)
        }
        chunks.close(into: &damage)
        damage.rows.sort { $0.key < $1.key }
        return damage
    }

    /// Why a row is unusable (its bytes do not inflate, or `check` refuses them for their kind),
    /// or nil. An empty tile is "no content", not damage.
    private static func unusableReason(_ row: HashedRow, check: (ResourceKind, Data) -> String?) -> String? {
        do {
            let payload = row.compressed ? try RowCompression.inflate(row.bytes) : row.bytes
            return row.isTile && payload.isEmpty ? nil : check(row.kind, payload)
        } catch {
            return "its bytes do not inflate"
        }
    }

    /// Deletes the rows `keys` names and their links, in one transaction, so the next
    /// plan sees them missing and the apply fetches them again.
    public func removeRows(_ keys: [ChunkKey]) throws {
        try db.exec("BEGIN IMMEDIATE")
        do {
            for key in keys {
                switch key {
                case .resource(let url):
                    try db.run("DELETE FROM region_resources WHERE resource_id IN (SELECT id FROM resources WHERE url = ?1)", [.text(url)])
                    try db.run("DELETE FROM resources WHERE url = ?1", [.text(url)])
                case .tile(let tile):
                    let match = "url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y = ?5"
                    let values: [SQLiteValue] = [.text(tile.urlTemplate), .int(Int64(tile.pixelRatio)), .int(Int64(tile.tile.z)),
                                                 .int(Int64(tile.tile.x)), .int(Int64(tile.tile.y))]
                    try db.run("DELETE FROM region_tiles WHERE tile_id IN (SELECT id FROM tiles WHERE \(match))", values)
                    try db.run("DELETE FROM tiles WHERE \(match)", values)
                }
            }
            try db.exec("COMMIT")
        } catch {
            // Best effort: the error below is what the caller hears; a failed rollback is undone when the connection closes.
            try? db.exec("ROLLBACK")
            throw error
        }
    }
}

extension OfflineDatabase {
    /// Rebuilds a database SQLite reports as corrupt: every region, resource and tile row that can
    /// still be read from `damaged` is copied, one row at a time, into a new database at `fresh`
    /// (links are not: the next apply writes them from the covers). Rows on damaged pages are
    /// skipped; the apply fetches them again.
    ///
    /// - Returns: the rows copied.
    public static func salvage(from damaged: URL, into fresh: URL, epoch: Int64) throws -> Int {
        removeFiles(at: fresh)
        let target = try OfflineDatabase(url: fresh, epoch: epoch)
        // Best effort: the rows were committed, or the error thrown is what the caller hears.
        defer { try? target.close() }
        // Salvage reads what it still can: a damaged file that does not even open gives no rows, and the repair downloads them.
        guard let source = try? SQLiteDatabase(path: damaged.path, options: .init(readOnly: true, create: false)) else { return 0 }
        var copied = 0
        let tables: [(name: String, columns: [String])] = [
            ("regions", ["id", "definition", "description"]),
            ("resources", ["id", "url", "kind", "expires", "modified", "etag", "data", "compressed", "accessed", "must_revalidate"]),
            ("tiles", ["id", "url_template", "pixel_ratio", "z", "x", "y", "expires", "modified", "etag", "data", "compressed",
                       "accessed", "must_revalidate"]),
        ]
        try target.db.exec("BEGIN")
        for table in tables {
            // Salvage skips what it cannot read (a table, a row, a row that does not insert): the repair downloads those again.
            let ids = (try? source.query("SELECT id FROM \(table.name)") { $0.int64(0) }) ?? []
            let select = "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) WHERE id = ?1"
            let placeholders = (1...table.columns.count).map { "?\($0)" }.joined(separator: ", ")
            let insert = "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(placeholders))"
            for id in ids {
                // A row that does not read or insert is left to the repair's download (see above).
                guard let values = try? source.queryFirst(select, [.int(id)], { row in
                    (0..<Int32(table.columns.count)).map { row.value($0) }
                }) else { continue }
                if (try? target.db.run(insert, values)) != nil { copied += 1 }
            }
        }
        try target.db.exec("COMMIT")
        // Best effort: closing the damaged file, only read.
        try? source.close()
        return copied
    }
}

/// The rows of the lock's chunk being read, kept to compare with what the lock recorded once the
/// chunk is read whole (`findDamage`).
private struct LockChunkCheck {
    let lockChunks: [ChunkDigest]
    private var index = -1
    private var rows: [(key: ChunkKey, value: UInt64, isUnusable: Bool)] = []
    private var rowHasher = SHA256()
    private var legacyHasher = SHA256()

    init(lockChunks: [ChunkDigest]) {
        self.lockChunks = lockChunks
    }

    /// Moves on to the chunk of the lock `key` belongs to (the last whose first key is not above
    /// it), closing the one before.
    mutating func move(to key: ChunkKey, damage: inout StoreDamage) {
        var next = index + 1
        while next < lockChunks.count, !(key < lockChunks[next].start) { next += 1 }
        if next - 1 != index {
            close(into: &damage)
            index = next - 1
        }
    }

    /// Adds a row to the chunk, when it is in one (of the section the chunk starts in).
    mutating func add(_ row: OfflineDatabase.HashedRow, isUnusable: Bool) {
        guard index >= 0, lockChunks[index].start.section == row.key.section else { return }
        let value = row.bytes.withUnsafeBytes { bytes in
            var line = row.line
            return line.withUTF8 { ContentHasher.rowValue(&rowHasher, UnsafeRawBufferPointer($0), bytes) }
        }
        rows.append((row.key, value, isUnusable))
        if lockChunks[index].digest.utf8.count == 16 {
            legacyHasher.update(row.line)
            legacyHasher.update(row.bytes)
        }
    }

    /// Compares the chunk with the lock and adds the rows a difference makes suspect to `damage`.
    mutating func close(into damage: inout StoreDamage) {
        defer { rows = [] }
        guard let explanation = explain() else { return }
        switch explanation {
        case .intact, .unusableRow, .missingRow:
            return
        case .extraRow(let e):
            damage.mismatchedChunks += 1
            if !rows[e].isUnusable {
                damage.rows.append(StoreDamage.Row(key: rows[e].key, reason: "the build did not write this row "
                                                   + "(its chunk's digest in the lock accounts for every other row)",
                                                   isUnusable: false))
            }
        case .unexplained:
            damage.mismatchedChunks += 1
            for row in rows where !row.isUnusable {
                damage.rows.append(StoreDamage.Row(key: row.key, reason: "its chunk differs from what the lock recorded",
                                                   isUnusable: false))
            }
        }
    }

    /// What the chunk's sums say about its rows; a version 4 chunk (16 hex digits) only whether
    /// it is intact. Nil before the first chunk, or for a digest of neither form.
    private mutating func explain() -> ChunkSums.Explanation? {
        guard index >= 0 else { return nil }
        let recorded = lockChunks[index]
        if let expected = ChunkSums(hex: recorded.digest, count: recorded.rows) {
            return expected.explain(rows.map { ($0.value, $0.isUnusable) })
        } else if recorded.digest.utf8.count == 16 {
            let digest = String(legacyHasher.finalizeHex().prefix(16))
            return digest == recorded.digest && rows.count == recorded.rows ? .intact : .unexplained
        }
        return nil
    }
}
