import Foundation
import TileMath

/// What an apply will do to a store: the value `provision plan` computes and `provision apply` carries out.
///
/// A plan is data. It holds the desired state (every region row with its tile sets and resources),
/// the documents (styles, TileJSONs) it was resolved from, and the diff against the store it was
/// computed on. Apply never re-plans: it enumerates the same covers from the same desired state.
public struct Plan: Sendable {
    /// The job the plan was made from.
    public var jobName: String
    /// sha256 of the job file bytes.
    public var jobDigest: String
    /// The fixed time written where the database format needs one (Unix seconds).
    public var epoch: Int64
    /// One entry per desired region row (job region × style pack), in job order.
    public var regions: [RegionPlan]
    /// Region rows in the store that the job no longer wants.
    public var removedRegions: [RemovedRegion]
    /// Resources (style, TileJSON, sprites, glyphs …) per style pack.
    public var stylePacks: [StylePackPlan]
    /// Style and TileJSON bodies fetched while planning, by canonical URL; apply writes these
    /// bytes rather than fetching them again, so tiles and their TileJSON agree.
    public var documents: [String: FetchedBody]
    /// Whether counts are exact (true) or estimated.
    public var countsArePrecise: Bool
    /// Mean bytes assumed per tile where the store had no measurement.
    public var assumedTileBytes: Int

    public init(jobName: String, jobDigest: String, epoch: Int64, regions: [RegionPlan],
                removedRegions: [RemovedRegion], stylePacks: [StylePackPlan], documents: [String: FetchedBody],
                countsArePrecise: Bool = true, assumedTileBytes: Int) {
        self.jobName = jobName
        self.jobDigest = jobDigest
        self.epoch = epoch
        self.regions = regions
        self.removedRegions = removedRegions
        self.stylePacks = stylePacks
        self.documents = documents
        self.countsArePrecise = countsArePrecise
        self.assumedTileBytes = assumedTileBytes
    }

    /// The ids of the style packs that need canonical `url`: as one of their resources, or as a
    /// tile of one of their sources (the template's text before its first token is a prefix of it).
    public func stylePacks(using url: String) -> [String] {
        stylePacks.filter { pack in
            pack.resources.contains { $0.url == url } || pack.sources.contains { source in
                let head = source.urlTemplate.split(separator: "{", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                return !head.isEmpty && url.hasPrefix(head)
            }
        }.map(\.id)
    }

    /// Styles and TileJSONs whose bytes differ from the ones the lock pinned.
    public var drift: [DocumentDrift] = []
    /// Whether `drift` compares upstream's documents with the lock's: false for `plan --offline`,
    /// planned from the store's own copies, which cannot show what changed upstream.
    public var driftChecked = true
    /// Tile templates whose source's TileJSON drifted: every tile of these is fetched again.
    public var refetchTemplates: [String] = []
    /// With `--refresh`: expired content to revalidate, counted at `before` (Unix seconds).
    public var refresh: RefreshPlan?
    /// With `plan --repair`: stored rows that are damaged and would be fetched again.
    public var repairRows = 0
    /// Why the store's lock does not vouch for its rows (none, unreadable, or not matching
    /// `offline.db`), when it does not: the apply checks every row, rewrites the database at this
    /// build's time and writes the lock, so the plan has changes even when every row is kept.
    public var unverifiedStore: String?
    /// With `--shard`: what this shard's apply holds and downloads (the counts the plan shows
    /// are the shard's; `regions` keep the whole job's, which every shard's lock records).
    public var shard: ShardPlan?
    /// What the user should know about how the job was resolved (sources skipped, templates
    /// chosen, zooms fetched beyond MapLibre's own download …), in the order they were found.
    public var notes: [PlanNote] = []

    /// The job's search packs, resolved, each with what the apply does with its file.
    public var searchPacks: [SearchPackPlan] = []

    /// The job's routing packs, each with its graph tiles per region and level and what the apply
    /// does with its extract.
    public var routingPacks: [RoutingPackPlan] = []

    /// Whether applying the plan would change the store: its database, a search pack's file or a
    /// routing pack's extract.
    public var hasChanges: Bool {
        hasDatabaseChanges || searchPacks.contains { $0.action != .keep } || routingPacks.contains { $0.action != .keep }
    }

    /// Whether applying the plan would change the offline database.
    public var hasDatabaseChanges: Bool {
        !removedRegions.isEmpty || !drift.isEmpty || (refresh.map { $0.resources + $0.tiles > 0 } ?? false) || repairRows > 0 || unverifiedStore != nil
            || regions.indices.contains { action(of: $0) != .keep || tileTotals(of: $0).hasChanges || regions[$0].resources.hasChanges }
    }

    /// Tiles to add over all regions (links; a tile shared by two regions counts twice).
    public var tilesToAdd: Int { regions.reduce(0) { $0 + $1.totals.add } }
    /// Tiles to unlink over all regions, including removed ones.
    public var tilesToRemove: Int {
        regions.reduce(0) { $0 + $1.totals.remove } + removedRegions.reduce(0) { $0 + $1.tileCount }
    }
    /// Tiles already in place.
    public var tilesToKeep: Int { regions.reduce(0) { $0 + $1.totals.keep } }
    /// Tiles that must be downloaded (not stored under any region), each counted once.
    public var tilesToDownload: Int = 0
    /// Estimated bytes to download.
    public var bytesToDownload: Int64 = 0
    /// The store as it will be after the apply: its tiles and resources summed per set of rows
    /// holding them (members are indices into `regions`), stored bytes where the store holds
    /// the content, estimates for what the apply would download. Nil for a plan read from a file.
    public var sharing: ContentSharing?
}

/// Expired content a `--refresh` apply revalidates with `If-None-Match` / `If-Modified-Since`.
public struct RefreshPlan: Equatable, Sendable {
    /// Content whose expiry is before this time (Unix seconds) is revalidated.
    public var before: Int64
    /// Region-linked resources and tiles expired at `before`.
    public var resources: Int
    public var tiles: Int

