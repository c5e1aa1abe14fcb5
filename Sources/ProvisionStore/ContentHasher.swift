import Foundation
import ProvisionCodecs
import ProvisionModel

/// Hashes a store's rows in key order into its content digest and one digest per chunk of rows,
/// so that a damaged row is found without a digest per row.
///
/// Why chunks, and why keyed: the lock must let `audit --verify` and `apply --repair` find a row
/// whose bytes are valid for their kind but not the ones the build wrote (another tile's MVT),
/// without growing with every tile. A chunk is at most 1,024 rows of one section (resources, or
/// one tile template, ratio and zoom), named by its first row's key; a reader assigns each row to
/// the chunk whose first key is the greatest not above its own, so a missing or extra row changes
/// only its own chunk. A 1M-tile lock holds about 1,000 chunks (some 40 kB); a repair re-fetches at
/// most one chunk's rows for a damaged row it cannot tell apart by its kind.
struct ContentHasher {
    /// Rows per chunk.
    static let chunkSize = 1_024
    /// Hex digits kept of each chunk's SHA-256 (64 bits: enough to tell damage, not a signature).
    static let chunkDigitCount = 16

    private var whole = SHA256()
    private var chunk = SHA256()
    private var rowsInChunk = 0
    private var chunkStart: ChunkKey?
    /// The chunks finished so far.
    private(set) var chunks: [ChunkDigest] = []

    /// A hasher with no rows. (It throws nothing now that SHA-256 cannot fail to start; the
    /// signature stays so its callers need not change.)
    init() throws {}

    /// Adds one row: its key (which names its section), its key line (with `compressed` flag and
    /// length) and its stored bytes.
    mutating func add(_ key: ChunkKey, _ line: String, _ bytes: Data) throws {
        var line = line
        try line.withUTF8 { line in try bytes.withUnsafeBytes { try add(key, UnsafeRawBufferPointer(line), $0) } }
    }

    /// `add(_:_:_:)` with the key line and the stored bytes as raw bytes.
    mutating func add(_ key: ChunkKey, _ line: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) throws {
        if let start = chunkStart, rowsInChunk == Self.chunkSize || !Self.sameSection(start, key) { try closeChunk() }
        if rowsInChunk == 0 { chunkStart = key }
        whole.update(line)
        whole.update(bytes)
        chunk.update(line)
        chunk.update(bytes)
        rowsInChunk += 1
    }

    /// Whether two keys are in the same section (`ChunkKey.section`), compared by their parts
    /// rather than by building the section's text for every row.
    static func sameSection(_ a: ChunkKey, _ b: ChunkKey) -> Bool {
        switch (a, b) {
        case (.resource, .resource): return true
        case (.tile(let x), .tile(let y)):
            return x.tile.z == y.tile.z && x.pixelRatio == y.pixelRatio && x.urlTemplate == y.urlTemplate
        default: return false
        }
    }

    private mutating func closeChunk() throws {
        if let start = chunkStart {
            chunks.append(ChunkDigest(start: start, rows: rowsInChunk, digest: String(chunk.finalizeHex().prefix(Self.chunkDigitCount))))
        }
        chunk = SHA256()
        rowsInChunk = 0
        chunkStart = nil
    }

    /// Finishes: the content digest, and the chunk digests.
    mutating func finish() throws -> (digest: String, chunks: [ChunkDigest]) {
        if rowsInChunk > 0 { try closeChunk() }
        let digest = whole.finalizeHex()
        _ = chunk.finalizeHex()
        return (digest, chunks)
    }
}
