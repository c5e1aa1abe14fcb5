import Foundation
import TileMath

/// Why a download failed; `isTransient` failures may be retried.
public enum FetchFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server answered with a non-2xx status (a 401 or 403 here is to a request that carried
    /// no key or token: a failed download of that URL, not a refused credential).
    case status(Int)
    /// The server answered HTTP 401 or 403 to a request that carried a key or token (a secret
    /// query parameter, a user-info password, the Mapbox token): the credential is wrong, expired
    /// or lacks a scope, and every request carrying it will be refused alike.
    case refused(Int)
    /// The connection failed, timed out or was cut (libcurl's message).
    case transport(String)
    /// The body arrived but is not plausible for its kind (HTML error page, truncated, wrong format).
    case invalidBody(String)
    /// A JSON document (style, TileJSON, sprite index) arrived whole but cannot be used: not JSON,
    /// past a parse cap, a byte-order mark, the wrong shape. Another attempt gets the same bytes.
    case unusableDocument(String)
    /// The origin has no such object (404, missing file, tile absent from an archive).
    case notFound
    /// The origin cannot serve this kind of request (e.g. a style from an MBTiles archive).
    case unsupported(String)
    /// Never attempted, or not retried, because the run stopped early (after a fatal failure
    /// of another request); the text says why.
    case abandoned(String)
    /// The origin's TLS certificate is not trusted, or the CA file or directory named in the
    /// environment cannot be used; the text names the host and what to set. Not retried.
    case tls(String)
    /// More redirects than allowed (a loop, or a chain too long), the text naming where the chain
    /// started. Not retried.
    case redirects(String)
    /// The object changed while the run was reading it (a remote PMTiles archive answered with
    /// another ETag or size than its first answer); the text names it. Not retried, and it stops
    /// the run: a later run, reading the new version from its start, may succeed.
    case changed(String)

    /// Whether another attempt may succeed.
    public var isTransient: Bool {
        switch self {
        case .status(let code): return [408, 429, 500, 502, 503, 504].contains(code)
        case .transport: return true
        case .refused, .invalidBody, .unusableDocument, .notFound, .unsupported, .abandoned, .tls, .redirects, .changed:
            return false
        }
    }

    /// Whether the failure dooms the rest of the run: the origin refused the key or token the
    /// request carried (`refused`), which every request carrying it meets alike, or an archive
    /// changed under the run. Fetchers stop starting new requests after one. A 401 or 403 to a
    /// request that carried no credential (`status`) is not: it fails that URL only, as a host
    /// that forbids a few objects does.
    public var isFatal: Bool {
        switch self {
        case .refused, .changed: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .refused(let code):
            return "the access token was refused (HTTP \(code)): it is wrong, expired or not allowed for this URL"
        case .status(let code) where code == 401 || code == 403:
            return "HTTP \(code) (the request carried no key or token)"
        case .status(let code): return "HTTP \(code)"
        case .transport(let message): return "transport error: \(message)"
        case .invalidBody(let why): return "invalid body: \(why)"
        case .unusableDocument(let why): return "unusable document: \(why)"
        case .notFound: return "not found"
        case .unsupported(let why): return "unsupported: \(why)"
        case .abandoned(let why): return "not fetched: \(why)"
        case .tls(let why): return "TLS: \(why)"
        case .redirects(let why): return why
        case .changed(let why): return why
        }
    }
}

/// Something that downloads many requests with bounded parallelism.
public protocol Fetcher: AnyObject {
    /// Fetches every request the iterator yields (pulled lazily, so the work list is never
    /// materialised), calling `onResult` once per request, from the calling thread,
    /// in completion order. Returns when all are done. A fetcher that knows the job's secrets
    /// delivers failures redacted with them (`URLSecrets.redacted`).
    func fetchAll<I: IteratorProtocol>(
        _ requests: inout I,
        onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
    ) where I.Element == FetchRequest
}

/// A read-only tile archive (an MBTiles file) used as an origin.
public protocol TileArchive: AnyObject {
    /// The stored bytes of a geographic XYZ tile (possibly gzip-wrapped), or nil when absent.
    func tileData(_ tile: TileID) throws -> Data?

