import Foundation
import ProvisionFoundation
import ProvisionModel

/// Writes a store's next file (`offline.db.canonical` beside the store) through the calls
/// of `NextStoreBuilder`, hashing the content as it goes, and leaves it ready to be renamed
/// over the store.
///
/// Why a builder and not a copy of the finished staging file: an apply hands it each tile once,
/// in key order, while the downloads run (most straight from memory), so the store is written
/// once and no second pass over it is needed, neither to copy nor to hash.
///
/// Why the bytes do not depend on when `commit()` is called: every row goes in by appending in
/// id order, so SQLite allocates the same pages in the same order whatever the transaction
/// boundaries; the two header fields that count transactions (the change counter and the
/// version-valid-for number) are set to 1 when the file is finished.
public final class NextStoreWriter: NextStoreBuilder {
    /// The page size of the files this writes, fixed so that no SQLite build's default changes
    /// the bytes. Why 4 KiB, SQLite's and MapLibre's usual size: tiles are 2–60 KB blobs, and
    /// larger pages leave more of each page empty. Measured on the 20,460-tile benchmark
    /// (372 MB of tiles): 392 MB with 4 KiB pages, 407 MB with 8 KiB, 479 MB with 32 KiB, for
    /// an apply within 5% of the same speed.
    public static let pageSize = 4_096

    /// Where the file is written.
    public let url: URL
    let database: OfflineDatabase
    /// Hashes the rows added, beside this thread.
    var hashing: HashingStage
    var content = ContentDigest(tileCount: 0, resourceCount: 0, byteCount: 0, digest: "")
    private var nextRegion: Int64 = 1
    private var nextResource: Int64 = 1
    var nextTile: Int64 = 1
    private var finished = false
    let writeback: BackgroundWriteback
    /// The statements run once per tile or link, prepared once.
    private let tileInsert: SQLiteStatement
    private let tileLink: SQLiteStatement

    /// Creates the file at `url` (replacing any left there) with the offline schema.
    public init(url: URL, epoch: Int64) throws {
        self.url = url
        OfflineDatabase.removeFiles(at: url)
        do {
            database = try OfflineDatabase(url: url, epoch: epoch, options: .init(pageSize: NextStoreWriter.pageSize))
            hashing = HashingStage(hasher: try ContentHasher())
            tileInsert = try database.db.prepare(NextStoreWriter.insertTile)
            tileLink = try database.db.prepare(NextStoreWriter.linkTileRun)
            writeback = BackgroundWriteback(path: url.path)
            // Atomic if the process is killed (rollback journal); the file is fsynced once, when finished.
            try database.db.exec("PRAGMA synchronous = OFF")
            try database.db.exec("PRAGMA cache_size = -8192")
            // Links name the rows this writer has just added, so checking each against its table
            // only costs a look-up into `tiles` per link: at the end of a 1M-tile apply, seconds of
            // reading pages back. The setting belongs to the connection, not to the file.
            try database.db.exec("PRAGMA foreign_keys = OFF")
            try database.db.exec("BEGIN IMMEDIATE")
        } catch {
            OfflineDatabase.removeFiles(at: url)
            throw error
        }
    }

    deinit {
        hashing.cancel()  // a writer dropped without finish() or abandon() leaves no thread waiting
    }

    /// Links region ?1 to the tiles ?2 through ?3.
    private static let linkTileRun = """
        WITH RECURSIVE ids(id) AS (SELECT ?2 UNION ALL SELECT id + 1 FROM ids WHERE id < ?3)
        INSERT INTO region_tiles (region_id, tile_id) SELECT ?1, id FROM ids
        """
    private static let insertRegion = "INSERT INTO regions (id, definition, description) VALUES (?1, ?2, ?3)"
    private static let insertResource = """
        INSERT INTO resources (id, url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
        """
    private static let insertTile = """
        INSERT INTO tiles (id, url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed, accessed,
                           must_revalidate)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
        """

    public func addRegion(definition: Data, description: Data?) throws -> Int64 {
        let id = nextRegion
        try database.db.run(NextStoreWriter.insertRegion, [.int(id), .textBytes(definition), description.map { .blob($0) } ?? .null])
        nextRegion += 1
        return id
    }

