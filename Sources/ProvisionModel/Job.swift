import Foundation
import ProvisionFoundation
import TileMath

/// A validated job file (manifest): what a store must hold.
public struct Job: Equatable, Sendable {
    /// The job-file format version; only 1 exists.
    public var version: Int
    /// A human name for the job.
    public var name: String
    /// The default store directory, resolved against the job file's directory; nil when not given.
    public var store: URL?
    /// The style packs, in file order.
    public var stylePacks: [StylePack]
    /// The regions, in file order.
    public var regions: [Region]
    /// Where bytes for canonical URLs come from, longest prefix first.
    public var origins: [Origin]
    /// Caps on what a plan may ask for.
    public var limits: Limits
    /// Download behaviour.
    public var download: DownloadSettings
    /// The search packs, in file order.
    public var searchPacks: [SearchPack] = []
    /// The job's own `attribution` (kind `job`, named after the job), carried with the
    /// sources' into the lock and every export; nil when the job declares none.
    public var attribution: Attribution?
    /// The routing packs, in file order.
    public var routingPacks: [RoutingPack] = []

    public init(version: Int = 1, name: String, store: URL? = nil, stylePacks: [StylePack], regions: [Region],
                origins: [Origin] = [], limits: Limits = Limits(), download: DownloadSettings = DownloadSettings(),
                searchPacks: [SearchPack] = []) {
        self.searchPacks = searchPacks
        self.version = version
        self.name = name
        self.store = store
        self.stylePacks = stylePacks
        self.regions = regions
        self.origins = origins.sorted { $0.prefix.count > $1.prefix.count }
        self.limits = limits
        self.download = download
    }
}

/// A style and everything it needs to draw offline except tiles.
public struct StylePack: Equatable, Sendable {
    /// The id regions refer to it by.
    public var id: String
    /// The canonical style URL.
    public var style: String
    /// 1, 2 or 3: the device pixel ratio tiles with `{ratio}` are fetched for.
    public var pixelRatio: Int
    /// Which glyph ranges to fetch.
    public var glyphs: GlyphPolicy
    /// Free-form metadata, carried into the lock.
    public var metadata: JSONObject
    /// Whether a source whose `maxzoom` is below all of a region's zooms still gets its tiles at
    /// `maxzoom` (which the renderer overzooms), where MapLibre's own download fetches none.
    public var overzoom: Bool

    public init(id: String, style: String, pixelRatio: Int = 1, glyphs: GlyphPolicy = .ideographsLocal,
                metadata: JSONObject = JSONObject(), overzoom: Bool = true) {
        self.id = id
        self.style = style
        self.pixelRatio = pixelRatio
        self.glyphs = glyphs
        self.metadata = metadata
        self.overzoom = overzoom
    }
}

/// Which glyph ranges a style pack fetches for each font stack.
public enum GlyphPolicy: String, Equatable, Sendable, CaseIterable {
    /// All 256 ranges (MapLibre's include_ideographs = true).
    case all
    /// Skip the CJK ideograph and Hangul ranges the device draws locally: 130 ranges
    /// (MapLibre's include_ideographs = false).
    case ideographsLocal = "ideographs-local"
    /// Only the ranges the labels of the regions' tiles need, plus `0-255`: decided at apply,
    /// once the tiles are stored, by evaluating each symbol layer's `text-field` over its features
    /// (`GlyphDemand`); a layer that cannot be evaluated gets the ranges of `ideographs-local`.
    case used

    /// The policy whose ranges a font stack gets when `used` cannot tell what its labels need.
    public static let usedFallback = GlyphPolicy.ideographsLocal
}

/// An area to hold offline, at a zoom range, drawn with style packs and/or tilesets.
public struct Region: Equatable, Sendable {
    /// A unique id matching `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`.
    public var id: String
    /// A human name.
    public var name: String
    /// The rectangle or polygons to cover.
    public var area: RegionArea
    /// Lowest zoom, 0…22.
    public var minZoom: Int
    /// Highest zoom, minZoom…22.
    public var maxZoom: Int
    /// Ids of the style packs this region draws with.
    public var stylePacks: [String]
    /// Extra tilesets: TileJSON URLs or tile URL templates.
    public var tilesets: [String]
    /// Free-form metadata, written as the region's description in the offline database.
    public var metadata: JSONObject
    /// Caps on this region alone (its tiles over all its style packs and tilesets).
    public var limits: Limits
    /// Ids of the search packs this region's places feed.
    public var searchPacks: [String] = []
    /// Ids of the routing packs that hold the graph tiles this region's geometry meets.
    public var routingPacks: [String] = []

    public init(id: String, name: String, area: RegionArea, minZoom: Int, maxZoom: Int,
                stylePacks: [String], tilesets: [String] = [], metadata: JSONObject = JSONObject(),
                limits: Limits = Limits()) {
        self.id = id
        self.name = name
        self.area = area
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.stylePacks = stylePacks
        self.tilesets = tilesets
        self.metadata = metadata
        self.limits = limits
    }
}