    /// The archive's mean tile size in bytes per zoom among `zooms`, as far as it can tell
    /// cheaply (a sample per zoom); zooms it holds no tile of, or cannot measure, are absent.
    /// The planner's byte estimate prefers these to an assumed size per format.
    func meanTileSizes(zooms: ClosedRange<Int>) throws -> [Int: Double]
}

extension TileArchive {
    /// No measurement: the planner falls back to its assumed size per format.
    public func meanTileSizes(zooms: ClosedRange<Int>) throws -> [Int: Double] { [:] }
}

/// A region row of the offline database.
public struct StoredRegion: Equatable, Sendable {
    public var rowID: Int64
    /// MapLibre's definition JSON bytes.
    public var definition: Data
    /// The description bytes (our region metadata JSON), nil when NULL.
    public var description: Data?

    public init(rowID: Int64, definition: Data, description: Data?) {
        self.rowID = rowID
        self.definition = definition
        self.description = description
    }
}

/// What a store holds, as the planner reads it: regions and their links, stored tiles and
/// resources, and the sizes its estimate starts from.
///
/// Read-only: the planner is handed a `StoreInventory` and cannot change the store; only the
/// applier, through `StoreWriter`, does. Each part is a protocol of its own, so a caller takes
/// only the part it reads.
public typealias StoreInventory = StoredRegions & StoredTiles & StoredResources & StoredSizes

/// The region rows of a store and what is linked to them: what the planner compares a job's
/// regions with.
public protocol StoredRegions: AnyObject {
    /// Every region row, ordered by row id.
    func regions() throws -> [StoredRegion]
    /// Linked tile counts of a region by template and zoom.
    func linkedTileCounts(region rowID: Int64) throws -> [TileCount]
    /// How many tile links a region has: a count of its links alone, so a link to a tile row
    /// that is gone counts here but not in `linkedTileCounts`.
    func tileLinkCount(region rowID: Int64) throws -> Int
    /// The resource URLs linked to a region, sorted.
    func linkedResources(region rowID: Int64) throws -> [String]
}

/// The tiles a store holds, read a column or a page at a time: what the walks of a cover
/// (`TileGroup`, `StoredTileScan`), the glyph scan and the assembly of a next file read.
public protocol StoredTiles: AnyObject {
    /// Calls `body` with the stored row (`y` as the store keeps it: counted from the south for a
    /// TMS source) of every tile of `column` the store holds, ascending; with `region`, only the
    /// tiles linked to that region row. Tiles linked to no region (a killed apply's) are stored.
    ///
    /// Why one column at a time: the store's key index (template, pixel ratio, zoom, x, y) reads
    /// exactly these rows with one seek, so callers merge a cover (produced column by column in
    /// the same order) with the store holding one column, however many tiles either side has.
    func forEachStoredTile(in column: StoredTileColumn, linkedTo region: Int64?, _ body: (_ y: Int) throws -> Void) throws
    /// Calls `body` with the stored row and the stored length (as stored: compressed where the
    /// row is; 0 for an empty tile) of every tile of `column` the store holds, ascending.
    func forEachStoredTileLength(in column: StoredTileColumn, _ body: (_ y: Int, _ bytes: Int64) throws -> Void) throws
    /// Up to `limit` tile rows of one template, ratio and zoom whose stored (x, y) comes after
    /// `after` (all when nil), ascending by x then y.
    func tileRows(urlTemplate: String, pixelRatio: Int, zoom: Int, after: (x: Int, y: Int)?, limit: Int) throws
        -> [StoredTileRow]
}

extension StoredTiles {
    /// Calls `body` with every tile row of one template, ratio and zoom, ascending by x then y,
    /// read `page` rows at a time so that a zoom of any size never sits in memory at once.
    public func forEachTileRow(urlTemplate: String, pixelRatio: Int, zoom: Int, page: Int = 256,
                               _ body: (StoredTileRow) throws -> Void) throws {
        var after: (x: Int, y: Int)?
        while true {
            let rows = try tileRows(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: zoom, after: after, limit: page)
            for row in rows { try body(row) }
            guard rows.count == page, let last = rows.last else { return }
            after = (last.key.tile.x, last.key.tile.y)
        }
    }
}