    public init(before: Int64, resources: Int, tiles: Int) {
        self.before = before
        self.resources = resources
        self.tiles = tiles
    }
}

/// A style or TileJSON that changed upstream since the lock pinned it.
public struct DocumentDrift: Equatable, Sendable {
    public var url: String
    /// The digest the lock recorded.
    public var pinned: String
    /// The digest of the bytes fetched now.
    public var current: String

    public init(url: String, pinned: String, current: String) {
        self.url = url
        self.pinned = pinned
        self.current = current
    }
}

/// What a plan does to a region row, in the plan's one vocabulary (the same words `ChangeCounts`
/// counts tiles and resources in: add, keep, remove; a row can also be updated in place). The raw
/// values are the plan JSON's spelling, which predates this vocabulary and stays for its readers.
public enum PlanAction: String, Sendable, Equatable {
    /// `+`: a new region row.
    case add = "create"
    /// `~`: an existing row whose definition, description or content changes.
    case update
    /// ` `: nothing changes.
    case keep
    /// `-`: the row goes.
    case remove = "delete"

    /// The one-character symbol.
    public var symbol: String {
        switch self {
        case .add: return "+"
        case .update: return "~"
        case .keep: return " "
        case .remove: return "-"
        }
    }
}

/// Add/remove/keep counts.
public struct ChangeCounts: Equatable, Sendable {
    public var add: Int
    public var remove: Int
    public var keep: Int

    public init(add: Int = 0, remove: Int = 0, keep: Int = 0) {
        self.add = add
        self.remove = remove
        self.keep = keep
    }

    /// Whether anything is added or removed.
    public var hasChanges: Bool { add > 0 || remove > 0 }

    public static func + (a: ChangeCounts, b: ChangeCounts) -> ChangeCounts {
        ChangeCounts(add: a.add + b.add, remove: a.remove + b.remove, keep: a.keep + b.keep)
    }
}

/// One tile source a region row draws tiles from, with the zooms it covers.
public struct PlannedTileSet: Sendable, Equatable {
    /// The canonical URL template tiles are stored under.
    public var urlTemplate: String
    /// The pixel ratio stored with the tiles (1 or 2).
    public var pixelRatio: Int
    /// Whether the source numbers rows from the south.
    public var isTMS: Bool
    /// The tile zooms fetched, after MapLibre's covering-zoom rule and the source's range (and,
    /// for a source that stops below the region's zooms, its `maxzoom` to overzoom from).
    public var zooms: ClosedRange<Int>
    /// What the tiles' bodies must be.
    public var kind: ResourceKind
    /// The source's TileJSON `bounds`: no tile outside them is wanted (nil: the whole world).
    public var bounds: TileBounds?

