import TileMath

/// The key of a stored row, in the order the content digest reads rows: resources by URL, then
/// tiles by template, pixel ratio, zoom, x and y (SQLite's binary order for the text).
public enum ChunkKey: Hashable, Sendable, Comparable {
    case resource(url: String)
    case tile(TileKey)

    /// The section a chunk never leaves: all resources, or one template, ratio and zoom.
    public var section: String {
        switch self {
        case .resource: return "R"
        case .tile(let key): return "T \(key.urlTemplate) \(key.pixelRatio) \(key.tile.z)"
        }
    }

    public static func < (a: ChunkKey, b: ChunkKey) -> Bool {
        switch (a, b) {
        case (.resource, .tile): return true
        case (.tile, .resource): return false
        case (.resource(let x), .resource(let y)): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
        case (.tile(let x), .tile(let y)):
            if x.urlTemplate != y.urlTemplate {
                return Array(x.urlTemplate.utf8).lexicographicallyPrecedes(Array(y.urlTemplate.utf8))
            }
            return (x.pixelRatio, x.tile.z, x.tile.x, x.tile.y) < (y.pixelRatio, y.tile.z, y.tile.x, y.tile.y)
        }
    }
}

/// The digest of one chunk of stored rows (see the lock's `store.chunks`).
public struct ChunkDigest: Equatable, Sendable {
    /// The key of the chunk's first row.
    public var start: ChunkKey
    /// How many rows it held.
    public var rows: Int
    /// The first 16 hex digits of the SHA-256 of its rows as the content digest reads them.
    public var digest: String

    public init(start: ChunkKey, rows: Int, digest: String) {
        self.start = start
        self.rows = rows
        self.digest = digest
    }
}