/// The resources a store holds: which are stored, and their payloads.
public protocol StoredResources: AnyObject {
    /// The subset of `urls` already stored as resources.
    func storedResources(among urls: [String]) throws -> Set<String>
    /// The stored payload of a resource (inflated), or nil.
    func resourceData(url: String) throws -> Data?
}

/// The stored sizes the planner's byte estimate prefers to assumed ones.
public protocol StoredSizes: AnyObject {
    /// Mean stored payload size of the tiles of a template at each of `zooms` that holds any
    /// (every pixel ratio; empty tiles not counted), by zoom: one pass over the template's rows.
    func meanTileSizes(urlTemplate: String, zooms: ClosedRange<Int>) throws -> [Int: Double]
    /// The stored length of each of `urls` that is stored as a resource.
    func storedResourceSizes(among urls: [String]) throws -> [String: Int64]
    /// Mean stored length of the resources of a kind, or nil when none is stored.
    func meanResourceSize(kind: ResourceKind) throws -> Double?
}

/// The content of a store that has expired: what an apply with a refresh revalidates.
public protocol ExpiringContent: AnyObject {
    /// Revalidation requests (with the stored ETag and Last-Modified) for region-linked content
    /// that expired before `now`.
    func expiredRequests(before now: Int64) throws -> [FetchRequest]
}

/// The changes an apply makes to the store it stages into: rows, links, regions, pruning.
///
/// Every method is one transaction: after it returns the change is durable, and if the process
/// dies during it the store is as it was before.
public protocol StoreWriter: AnyObject {
    /// Adds a region row and returns its id.
    func insertRegion(definition: Data, description: Data?) throws -> Int64
    /// Replaces a region row's definition and description.
    func updateRegion(_ rowID: Int64, definition: Data, description: Data?) throws
    /// Deletes region rows with their links (content is left for `pruneOrphans`).
    func deleteRegions(_ rowIDs: [Int64]) throws
    /// Deletes tiles and resources no region links to; returns how many of each.
    func pruneOrphans() throws -> (tiles: Int, resources: Int)

    /// Writes verified items (tiles and resources) in one transaction, replacing equal keys.
    func write(_ items: [FetchedItem]) throws
    /// Links the stored ones of `keys` to a region; returns how many links are new.
    @discardableResult func linkTiles(_ keys: [TileKey], toRegion rowID: Int64) throws -> Int
    /// Removes the links of `keys` from a region.
    func unlinkTiles(_ keys: [TileKey], fromRegion rowID: Int64) throws
    /// Links the stored ones of `urls` to a region.
    func linkResources(_ urls: [String], toRegion rowID: Int64) throws
    /// Removes every resource link of a region not in `keeping`.
    func unlinkResources(fromRegion rowID: Int64, keeping urls: Set<String>) throws
}

/// A count of tiles for one template and zoom.
public struct TileCount: Equatable, Sendable {
    public var urlTemplate: String
    public var zoom: Int
    public var count: Int

    public init(urlTemplate: String, zoom: Int, count: Int) {
        self.urlTemplate = urlTemplate
        self.zoom = zoom
        self.count = count
    }
}

/// The stored rows of one tile column that `StoredTiles` is asked for: a template, pixel
/// ratio, zoom and column, and a range of rows as the store keeps them.
public struct StoredTileColumn: Equatable, Sendable {
    public var urlTemplate: String
    public var pixelRatio: Int
    public var zoom: Int
    public var x: Int
    /// The stored rows asked for (`y` as stored: counted from the south for a TMS source).
    public var rows: Range<Int>

    public init(urlTemplate: String, pixelRatio: Int, zoom: Int, x: Int, rows: Range<Int>) {
        self.urlTemplate = urlTemplate
        self.pixelRatio = pixelRatio
        self.zoom = zoom
        self.x = x
        self.rows = rows
    }
}