/// The geometry of a region.
public enum RegionArea: Equatable, Sendable {
    /// A rectangle.
    case bbox(BoundingBox)
    /// Polygons (united), with the GeoJSON geometry to record in the region definition.
    case geometry([Polygon], geoJSON: JSONValue)
    /// Lines and points (the tiles they pass through), with the GeoJSON geometry to record.
    case paths(lines: [[LngLat]], points: [LngLat], geoJSON: JSONValue)

    /// The area tile covers are computed for.
    public var coverArea: CoverArea {
        switch self {
        case .bbox(let box): return .bbox(box)
        case .geometry(let polygons, _): return .polygons(polygons)
        case .paths(let lines, let points, _): return .paths(lines: lines, points: points)
        }
    }

    /// The GeoJSON geometry a geometry definition records; nil for a bbox (a tile pyramid).
    public var geoJSON: JSONValue? {
        switch self {
        case .bbox: return nil
        case .geometry(_, let json), .paths(_, _, let json): return json
        }
    }
}

/// A mapping from a canonical URL prefix to where its bytes are fetched.
public struct Origin: Equatable, Sendable {
    /// The canonical URL prefix, e.g. `https://tiles.example.com/demo/`.
    public var prefix: String
    /// Where requests under the prefix are served from.
    public var mirror: Mirror

    public init(prefix: String, mirror: Mirror) {
        self.prefix = prefix
        self.mirror = mirror
    }
}

/// A source of bytes for canonical URLs.
public enum Mirror: Equatable, Sendable {
    /// A local directory; the rest of the URL after the prefix is a relative, percent-decoded path.
    case directory(URL)
    /// An MBTiles archive; tiles are read by z/x/y, non-tile requests fail.
    case mbtiles(URL)
    /// A PMTiles v3 archive in a local file; tiles are read by z/x/y, non-tile requests fail.
    case pmtiles(URL)
    /// A PMTiles v3 archive on an HTTP(S) server, read with range requests; tiles only.
    case remotePMTiles(String)
    /// Another HTTP(S) base URL; the rest of the URL is appended.
    case http(String)
}

/// Caps that a plan may not exceed.
public struct Limits: Equatable, Sendable {
    /// The most tiles the store may hold; nil for no cap.
    public var maxTiles: Int?
    /// The most bytes a plan may download; nil for no cap.
    public var maxBytes: Int64?
    /// The most `mapbox://` tiles the bundle may hold (job level only; nil for the default,
    /// `Limits.defaultMapboxTiles`).
    public var mapboxTiles: Int?
    /// Whether a source declaring no attribution fails the plan (65) instead of being a note
    /// (job level only); the job's own `attribution` credits such a source.
    public var requireAttribution = false

    /// MapLibre Native's default `offlineMapboxTileCountLimit`: a side-load merge that would leave
    /// more `mapbox://` tiles on the device is refused whole.
    public static let defaultMapboxTiles = 6_000

    public init(maxTiles: Int? = nil, maxBytes: Int64? = nil, mapboxTiles: Int? = nil) {
        self.maxTiles = maxTiles
        self.maxBytes = maxBytes
        self.mapboxTiles = mapboxTiles
    }
}

/// Download settings.
public struct DownloadSettings: Equatable, Sendable {
    /// Requests in flight at once, in total.
    public var concurrency: Int
    /// Extra attempts after a transient failure.
    public var retries: Int
    /// Seconds one request may take.
    public var timeoutSeconds: Double
    /// Connections (and so requests in flight) per host, 1…256; the concurrency when not set.
    public var perHost: Int
    /// Requests started per second over all hosts, retries included; nil for no limit.
    public var requestsPerSecond: Double?
    /// The largest response body accepted, in bytes (after content decoding).
    public var maxResponseBytes: Int
    /// Seconds a response may go without receiving a byte before the attempt is abandoned.
    public var stallSeconds: Double
    /// What a 404 for a tile means.
    public var missingTiles: MissingTilePolicy
    /// The User-Agent header sent; nil for the built-in one.
    public var userAgent: String?

    public init(concurrency: Int = 16, retries: Int = 3, timeoutSeconds: Double = 30, perHost: Int? = nil,
                requestsPerSecond: Double? = nil, maxResponseBytes: Int = 64 << 20, stallSeconds: Double = 15,
                missingTiles: MissingTilePolicy = .fail, userAgent: String? = nil) {
        self.concurrency = concurrency
        self.retries = retries
        self.timeoutSeconds = timeoutSeconds
        self.perHost = perHost ?? concurrency
        self.requestsPerSecond = requestsPerSecond
        self.maxResponseBytes = maxResponseBytes
        self.stallSeconds = stallSeconds
        self.missingTiles = missingTiles
        self.userAgent = userAgent
    }
}

/// What a 404 (or a tile absent from a local origin) for a tile means.
public enum MissingTilePolicy: String, Equatable, Sendable, CaseIterable {
    /// A failed download: the region stays incomplete and the next plan asks for the tile again.
    case fail
    /// An empty tile: stored with no data (MapLibre draws nothing there) so plans stop asking for it.
    case skip
}