    public func addResource(_ row: StoredResourceRow) throws -> Int64 {
        let id = nextResource
        try database.db.run(NextStoreWriter.insertResource,
                            [.int(id), .text(row.url), .int(row.kind)] + values(row.content))
        content.resourceCount += 1
        try hash(.resource(url: row.url), "R \(row.url) \(row.kind)", row.content)
        nextResource += 1
        return id
    }

    public func addTile(_ row: StoredTileRow) throws -> Int64 {
        let id = nextTile
        let key = row.key
        let stored = row.content.stamped(at: database.epoch)
        // Bound one by one, the body without a copy: this runs for every tile of an apply or merge.
        let insert = tileInsert
        insert.reset()
        try insert.bind(.int(id), at: 1)
        try insert.bind(.text(key.urlTemplate), at: 2)
        try insert.bind(.int(Int64(key.pixelRatio)), at: 3)
        try insert.bind(.int(Int64(key.tile.z)), at: 4)
        try insert.bind(.int(Int64(key.tile.x)), at: 5)
        try insert.bind(.int(Int64(key.tile.y)), at: 6)
        try insert.bind(stored.expires.map { .int($0) } ?? .null, at: 7)
        try insert.bind(stored.modified.map { .int($0) } ?? .null, at: 8)
        try insert.bind(stored.etag.map { .text($0) } ?? .null, at: 9)
        try insert.bind(.int(stored.compressed ? 1 : 0), at: 11)
        try insert.bind(.int(stored.accessed), at: 12)
        try insert.bind(.int(stored.mustRevalidate ? 1 : 0), at: 13)
        try insert.withBlob(stored.data, at: 10) {
            while try insert.step() {}
        }
        content.tileCount += 1
        let bytes = stored.data ?? Data()
        content.byteCount += Int64(bytes.count)
        lastTileBytes = Int64(bytes.count)
        var line: [UInt8] = []
        Self.tileKeyLine(key, compressed: stored.compressed, count: bytes.count, into: &line)
        hashing.add(.tile(key), line: line, bytes: bytes)
        nextTile += 1
        return id
    }

    public private(set) var lastTileBytes: Int64 = 0

