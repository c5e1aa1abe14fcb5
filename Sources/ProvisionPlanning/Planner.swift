import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import TileMath

/// A style pack with its style and TileJSONs resolved.
public struct ResolvedPack: Sendable {
    public var pack: StylePack
    /// Every resource the pack needs, the style and TileJSONs included.
    public var resources: [ResourceRef]
    /// The tile sources of the style, in style order.
    public var tileSources: [TileSource]
    /// The same sources as the lock and reports describe them.
    public var summaries: [SourceSummary]
    /// What the style does, for the plan's views.
    public var overview: StyleOverview
    /// With `"glyphs": "used"`: the label layers whose code points decide the glyph ranges.
    public var glyphDemand: GlyphDemand?

    public init(pack: StylePack, resources: [ResourceRef], tileSources: [TileSource], summaries: [SourceSummary],
                overview: StyleOverview = StyleOverview()) {
        self.pack = pack
        self.resources = Array(Set(resources)).sorted()
        self.tileSources = tileSources
        self.summaries = summaries
        self.overview = overview
    }
}

/// The extra `tilesets` of a region, resolved.
public struct ResolvedTilesets: Sendable {
    /// The TileJSON resources (empty for bare URL templates).
    public var resources: [ResourceRef]
    public var tileSources: [TileSource]
    /// For each of `tileSources`, the TileJSON URL it was read from (nil for a bare template).
    public var tileJSONURLs: [String?]

    public init(resources: [ResourceRef] = [], tileSources: [TileSource] = [], tileJSONURLs: [String?]? = nil) {
        self.resources = resources
        self.tileSources = tileSources
        self.tileJSONURLs = tileJSONURLs ?? tileSources.map { _ in nil }
    }

    /// Adds a source read from `tileJSONURL`, or a bare template when it is nil.
    public mutating func append(_ source: TileSource, tileJSONURL: String?) {
        tileSources.append(source)
        tileJSONURLs.append(tileJSONURL)
        if let tileJSONURL { resources.append(ResourceRef(url: tileJSONURL, kind: .source)) }
    }
}

/// Everything the planner needs besides the store.
public struct PlanInput: Sendable {
    public var job: Job
    public var jobDigest: String
    public var epoch: Int64
    /// Resolved style packs by id.
    public var packs: [String: ResolvedPack]
    /// Resolved extra tilesets by region id.
    public var regionTilesets: [String: ResolvedTilesets]
    /// Style and TileJSON bodies by canonical URL.
    public var documents: [String: FetchedBody]
    /// Region rows the lock file knows, by key (`region/pack`).
    public var rowsInLockFile: [String: Int64]
    /// Bytes assumed per vector tile where neither the store nor an origin archive measured
    /// one (raster and terrain tiles: `Planner.assumedTileBytes(for:vectorBytes:)`).
    public var assumedTileBytes: Int
    /// Digests (`sha256:…`) of styles and TileJSONs as the lock pinned them, by URL.
    public var pinnedDigests: [String: String] = [:]
    /// Notes found while the style packs and tilesets were resolved; the plan carries them first.
    public var notes: [PlanNote] = []
    /// Mean tile sizes an origin archive measured, by tile template: the byte estimate uses
    /// them where the store has no tile of the template and zoom to measure.
    public var originTileSizes: [String: OriginTileSizes] = [:]

    public init(job: Job, jobDigest: String, epoch: Int64, packs: [String: ResolvedPack],
                regionTilesets: [String: ResolvedTilesets] = [:], documents: [String: FetchedBody] = [:],
                rowsInLockFile: [String: Int64] = [:], assumedTileBytes: Int = Planner.defaultTileBytes) {
        self.job = job
        self.jobDigest = jobDigest
        self.epoch = epoch
        self.packs = packs
        self.regionTilesets = regionTilesets
        self.documents = documents
        self.rowsInLockFile = rowsInLockFile
        self.assumedTileBytes = assumedTileBytes
    }
}

/// Why a plan could not be made.
public enum PlanError: Error, Equatable, CustomStringConvertible {
    /// The job asks for more than its limits allow.
    case limitExceeded(String)
    /// A region names a style pack that was not resolved.
    case unresolvedStylePack(String)

