import Foundation

// The values a store describes itself with: written by ProvisionStore, read by the planner's
// callers and rendered by ProvisionReports, so they live in the model.

/// What an offline database holds, for `provision audit`.
public struct StoreSummary: Equatable, Sendable {
    /// One region row with what it links to.
    public struct Region: Equatable, Sendable {
        /// The region row id.
        public var rowID: Int64
        /// MapLibre's definition JSON bytes.
        public var definition: Data
        /// The description bytes, nil when NULL.
        public var description: Data?
        /// Linked tiles per template and zoom, sorted by template then zoom.
        public var tileCounts: [TileCount]
        /// Linked resources.
        public var resourceCount: Int
        /// Stored (possibly compressed) bytes of the linked tiles.
        public var tileBytes: Int64
        /// Stored bytes of the linked resources.
        public var resourceBytes: Int64
        /// Linked tiles whose data is NULL ("no content", e.g. a skipped 404).
        public var emptyTileCount: Int

        public init(rowID: Int64, definition: Data, description: Data?, tileCounts: [TileCount], resourceCount: Int,
                    tileBytes: Int64, resourceBytes: Int64, emptyTileCount: Int) {
            self.rowID = rowID
            self.definition = definition
            self.description = description
            self.tileCounts = tileCounts
            self.resourceCount = resourceCount
            self.tileBytes = tileBytes
            self.resourceBytes = resourceBytes
            self.emptyTileCount = emptyTileCount
        }

        /// Linked tiles over all templates and zooms.
        public var tileCount: Int { tileCounts.reduce(0) { $0 + $1.count } }
    }

    /// Every region, by row id.
    public var regions: [Region]
    /// Tile rows in the file.
    public var tileCount: Int
    /// Resource rows in the file.
    public var resourceCount: Int
    /// Stored bytes of all tile rows.
    public var tileBytes: Int64
    /// Stored bytes of all resource rows.
    public var resourceBytes: Int64
    /// Tile rows no region links to (ambient cache).
    public var orphanTileCount: Int
    /// Resource rows no region links to.
    public var orphanResourceCount: Int
    /// Tile rows whose data is NULL ("no content", e.g. a skipped 404).
    public var emptyTileCount: Int
    /// Resource rows per kind (MapLibre numbering), sorted by kind.
    public var resourceCountsByKind: [(kind: Int, count: Int)]

    public init(regions: [Region], tileCount: Int, resourceCount: Int, tileBytes: Int64, resourceBytes: Int64,
                orphanTileCount: Int, orphanResourceCount: Int, emptyTileCount: Int, resourceCountsByKind: [(kind: Int, count: Int)]) {
        self.regions = regions
        self.tileCount = tileCount
        self.resourceCount = resourceCount
        self.tileBytes = tileBytes
        self.resourceBytes = resourceBytes
        self.orphanTileCount = orphanTileCount
        self.orphanResourceCount = orphanResourceCount
        self.emptyTileCount = emptyTileCount
        self.resourceCountsByKind = resourceCountsByKind
    }

    /// Compares every field (the tuple array compared element by element).
    public static func == (a: StoreSummary, b: StoreSummary) -> Bool {
        a.regions == b.regions && a.tileCount == b.tileCount && a.resourceCount == b.resourceCount
            && a.tileBytes == b.tileBytes && a.resourceBytes == b.resourceBytes
            && a.orphanTileCount == b.orphanTileCount && a.orphanResourceCount == b.orphanResourceCount
            && a.emptyTileCount == b.emptyTileCount
            && a.resourceCountsByKind.elementsEqual(b.resourceCountsByKind) { $0 == $1 }
    }
}

/// What `findDamage` found: the rows that must be fetched again.
public struct StoreDamage: Equatable, Sendable {
    /// One damaged row and why.
    public struct Row: Equatable, Sendable {
        public var key: ChunkKey
        public var reason: String
        /// Whether the row itself is unusable (does not inflate or is not its kind); false for a
        /// row only suspected because its chunk differs from the lock.
        public var isUnusable: Bool

        public init(key: ChunkKey, reason: String, isUnusable: Bool) {
            self.key = key
            self.reason = reason
            self.isUnusable = isUnusable
        }
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

/// What a store holds, summed and hashed.
public struct ContentDigest: Equatable, Sendable {
    /// Tile rows.
    public var tileCount: Int
    /// Resource rows.
    public var resourceCount: Int
    /// Stored bytes of all rows (as written: compressed where the row is).
    public var byteCount: Int64
    /// sha256 over every row's key, `compressed` flag, length and stored bytes, in key order.
    public var digest: String
    /// The same bytes hashed per chunk of rows (`ContentHasher`).
    public var chunks: [ChunkDigest]

    public init(tileCount: Int, resourceCount: Int, byteCount: Int64, digest: String, chunks: [ChunkDigest] = []) {
        self.tileCount = tileCount
        self.resourceCount = resourceCount
        self.byteCount = byteCount
        self.digest = digest
        self.chunks = chunks
    }
}
