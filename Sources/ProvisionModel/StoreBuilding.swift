import Foundation
import TileMath

/// The cache fields and stored bytes of a tile or resource row, read back to be carried into a
/// new file unchanged.
public struct StoredContent: Sendable {
    public var expires: Int64?
    public var modified: Int64?
    public var etag: String?
    /// The stored bytes (zlib when `compressed`); nil for a "no content" tile.
    public var data: Data?
    public var compressed: Bool
    public var accessed: Int64
    public var mustRevalidate: Bool

    public init(expires: Int64?, modified: Int64?, etag: String?, data: Data?, compressed: Bool, accessed: Int64,
                mustRevalidate: Bool) {
        self.expires = expires
        self.modified = modified
        self.etag = etag
        self.data = data
        self.compressed = compressed
        self.accessed = accessed
        self.mustRevalidate = mustRevalidate
    }
}

/// A tile row as stored.
public struct StoredTileRow: Sendable {
    public var key: TileKey
    public var content: StoredContent

    public init(key: TileKey, content: StoredContent) {
        self.key = key
        self.content = content
    }
}

/// A resource row as stored.
public struct StoredResourceRow: Sendable {
    public var url: String
    /// MapLibre's resource kind number.
    public var kind: Int64
    public var content: StoredContent

    public init(url: String, kind: Int64, content: StoredContent) {
        self.url = url
        self.kind = kind
        self.content = content
    }
}

/// The store an apply stages into (the previous `offline.db`): besides reading its tiles,
/// resources and expired content and writing it (`StoreWriter`), the applier reads its rows back
/// in key order so the canonical file can be assembled from them.
public protocol StagingStore: StoredTiles, StoredResources, ExpiringContent, StoreWriter {
    /// The stored ones of `urls`, ascending by URL (byte order).
    func resourceRows(urls: [String]) throws -> [StoredResourceRow]
    /// How many tile and resource rows the store holds.
    func rowCounts() throws -> (tiles: Int, resources: Int)
}

/// Writes a store's canonical file: regions, then resources by URL, then tiles by key, then
/// the links, each given in that order; row ids are positions (1, 2, …). Implemented by
/// ProvisionStore; the applier decides what goes in, so the same calls in the same order give the
/// same bytes whatever the history of the store they came from.
public protocol CanonicalStoreBuilder: AnyObject {
    /// Adds a region row with the next id.
    func addRegion(definition: Data, description: Data?) throws -> Int64
    /// Adds a resource row (copied as stored) with the next id.
    func addResource(_ row: StoredResourceRow) throws -> Int64
    /// Adds a tile row copied as stored, with the next id.
    func addTile(_ row: StoredTileRow) throws -> Int64
    /// Adds a freshly downloaded tile with the next id (stored as the staging store would).
    func addTile(_ key: TileKey, body: FetchedBody) throws -> Int64
    /// The stored length (compressed where the row is; 0 for a "no content" tile) of the tile
    /// row added last, for the footprint the apply reports.
    var lastTileBytes: Int64 { get }
    /// Links resources to a region (ids ascending).
    func linkResources(_ ids: [Int64], toRegion region: Int64) throws
    /// Links tiles to a region (ids ascending).
    func linkTiles(_ ids: IDRuns, toRegion region: Int64) throws
    /// Makes what was added so far survive a kill (the file is not the store until finished).
    func commit() throws
}