    public var description: String {
        switch self {
        case .limitExceeded(let message): return message
        case .unresolvedStylePack(let id): return "style pack '\(id)' was not resolved"
        }
    }
}

/// Diffs the desired state of a job against a store. Pure: the store is only read.
public enum Planner {
    /// Bytes assumed per vector tile where nothing measured one: a street map's vector tile
    /// (OpenMapTiles or Mapbox Streets schema) of a city runs 10–50 kB at z12–14 and far less
    /// over sea or fields; documented in docs/job-file.md ("Byte estimates").
    public static let defaultTileBytes = 15_000
    /// The tile cap applied when a job sets none: big enough for a country at z14, small
    /// enough that a typo (a planet at z0–22) is refused before anything is counted twice.
    public static let defaultMaxTiles = 10_000_000

    /// Computes the plan. `store` is nil when the store does not exist yet.
    public static func plan(_ input: PlanInput, store: StoreInventory?) throws -> Plan {
        var (rows, overzoomNotes) = try desiredRows(input)
        try checkTileLimit(rows, job: input.job)
        let storedRegions = try store?.regions() ?? []
        let (claimed, noted) = matchStoredRegions(&rows, stored: storedRegions, input: input)
        let drift = documentDrift(input)
        let refetch = refetchTemplates(drift: drift, input: input)
        let linkedTiles = try diffRows(&rows, input: input, store: store, refetch: refetch)
        let regionNotes = noted.map {
            secondRegionNote(rows[$0.row], definitionChanged: $0.definitionChanged, storedTiles: linkedTiles[$0.row])
        }
        let removed = try removedRegions(storedRegions, claimed: claimed, input: input, store: store)
        var sharing = ContentSharing()
        var bases = Set<TileByteBasis>()
        let downloads = try countDownloads(&rows, input: input, store: store, refetch: refetch, sharing: &sharing,
                                           bases: &bases)
        try addResources(of: rows, to: &sharing, input: input, store: store, drift: drift)
        var packPlans = try stylePackPlans(input, store: store)
        try addFoundGlyphs(of: rows, to: &packPlans, store: store)

        var plan = Plan(jobName: input.job.name, jobDigest: input.jobDigest, epoch: input.epoch,
                        regions: rows, removedRegions: removed, stylePacks: packPlans,
                        documents: input.documents, assumedTileBytes: input.assumedTileBytes)
        plan.countsArePrecise = !rows.contains(where: \.glyphsAtApply)
        plan.tilesToDownload = downloads.tiles
        plan.bytesToDownload = downloads.bytes
        plan.drift = drift
        plan.notes = input.notes + sourceNotes(input) + overzoomNotes + latitudeNotes(input.job) + regionNotes
            + glyphNotes(rows) + emptyRegionNotes(rows, input: input)
            + estimateNote(bases)
        plan.refetchTemplates = refetch.sorted()
        plan.sharing = sharing
        return plan
    }

    /// The documents whose bytes differ from the digest the lock pinned. Tiles of a source whose
    /// TileJSON changed upstream are all fetched again, so the store never mixes tiles of two
    /// versions of a source (a resumed apply included: the lock keeps the old digest until an
    /// apply completes).
    static func documentDrift(_ input: PlanInput) -> [DocumentDrift] {
        input.documents.keys.sorted().compactMap { url -> DocumentDrift? in
            guard let pinned = input.pinnedDigests[url], let body = input.documents[url] else { return nil }
            let current = "sha256:" + SHA256.hex(body.data)
            return current == pinned ? nil : DocumentDrift(url: url, pinned: pinned, current: current)
        }
    }

    /// Diffs each row's tiles, glyph ranges and resources against its stored row; a kept row
    /// with changes becomes an update. Returns each row's stored tiles (linked before).
    static func diffRows(_ rows: inout [RegionPlan], input: PlanInput, store: (StoredTiles & StoredRegions)?,
                         refetch: Set<String>) throws -> [Int] {
        var linkedTiles = [Int](repeating: 0, count: rows.count)
        for i in rows.indices {
            linkedTiles[i] = try diffTiles(&rows[i], store: store)
            try planGlyphs(&rows[i], input: input, store: store, refetch: refetch)
            try diffResources(&rows[i], store: store)
            if rows[i].action == .keep && (rows[i].hasTileChanges || rows[i].resources.hasChanges) {
                rows[i].action = .update
            }
        }
        return linkedTiles
    }