    /// Makes `line` the key line the content digest reads for a tile row (see `contentDigest()`):
    /// `T template ratio z x y compressed length` and a newline.
    static func tileKeyLine(_ key: TileKey, compressed: Bool, count: Int, into line: inout [UInt8]) {
        line.removeAll(keepingCapacity: true)
        line.append(UInt8(ascii: "T"))
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: key.urlTemplate.utf8)
        appendField(key.pixelRatio, to: &line)
        appendField(key.tile.z, to: &line)
        appendField(key.tile.x, to: &line)
        appendField(key.tile.y, to: &line)
        appendField(compressed ? 1 : 0, to: &line)
        appendField(count, to: &line)
        line.append(UInt8(ascii: "\n"))
    }

    /// Appends a space and `number` in decimal as Swift's `description` writes it.
    static func appendField(_ number: Int, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: " "))
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { digits in
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
        }
    }

    /// The values of the content columns, in the order of the insert statements, with the
    /// row's times stamped for this build (`StoredContent.stamped(at:)`).
    private func values(_ content: StoredContent) -> [SQLiteValue] {
        let stored = content.stamped(at: database.epoch)
        return [stored.expires.map { .int($0) } ?? .null, stored.modified.map { .int($0) } ?? .null,
         stored.etag.map { .text($0) } ?? .null, stored.data.map { .blob($0) } ?? .null,
         .int(stored.compressed ? 1 : 0), .int(stored.accessed), .int(stored.mustRevalidate ? 1 : 0)]
    }

    /// Adds a row to the digest as `contentDigest()` reads it: the key line, the `compressed`
    /// flag and length, then the stored bytes.
    private func hash(_ key: ChunkKey, _ keyLine: String, _ stored: StoredContent) throws {
        let bytes = stored.data ?? Data()
        content.byteCount += Int64(bytes.count)
        hashing.add(key, line: Array("\(keyLine) \(stored.compressed ? 1 : 0) \(bytes.count)\n".utf8), bytes: bytes)
    }

    public func addTile(_ key: TileKey, body: FetchedBody) throws -> Int64 {
        try addTile(try database.tileRow(key, body: body))
    }

    public func linkResources(_ ids: [Int64], toRegion region: Int64) throws {
        for id in ids {
            try database.db.run("INSERT INTO region_resources (region_id, resource_id) VALUES (?1, ?2)", [.int(region), .int(id)])
        }
    }

    public func linkTiles(_ ids: IDRuns, toRegion region: Int64) throws {
        // A statement per run of consecutive ids, the ids counted inside SQLite: an apply links
        // every tile it writes, at its end (a one-region job's links are one run). The rows go
        // in in the same order as one by one, so the pages are the same.
        let link = tileLink
        try ids.forEachRun { first, last in
            link.reset()
            try link.bind(.int(region), at: 1)
            try link.bind(.int(first), at: 2)
            try link.bind(.int(last), at: 3)
            while try link.step() {}
        }
    }

    public func commit() throws {
        try database.db.exec("COMMIT")
        try database.db.exec("BEGIN IMMEDIATE")
        writeback.committed(upTo: content.byteCount)
    }

    /// Commits, closes the file in the form MapLibre opens (rollback journal, no `-journal`
    /// beside it), sets the transaction counters in its header to 1 and returns the digest of
    /// what was added. The caller flushes and renames the file.
    public func finish() throws -> ContentDigest {
        precondition(!finished, "finish() called twice")
        finished = true
        try database.db.exec("COMMIT")
        try database.finish()
        writeback.wait()
        try NextStoreWriter.resetTransactionCounters(path: url.path)
        var result = content
        var hasher = try hashing.finish()
        (result.digest, result.chunks) = try hasher.finish()
        return result
    }

    /// Stops writing (an apply that failed): rolls back what was not committed and closes the
    /// file, which keeps what was. The caller takes it into the store or deletes it.
    public func abandon() {
        finished = true
        hashing.cancel()
        writeback.wait()
        if database.db.isOpen {
            // Best effort: abandoning a write whose error the caller already has; nothing of it is kept.
            try? database.db.exec("ROLLBACK")
            try? database.close()
        }
    }

    /// Sets the file change counter (header offset 24) and the version-valid-for number (offset
    /// 92) to 1. SQLite increments both at every committed transaction, so they record how many
    /// there were; everything else in the file follows from its content. Equal values keep the
    /// in-header database size valid.
    static func resetTransactionCounters(path: String) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw StoreError(.io, "cannot open \(path): \(String(cString: strerror(errno)))", path: path) }
        defer { _ = Foundation.close(fd) }
        let one: [UInt8] = [0, 0, 0, 1]
        for offset in [24, 92] {
            let written = one.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4, off_t(offset)) }
            guard written == 4 else {
                throw StoreError(.io, "cannot write the header of \(path): \(String(cString: strerror(errno)))", path: path)
            }
        }
    }
}

/// Flushes the file being written in the background every `step` bytes of committed content.
///
/// Why: the finished file is flushed before it is renamed over the store; flushing it as it
/// grows, off the writer thread, while downloads keep the writer waiting anyway, leaves little
/// for that last flush, which every apply otherwise waits for at the end.
final class BackgroundWriteback: Sendable {
    private let path: String
    private let step: Int64
    private let queue = DispatchQueue(label: "provision.writeback")
    private let group = DispatchGroup()
    /// Whether a flush is running, and the content bytes committed when the last one started.
    private let state = Mutex((running: false, flushedAt: Int64(0)))

    init(path: String, step: Int64 = 32 << 20) {
        self.path = path
        self.step = step
    }

    /// Called after each commit with the content bytes committed so far.
    func committed(upTo bytes: Int64) {
        let step = self.step
        let starts = state.withLock { state in
            guard !state.running, bytes - state.flushedAt >= step else { return false }
            state = (true, bytes)
            return true
        }
        guard starts else { return }
        group.enter()
        queue.async { [self] in
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                _ = fsync(fd)
                _ = close(fd)
            }
            state.withLock { $0.running = false }
            group.leave()
        }
    }

    /// Waits for a flush in progress.
    func wait() {
        group.wait()
    }
}
