import Foundation
import ProvisionModel

/// What `findDamage` found: the rows that must be fetched again.
public struct StoreDamage: Equatable, Sendable {
    /// One damaged row and why.
    public struct Row: Equatable, Sendable {
        public var key: ChunkKey
        public var reason: String
        /// Whether the row itself is unusable (does not inflate or is not its kind); false for a
        /// row only suspected because its chunk differs from the lock.
        public var isUnusable: Bool
    }

    /// The damaged rows, in key order.
    public var rows: [Row] = []
    /// Rows read.
    public var checked = 0
    /// Chunks whose rows differ from what the lock recorded.
    public var mismatchedChunks = 0

    public init() {}

    /// Whether nothing is damaged.
    public var isEmpty: Bool { rows.isEmpty }
    /// The rows that are unusable in themselves.
    public var unusable: [Row] { rows.filter(\.isUnusable) }
}

extension OfflineDatabase {
    /// Finds every row that must be fetched again: its bytes do not inflate, `check` refuses
    /// them for their kind (`check` returns why), or the chunk of the lock it belongs to
    /// (`lockChunks`, as `ContentHasher` made them) hashes differently now, which is how a row
    /// valid for its kind but not the one the build wrote (another tile's bytes) is found. Every
    /// row of a mismatched chunk is counted damaged, since the lock cannot tell which one changed.
    public func findDamage(lockChunks: [ChunkDigest], check: (ResourceKind, Data) -> String?) throws -> StoreDamage {
        var damage = StoreDamage()
        var chunkIndex = -1
        var chunkRows: [ChunkKey] = []
        var chunkDamaged = Set<ChunkKey>()
        var chunkHasher = try StoreHasher()
        func closeChunk() throws {
            defer { chunkRows = []; chunkDamaged = [] }
            guard chunkIndex >= 0 else { return }
            let expected = lockChunks[chunkIndex]
            let digest = String(chunkHasher.finalizeHex().prefix(ContentHasher.chunkDigitCount))
            chunkHasher = try StoreHasher()
            guard digest != expected.digest || chunkRows.count != expected.rows else { return }
            damage.mismatchedChunks += 1
            for key in chunkRows where !chunkDamaged.contains(key) {
                damage.rows.append(StoreDamage.Row(key: key, reason: "its chunk differs from what the lock recorded",
                                                   isUnusable: false))
            }
        }
        try forEachHashedRow { row in
            damage.checked += 1
            // The chunk of the lock this row belongs to: the last whose first key is not above it.
            var next = chunkIndex + 1
            while next < lockChunks.count, !(row.key < lockChunks[next].start) { next += 1 }
            if next - 1 != chunkIndex {
                try closeChunk()
                chunkIndex = next - 1
            }
            let inChunk = chunkIndex >= 0 && lockChunks[chunkIndex].start.section == row.key.section
            if inChunk {
                chunkRows.append(row.key)
                chunkHasher.update(row.line)
                chunkHasher.update(row.bytes)
            }
            var reason: String?
            do {
                let payload = row.compressed ? try Compression.inflate(row.bytes) : row.bytes
                if !(row.isTile && payload.isEmpty) { reason = check(row.kind, payload) }
            } catch {
                reason = "its bytes do not inflate"
            }
            if let reason {
                damage.rows.append(StoreDamage.Row(key: row.key, reason: reason, isUnusable: true))
                if inChunk { chunkDamaged.insert(row.key) }
            }
        }
        try closeChunk()
        damage.rows.sort { $0.key < $1.key }
        return damage
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
            try? db.exec("ROLLBACK")
            throw error
        }
    }
}