    /// The plan of each resolved style pack: its resources and those the store lacks.
    static func stylePackPlans(_ input: PlanInput, store: StoredResources?) throws -> [StylePackPlan] {
        var packPlans: [StylePackPlan] = []
        for pack in input.job.stylePacks {
            guard let resolved = input.packs[pack.id] else { continue }
            let stored = try store?.storedResources(among: resolved.resources.map(\.url)) ?? []
            var packPlan = StylePackPlan(id: pack.id, styleURL: pack.style, resources: resolved.resources,
                                         missing: resolved.resources.filter { !stored.contains($0.url) },
                                         sources: resolved.summaries, overview: resolved.overview)
            packPlan.glyphPolicy = pack.glyphs
            packPlan.glyphDemand = resolved.glyphDemand
            packPlans.append(packPlan)
        }
        return packPlans
    }

    /// The glyph ranges found in stored tiles belong to the pack's resources too.
    static func addFoundGlyphs(of rows: [RegionPlan], to packPlans: inout [StylePackPlan], store: StoredResources?) throws {
        for row in rows where !row.glyphsAtApply {
            guard let p = packPlans.firstIndex(where: { $0.id == row.stylePackID && $0.glyphDemand != nil }) else { continue }
            let extra = row.resources.wanted.filter { $0.kind == .glyphs && !packPlans[p].resources.contains($0) }
            guard !extra.isEmpty else { continue }
            let stored = try store?.storedResources(among: extra.map(\.url)) ?? []
            packPlans[p].resources = Array(Set(packPlans[p].resources + extra)).sorted()
            packPlans[p].missing = Array(Set(packPlans[p].missing + extra.filter { !stored.contains($0.url) })).sorted()
        }
    }

    /// The tile templates of sources whose TileJSON drifted.
    static func refetchTemplates(drift: [DocumentDrift], input: PlanInput) -> Set<String> {
        let drifted = Set(drift.map(\.url))
        guard !drifted.isEmpty else { return [] }
        var templates = Set<String>()
        for pack in input.packs.values {
            for source in pack.summaries where source.tileJSONURL.map(drifted.contains) == true {
                templates.insert(source.urlTemplate)
            }
        }
        for resolved in input.regionTilesets.values {
            for (source, url) in zip(resolved.tileSources, resolved.tileJSONURLs) where url.map(drifted.contains) == true {
                templates.insert(source.template)
            }
        }
        return templates
    }

    // MARK: - Desired rows

    /// The desired region rows, and a note for each source a row fetches only to overzoom.
    static func desiredRows(_ input: PlanInput) throws -> (rows: [RegionPlan], notes: [PlanNote]) {
        var rows: [RegionPlan] = []
        var notes: [PlanNote] = []
        for region in input.job.regions {
            let extra = input.regionTilesets[region.id] ?? ResolvedTilesets()
            let extraNames = zip(extra.tileSources, extra.tileJSONURLs).map { "tileset \($1 ?? $0.template)" }
            if region.stylePacks.isEmpty {
                let styleURL = region.tilesets.first ?? ""
                let row = makeRow(region, packID: nil, styleURL: styleURL, pixelRatio: 1, includeIdeographs: false,
                                  sources: extra.tileSources, resources: extra.resources, overzoom: true)
                notes += overzoomNotes(row, region: region, sources: extra.tileSources, names: extraNames, overzoom: true)
                rows.append(row)
                continue
            }
            for packID in region.stylePacks {
                guard let resolved = input.packs[packID] else { throw PlanError.unresolvedStylePack(packID) }
                let sources = resolved.tileSources + extra.tileSources
                let row = makeRow(region, packID: packID, styleURL: resolved.pack.style,
                                  pixelRatio: resolved.pack.pixelRatio,
                                  includeIdeographs: resolved.pack.glyphs == .all,
                                  sources: sources, resources: resolved.resources + extra.resources,
                                  overzoom: resolved.pack.overzoom)
                notes += overzoomNotes(row, region: region, sources: sources,
                                       names: sourceNames(resolved).map { "source '\($0)'" } + extraNames,
                                       overzoom: resolved.pack.overzoom)
                rows.append(row)
            }
        }
        return (rows, notes)
    }

