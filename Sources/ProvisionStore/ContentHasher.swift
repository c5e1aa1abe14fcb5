import Foundation
import ProvisionCodecs
import ProvisionModel

/// Hashes a store's rows in key order into its content digest and one digest per chunk of rows,
/// so that a damaged row is found without a digest per row.
///
/// Why chunks, and why keyed: the lock must let `audit --verify` and `apply --repair` find a row
/// whose bytes are valid for their kind but not the ones the build wrote (another tile's MVT),
/// without growing with every tile. A chunk is at most 64 rows of one section (resources, or
/// one tile template, ratio and zoom), named by its first row's key; a reader assigns each row to
/// the chunk whose first key is the greatest not above its own, so a missing or extra row changes
/// only its own chunk. Each chunk records two weighted sums of its rows' hashes (`ChunkSums`), so
/// one row whose damage shows in itself is solved for and costs one download, and a damaged row
/// only the digest shows costs at most its chunk's 64. A 1M-tile lock holds about 15,600 chunks
/// (1,062,614 bytes for the benchmarks' 1,000,490-tile store: see the README's "Damage and repair").
struct ContentHasher {
    /// Rows per chunk.
    static let chunkSize = 64

    private var whole = SHA256()
    private var row = SHA256()
    private var chunk = ChunkSums()
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
        chunk.add(Self.rowValue(&row, line, bytes))
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

    /// A row's value in its chunk's sums: its key line and stored bytes hashed (with `hasher`, which
    /// is left fresh), as `ChunkSums.value(ofDigest:)`.
    static func rowValue(_ hasher: inout SHA256, _ line: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        hasher.update(line)
        hasher.update(bytes)
        return ChunkSums.value(ofDigest: hasher.finalize())
    }

    private mutating func closeChunk() throws {
        if let start = chunkStart {
            chunks.append(ChunkDigest(start: start, rows: rowsInChunk, digest: chunk.hex))
        }
        chunk = ChunkSums()
        rowsInChunk = 0
        chunkStart = nil
    }

    /// Finishes: the content digest, and the chunk digests.
    mutating func finish() throws -> (digest: String, chunks: [ChunkDigest]) {
        if rowsInChunk > 0 { try closeChunk() }
        let digest = whole.finalizeHex()
        return (digest, chunks)
    }
}