    public init(urlTemplate: String, pixelRatio: Int, isTMS: Bool, zooms: ClosedRange<Int>, kind: ResourceKind = .tile,
                bounds: TileBounds? = nil) {
        self.urlTemplate = urlTemplate
        self.pixelRatio = pixelRatio
        self.isTMS = isTMS
        self.zooms = zooms
        self.kind = kind
        self.bounds = bounds
    }

    /// The tiles of this set a region covering `area` wants at `zoom`: the area's cover clipped
    /// to the set's bounds. Plan, apply and audit all count and enumerate through this.
    public func cover(of area: CoverArea, zoom: Int) -> TileCover {
        TileCover(area, zoom: zoom, bounds: bounds)
    }

    /// The stored key of a geographic XYZ tile.
    public func key(for tile: TileID) -> TileKey {
        let y = isTMS ? tile.tmsY : tile.y
        return TileKey(urlTemplate: urlTemplate, pixelRatio: pixelRatio, tile: TileID(z: tile.z, x: tile.x, y: y))
    }
}

/// Per-zoom tile changes of one tile set.
public struct ZoomChange: Equatable, Sendable {
    public var urlTemplate: String
    public var zoom: Int
    public var counts: ChangeCounts

    public init(urlTemplate: String, zoom: Int, counts: ChangeCounts) {
        self.urlTemplate = urlTemplate
        self.zoom = zoom
        self.counts = counts
    }
}

/// The plan of one desired region row.
public struct RegionPlan: Sendable {
    /// The job region id.
    public var regionID: String
    /// The job region name.
    public var name: String
    /// The style pack id this row draws with, or nil for a tilesets-only region.
    public var stylePackID: String?
    /// The key of the row in the lock: `region/pack`.
    public var key: String { "\(regionID)/\(stylePackID ?? "-")" }
    /// The row in the store it maps to, if any.
    public var rowID: Int64?
    /// What happens to the row.
    public var action: PlanAction
    /// MapLibre's region definition JSON.
    public var definition: Data
    /// The description (region metadata as compact JSON).
    public var description: Data
    /// The geometry tiles are covered for.
    public var area: CoverArea
    /// The tile sets of the row.
    public var tileSets: [PlannedTileSet]
    /// Per tile set and zoom: tiles added, removed, kept.
    public var zoomChanges: [ZoomChange]
    /// Tile sets (template, zoom) linked in the store that the row no longer wants, with counts.
    public var staleTileCounts: [TileCount]
    /// Resource URLs (with kinds) the row links to, sorted by URL.
    public var resources: ResourceChanges
    /// Estimated bytes of the tiles this row adds that must be downloaded.
    public var estimatedBytes: Int64
    /// For a row of a `"glyphs": "used"` pack whose tiles are not all stored yet: its glyph
    /// ranges are determined by the apply once they are, so `resources` lists only those known
    /// now (`0-255` and the ranges of layers that cannot be evaluated).
    public var glyphsAtApply = false

    public init(regionID: String, name: String, stylePackID: String?, rowID: Int64?, action: PlanAction,
                definition: Data, description: Data, area: CoverArea, tileSets: [PlannedTileSet],
                zoomChanges: [ZoomChange], staleTileCounts: [TileCount], resources: ResourceChanges,
                estimatedBytes: Int64) {
        self.regionID = regionID
        self.name = name
        self.stylePackID = stylePackID
        self.rowID = rowID
        self.action = action
        self.definition = definition
        self.description = description
        self.area = area
        self.tileSets = tileSets
        self.zoomChanges = zoomChanges
        self.staleTileCounts = staleTileCounts
        self.resources = resources
        self.estimatedBytes = estimatedBytes
    }

    /// Tile counts summed over tile sets and zooms.
    public var totals: ChangeCounts {
        zoomChanges.reduce(ChangeCounts()) { $0 + $1.counts }
            + ChangeCounts(remove: staleTileCounts.reduce(0) { $0 + $1.count })
    }