    static func makeRow(_ region: Region, packID: String?, styleURL: String, pixelRatio: Int, includeIdeographs: Bool,
                        sources: [TileSource], resources: [ResourceRef], overzoom: Bool = true) -> RegionPlan {
        var tileSets: [PlannedTileSet] = []
        for source in sources {
            guard let zooms = source.zoomRange(regionMin: region.minZoom, regionMax: region.maxZoom,
                                               overzoom: overzoom) else { continue }
            let set = PlannedTileSet(urlTemplate: source.template, pixelRatio: source.pixelRatio(forDeviceRatio: pixelRatio),
                                     isTMS: source.scheme == .tms, zooms: zooms, bounds: source.bounds)
            if !tileSets.contains(set) { tileSets.append(set) }
        }
        let wanted = Array(Set(resources)).sorted()
        return RegionPlan(
            regionID: region.id, name: region.name, stylePackID: packID, rowID: nil, action: .add,
            definition: RegionDefinition.json(region: region, styleURL: styleURL, pixelRatio: pixelRatio,
                                              includeIdeographs: includeIdeographs),
            description: RegionDefinition.description(region: region), area: region.area.coverArea,
            tileSets: tileSets, zoomChanges: [], staleTileCounts: [],
            resources: ResourceChanges(wanted: wanted, add: wanted, remove: []), estimatedBytes: 0)
    }

    /// Refuses a job that certainly covers more tiles than its limit, by arithmetic alone.
    ///
    /// Why a lower bound: regions overlap, so the exact count of distinct tiles needs the covers
    /// merged. For each template and zoom, the largest single region's count is a lower bound;
    /// summed zoom by zoom from z0, it passes any limit a planet-sized job exceeds within a few
    /// zooms, so such a job is refused in milliseconds. The exact count is checked while planning.
    static func checkTileLimit(_ rows: [RegionPlan], job: Job) throws {
        let limit = job.limits.maxTiles ?? defaultMaxTiles
        let zooms = rows.flatMap { $0.tileSets.flatMap { Array($0.zooms) } }
        guard let lowest = zooms.min(), let highest = zooms.max() else { return }
        var lowerBound = 0
        for z in lowest...highest {
            var largest: [String: Int] = [:]
            for row in rows {
                for set in row.tileSets where set.zooms.contains(z) {
                    let key = "\(set.urlTemplate)\u{0}\(set.pixelRatio)"
                    largest[key] = max(largest[key] ?? 0, set.cover(of: row.area, zoom: z).count)
                }
            }
            lowerBound += largest.values.reduce(0, +)
            if lowerBound > limit { throw tileLimitError(limit: limit, job: job, found: "at least \(grouped(lowerBound))") }
        }
    }

    /// Refuses a region over its own `limits`: its tiles over all its rows, and their estimated bytes.
    static func checkRegionLimits(_ rows: [RegionPlan], job: Job, meanSize: (String, Int) throws -> Double,
                                  basis: () -> String) throws {
        for region in job.regions where region.limits.maxTiles != nil || region.limits.maxBytes != nil {
            var tiles = 0
            var bytes: Double = 0
            var counted = Set<String>()
            for row in rows where row.regionID == region.id {
                for set in row.tileSets {
                    for z in set.zooms where counted.insert("\(z) \(set.urlTemplate) \(set.pixelRatio)").inserted {
                        let count = set.cover(of: row.area, zoom: z).count
                        tiles += count
                        bytes += Double(count) * (try meanSize(set.urlTemplate, z))
                    }
                }
            }
            if let maxTiles = region.limits.maxTiles, tiles > maxTiles {
                throw PlanError.limitExceeded("region '\(region.id)' covers \(plural(tiles, "tile")), over its limits.maxTiles of \(grouped(maxTiles))")
            }
            if let maxBytes = region.limits.maxBytes, bytes > Double(maxBytes) {
                throw PlanError.limitExceeded(
                    "region '\(region.id)' needs an estimated \(ByteFormat.exact(Int64(bytes))) of tiles, over its "
                        + "limits.maxBytes of \(ByteFormat.exact(maxBytes)); estimated from \(basis())")
            }
        }
    }

