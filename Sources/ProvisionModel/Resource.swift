import Foundation
import TileMath

/// The kind of an offline-database resource, with MapLibre's numbering.
public enum ResourceKind: Int, Sendable, CaseIterable, Comparable {
    case unknown = 0
    case style = 1
    /// A TileJSON, or a GeoJSON source's `data` URL.
    case source = 2
    case tile = 3
    case glyphs = 4
    case spriteImage = 5
    case spriteJSON = 6
    case image = 7

    public static func < (a: ResourceKind, b: ResourceKind) -> Bool { a.rawValue < b.rawValue }

    /// A lower-case name for reports.
    public var name: String {
        switch self {
        case .unknown: return "unknown"
        case .style: return "style"
        case .source: return "source"
        case .tile: return "tile"
        case .glyphs: return "glyphs"
        case .spriteImage: return "sprite-image"
        case .spriteJSON: return "sprite-json"
        case .image: return "image"
        }
    }
}

/// The key a tile is stored and looked up under in the offline database.
public struct TileKey: Hashable, Comparable, Sendable {
    /// The unexpanded canonical URL template (`tiles[0]` of the source).
    public var urlTemplate: String
    /// 2 only when the template has `{ratio}` and the pack is 2x or more, else 1.
    public var pixelRatio: Int
    /// z, x and the stored y (after the TMS flip for `scheme: tms` sources).
    public var tile: TileID

    public init(urlTemplate: String, pixelRatio: Int, tile: TileID) {
        self.urlTemplate = urlTemplate
        self.pixelRatio = pixelRatio
        self.tile = tile
    }

    public static func < (a: TileKey, b: TileKey) -> Bool {
        (a.urlTemplate, a.pixelRatio, a.tile) < (b.urlTemplate, b.pixelRatio, b.tile)
    }
}

/// One object to download: a resource or a tile.
public struct FetchRequest: Hashable, Sendable {
    /// The canonical URL with every token expanded: what the store records for resources,
    /// and what an origin maps to a mirror.
    public var url: String
    /// What the body must be.
    public var kind: ResourceKind
    /// For tiles: the key it is stored under.
    public var tileKey: TileKey?
    /// For tiles: the geographic XYZ tile (y from the north, before any TMS flip),
    /// which archive origins use to find the tile.
    public var tile: TileID?

    /// For revalidation: the stored ETag, sent as `If-None-Match`.
    public var etag: String?
    /// For revalidation: the stored Last-Modified (Unix seconds), sent as `If-Modified-Since`.
    public var modifiedSince: Int64?

    public init(url: String, kind: ResourceKind, tileKey: TileKey? = nil, tile: TileID? = nil,
                etag: String? = nil, modifiedSince: Int64? = nil) {
        self.url = url
        self.kind = kind
        self.tileKey = tileKey
        self.tile = tile
        self.etag = etag
        self.modifiedSince = modifiedSince
    }

    /// Whether this is a conditional (revalidation) request.
    public var isConditional: Bool { etag != nil || modifiedSince != nil }
}

/// A verified response body with the HTTP cache fields MapLibre's schema keeps.
public struct FetchedBody: Equatable, Sendable {
    /// The raw payload (never gzip-wrapped).
    public var data: Data
    public var etag: String?
    /// Last-Modified, Unix seconds.
    public var modified: Int64?
    /// Expiry from Cache-Control/Expires, Unix seconds.
    public var expires: Int64?
    /// The origin has no such tile (HTTP 404, or absent from a local origin) and the job allows
    /// that (`download.missingTiles: "skip"`): `data` is empty, and the store records the tile
    /// with NULL data — MapLibre's empty tile — so that plans stop asking for it.
    public var isMissing: Bool
    /// The origin answered `304 Not Modified` to a revalidation: `data` is empty and the stored
    /// bytes stay as they are; only the cache fields are new.
    public var isNotModified: Bool = false
    /// The payload as a zlib stream (RFC 1950) when the origin delivered it deflated (gzip):
    /// the same compressed bytes rewrapped, so the store can keep them without compressing again.
    public var zlibData: Data?
    /// What the origin's Cache-Control said about revalidation (HTTP responses only). The store
    /// writes `must_revalidate = 0` whatever it says, so that a device uses the body offline.
    public var revalidation: ServedRevalidation = []

    public init(data: Data, etag: String? = nil, modified: Int64? = nil, expires: Int64? = nil,
                isMissing: Bool = false) {
        self.data = data
        self.etag = etag
        self.modified = modified
        self.expires = expires
        self.isMissing = isMissing
    }

    /// The body recorded for a tile the origin does not have, under `missingTiles: "skip"`.
    public static let missingTile = FetchedBody(data: Data(), isMissing: true)
}

/// The revalidation directives a response was served with (RFC 9111 §5.2.2), and what MapLibre
/// Native would have made of them.
public struct ServedRevalidation: OptionSet, Hashable, Sendable {
    /// The bits of the set.
    public let rawValue: UInt8

    /// Creates the set from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An unqualified `no-cache`: a cache must revalidate before every use.
    public static let noCache = ServedRevalidation(rawValue: 1 << 0)
    /// `no-store`: a cache must not keep the response at all.
    public static let noStore = ServedRevalidation(rawValue: 1 << 1)
    /// `must-revalidate` in any Cache-Control field line: once stale, revalidate before use.
    public static let mustRevalidate = ServedRevalidation(rawValue: 1 << 2)
    /// MapLibre Native, fetching the response itself, would store `must_revalidate = 1`: its
    /// HTTP file source keeps only the last Cache-Control field line, and its parser matches
    /// `must-revalidate` exactly (lower case). It reads neither no-cache nor no-store.
    public static let mapLibreMustRevalidate = ServedRevalidation(rawValue: 1 << 3)

    /// Whether the response asked caches to revalidate it: no-cache, no-store or must-revalidate.
    public var asksRevalidation: Bool { !isDisjoint(with: [.noCache, .noStore, .mustRevalidate]) }
}

/// A request with its verified body, ready to be written.
public struct FetchedItem: Equatable, Sendable {
    public var request: FetchRequest
    public var body: FetchedBody

    public init(request: FetchRequest, body: FetchedBody) {
        self.request = request
        self.body = body
    }
}