    /// Whether any tile link is added or removed.
    public var hasTileChanges: Bool { totals.hasChanges }
}

/// A resource URL with its kind.
public struct ResourceRef: Hashable, Comparable, Sendable {
    public var url: String
    public var kind: ResourceKind

    public init(url: String, kind: ResourceKind) {
        self.url = url
        self.kind = kind
    }

    public static func < (a: ResourceRef, b: ResourceRef) -> Bool { (a.url, a.kind) < (b.url, b.kind) }
}

/// The resources a row wants, split by what happens to their links.
public struct ResourceChanges: Equatable, Sendable {
    /// Every resource the row wants, sorted.
    public var wanted: [ResourceRef]
    /// Wanted but not linked yet.
    public var add: [ResourceRef]
    /// Linked but no longer wanted.
    public var remove: [String]

    public init(wanted: [ResourceRef], add: [ResourceRef], remove: [String]) {
        self.wanted = wanted
        self.add = add
        self.remove = remove
    }

    /// Whether any link is added or removed.
    public var hasChanges: Bool { !add.isEmpty || !remove.isEmpty }

    /// Counts of added, removed and kept links.
    public var counts: ChangeCounts {
        ChangeCounts(add: add.count, remove: remove.count, keep: wanted.count - add.count)
    }
}

/// A region row the job no longer wants.
public struct RemovedRegion: Equatable, Sendable {
    public var rowID: Int64
    /// The lock key it had (`region/pack`), or nil for a row the lock does not know.
    public var key: String?
    /// Tiles linked to it.
    public var tileCount: Int
    /// Resources linked to it.
    public var resourceCount: Int

    public init(rowID: Int64, key: String?, tileCount: Int, resourceCount: Int) {
        self.rowID = rowID
        self.key = key
        self.tileCount = tileCount
        self.resourceCount = resourceCount
    }
}

/// The resolved content of a style pack.
public struct StylePackPlan: Equatable, Sendable {
    public var id: String
    public var styleURL: String
    /// Every resource the pack needs (style, TileJSONs, sprites, glyphs …), sorted.
    public var resources: [ResourceRef]
    /// Of those, the ones not yet stored.
    public var missing: [ResourceRef]
    /// The tile sources of the style (what the lock records).
    public var sources: [SourceSummary]
    /// What the style does: every source with what is fetched for it, the font stacks, sprites.
    public var overview: StyleOverview
    /// Which glyph ranges the pack fetches.
    public var glyphPolicy: GlyphPolicy = .ideographsLocal
    /// With `"glyphs": "used"`: the labels whose code points decide the glyph ranges.
    public var glyphDemand: GlyphDemand?

    public init(id: String, styleURL: String, resources: [ResourceRef], missing: [ResourceRef], sources: [SourceSummary],
                overview: StyleOverview = StyleOverview()) {
        self.id = id
        self.styleURL = styleURL
        self.resources = resources
        self.missing = missing
        self.sources = sources
        self.overview = overview
    }
}

/// A tile source as resolved for the lock and reports.
public struct SourceSummary: Equatable, Sendable {
    public var name: String
    /// The TileJSON URL, nil for inline sources.
    public var tileJSONURL: String?
    public var urlTemplate: String
    public var scheme: String
    public var minZoom: Int
    public var maxZoom: Int
    public var tileSize: Int

    public init(name: String, tileJSONURL: String?, urlTemplate: String, scheme: String, minZoom: Int, maxZoom: Int, tileSize: Int) {
        self.name = name
        self.tileJSONURL = tileJSONURL
        self.urlTemplate = urlTemplate
        self.scheme = scheme
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.tileSize = tileSize
    }
}

/// One thing a plan tells the user about how it resolved the job, without being an error.
public struct PlanNote: Equatable, Hashable, Sendable {
    /// What the note is about: `stylePack 'id'`, `region 'id'`, or a document URL.
    public var subject: String
    /// One sentence.
    public var message: String

    /// A note on `subject`.
    public init(subject: String, message: String) {
        self.subject = subject
        self.message = message
    }
}