    static func tileLimitError(limit: Int, job: Job, found: String) -> PlanError {
        let origin = job.limits.maxTiles == nil ? "the default limit" : "limits.maxTiles"
        return PlanError.limitExceeded(
            "the store would hold \(found) tiles, over \(origin) of \(grouped(limit)); raise limits.maxTiles or shrink the regions or zooms")
    }

    // MARK: - Tile diff

    /// Counts per tile set and zoom the tiles a row adds, keeps and removes, and returns how many
    /// tiles the row's stored region links (0 for a new row).
    ///
    /// Why counts, not lists: the tiles kept are the cover's tiles linked to the row, counted
    /// from the store one column at a time; the rest follows by arithmetic (added = cover − kept,
    /// removed = linked − kept, links at another pixel ratio, as after a pack went from 1x to 2x,
    /// included), so no list of the row's links or of the cover is held. The links are counted
    /// by template and zoom (a join over every link) only when some link is not a kept tile: when
    /// the kept tiles add up to the row's links, as when a region only grows, nothing is removed.
    @discardableResult
    static func diffTiles(_ row: inout RegionPlan, store: (StoredTiles & StoredRegions)?) throws -> Int {
        guard let rowID = row.rowID, let store else {
            row.zoomChanges = row.tileSets.flatMap { set in
                set.zooms.map { z in
                    ZoomChange(urlTemplate: set.urlTemplate, zoom: z,
                               counts: ChangeCounts(add: set.cover(of: row.area, zoom: z).count))
                }
            }
            return 0
        }
        var kept: [(set: PlannedTileSet, zoom: Int, cover: Int, keep: Int)] = []
        for set in row.tileSets {
            for z in set.zooms {
                let cover = set.cover(of: row.area, zoom: z)
                kept.append((set, z, cover.count, try set.storedCount(of: cover, in: store, linkedTo: rowID)))
            }
        }
        let keptTotal = kept.reduce(0) { $0 + $1.keep }
        let keptOnce = Set(kept.map { "\($0.zoom) \($0.set.pixelRatio) \($0.set.urlTemplate)" }).count == kept.count
        let linked: [String: Int]
        let linkedTotal: Int
        if keptOnce, try store.tileLinkCount(region: rowID) == keptTotal {
            // Every link is a tile kept (a link to a missing tile row would be counted above but
            // not kept): no removals, no stale zooms.
            linked = Dictionary(kept.map { ("\($0.zoom) \($0.set.urlTemplate)", $0.keep) }, uniquingKeysWith: +)
            row.staleTileCounts = []
            linkedTotal = keptTotal
        } else {
            let counts = try store.linkedTileCounts(region: rowID)
            linked = Dictionary(counts.map { ("\($0.zoom) \($0.urlTemplate)", $0.count) }, uniquingKeysWith: +)
            let wanted = Set(row.tileSets.flatMap { set in set.zooms.map { "\($0) \(set.urlTemplate)" } })
            row.staleTileCounts = counts.filter { !wanted.contains("\($0.zoom) \($0.urlTemplate)") }
            linkedTotal = counts.reduce(0) { $0 + $1.count }
        }
        row.zoomChanges = kept.map {
            ZoomChange(urlTemplate: $0.set.urlTemplate, zoom: $0.zoom, counts: ChangeCounts(
                add: $0.cover - $0.keep, remove: (linked["\($0.zoom) \($0.set.urlTemplate)"] ?? 0) - $0.keep, keep: $0.keep))
        }
        return linkedTotal
    }

    static func diffResources(_ row: inout RegionPlan, store: StoredRegions?) throws {
        guard let rowID = row.rowID, let store else { return }
        let linked = try store.linkedResources(region: rowID)
        let linkedSet = Set(linked)
        let wanted = row.resources.wanted
        let wantedURLs = Set(wanted.map(\.url))
        row.resources = ResourceChanges(wanted: wanted, add: wanted.filter { !linkedSet.contains($0.url) },
                                             remove: linked.filter { !wantedURLs.contains($0) })
    }
}
