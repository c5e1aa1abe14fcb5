import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Carries out a plan against a store: downloads what is missing and assembles the store's
/// canonical file: the regions, and the tiles and resources they want, in key order. It never
/// re-plans: every tile it touches comes from the plan's covers.
///
/// Order matters for kill safety. The staging store (the previous `offline.db`) gets the region
/// rows and the resources first; every finished tile download is then committed within the
/// flush window (`Downloader.Configuration.flushWindow`, 100 ms by default), to the canonical
/// file or (when it had to wait) to the staging store. The staging store is replaced only by renaming the finished canonical file over it, so a store killed at
/// any point holds a committed state, and the next apply takes back what the killed one wrote.
public final class Applier {
    private let store: StagingStore
    private let fetcher: Fetcher
    private let configuration: Downloader.Configuration

    /// Called with download progress on the downloading thread.
    public var onProgress: ((DownloadProgress) -> Void)?
    /// Called for each download that failed for good, with its canonical URL and why.
    public var onFailure: ((String, String) -> Void)?
    /// Called with a short description of each phase.
    public var onPhase: ((String) -> Void)?
    /// Called after the links are written, per region: its key, tiles linked, tiles wanted, and
    /// whether it is complete.
    public var onRegion: ((String, Int, Int, Bool) -> Void)?
    /// With a shard's share (`Shard.range(total:)` of the plan's distinct tiles), only the tiles
    /// whose canonical ordinals fall in it are downloaded and written; nil: every tile.
    public var shardTiles: Range<Int>?
    /// Polled before each new request: once it returns true no further download starts, the
    /// ones in flight finish and are written, and the apply links what it has and returns.
    public var shouldStop: @Sendable () -> Bool = { false }
    /// For plans with `"glyphs": "used"` rows: called once the tiles are in the staging store
    /// with the plan and the store, returns the glyph resources each row's labels need (by row
    /// key; every such row when `all`, as after a refresh). Nil: rows keep the resources planned.
    public var resolveGlyphs: ((Plan, StoreInventory, _ all: Bool) throws -> [String: [ResourceRef]])?

    /// An applier staging into `store` and downloading through `fetcher`.
    public init(store: StagingStore, fetcher: Fetcher, configuration: Downloader.Configuration = Downloader.Configuration()) {
        self.store = store
        self.fetcher = fetcher
        self.configuration = configuration
    }

    /// Applies `plan`, writing the new store through `builder` (nil when the plan changes
    /// nothing: then only what is missing is fetched into the staging store). Failed downloads
    /// do not stop the apply: they leave their regions incomplete, which the outcome reports.
    /// Store errors are thrown.
    public func apply(_ plan: Plan, building builder: CanonicalStoreBuilder?) throws -> ApplyOutcome {
        var plan = plan
        let started = Date()
        var outcome = ApplyOutcome()

        onPhase?("regions")
        outcome.regionRows = try writeRegions(plan)

        onPhase?("resources")
        try writeDocuments(plan)
        var wanted: [String: ResourceRef] = [:]
        for region in plan.regions { for ref in region.resources.wanted { wanted[ref.url] = ref } }
        let stored = try store.storedResources(among: Array(wanted.keys))
        let resourceRequests = wanted.values.filter { !stored.contains($0.url) }.sorted()
            .map { FetchRequest(url: $0.url, kind: $0.kind) }

        let groups = CanonicalAssembler.canonicalOrder(plan.tileGroups)
        let (missing, groupCounts) = try missingTiles(groups, refetch: Set(plan.refetchTemplates))
        let total = resourceRequests.count + missing.reduce(0) { $0 + $1.count }
        outcome.plannedResources = resourceRequests.count
        outcome.plannedTiles = total - resourceRequests.count
        var done = DownloadProgress(requested: total, completed: 0, succeeded: 0, failed: 0, bytes: 0)
        // The store (and the assembler) cross to the writer thread: see `handedToWriter`.
        let writeToStore = Self.handedToWriter { [store] items in try store.write(items) }
        try download(resourceRequests.makeIterator(), into: &outcome, progress: &done, sink: writeToStore)

        onPhase?("tiles")
        // A fatal answer (401/403) to a resource stops the run before any tile is requested.
        let halted = outcome.stopMessage != nil, stop = shouldStop
        let tiles = WorkList(groups: groups, missing: missing, shouldStop: { halted || stop() })
        // Streaming into the canonical file needs the staging store final before the walk reads
        // it; a refresh rewrites staged rows afterwards, and the glyph ranges of "used" rows are
        // known only once their tiles are stored (resources come first in the file), so then the
        // file is assembled once the downloads are done, all from the staging store.
        let glyphScan = builder != nil && resolveGlyphs != nil
            && (plan.regions.contains(where: \.glyphsAtApply)
                || (plan.refresh != nil && plan.stylePacks.contains { $0.glyphDemand != nil }))
        let streams = plan.refresh == nil && !glyphScan
        let limits = CanonicalAssembler.Limits(spillSeconds: configuration.flushWindow, clock: configuration.clock)
        var assembler: CanonicalAssembler?
        if let builder, streams {
            let streaming = CanonicalAssembler(builder: builder, staging: store, plan: plan, groups: groups, downloads: missing,
                                               limits: limits, shard: shardTiles, groupCounts: groupCounts)
            assembler = streaming
            try streaming.begin()
            let failures = streaming.failures
            try download(tiles, into: &outcome, progress: &done, onFailure: { failures.note($0) },
                         sink: Self.handedToWriter { items in try streaming.receive(items) })
        } else {
            try download(tiles, into: &outcome, progress: &done, sink: writeToStore)
            if let refresh = plan.refresh {
                onPhase?("refresh")
                try revalidate(before: refresh.before, outcome: &outcome)
            }
            if glyphScan, let resolveGlyphs, outcome.stopMessage == nil, !shouldStop() {
                onPhase?("glyphs")
                let found = try resolveGlyphs(plan, store, plan.refresh != nil)
                plan.resolveGlyphs(found)
                outcome.glyphResources = found
                let refs = Set(found.values.flatMap { $0 })
                let stored = try store.storedResources(among: refs.map(\.url))
                let requests = refs.filter { !stored.contains($0.url) }.sorted().map { FetchRequest(url: $0.url, kind: $0.kind) }
                outcome.plannedResources += requests.count
                done.requested += requests.count
                try download(requests.makeIterator(), into: &outcome, progress: &done, sink: writeToStore)
            }
            assembler = builder.map {
                CanonicalAssembler(builder: $0, staging: store, plan: plan, groups: groups,
                                   downloads: groups.map { _ in TileBits() }, limits: limits, shard: shardTiles,
                                   groupCounts: groupCounts)
            }
            try assembler?.begin()
        }
        outcome.stopped = shouldStop()

        onPhase?("links")
        outcome.removedRegions = plan.removedRegions.count
        if let assembler {
            let summary = try assembler.finish()
            let counts = try store.rowCounts()
            outcome.prunedTiles = max(0, counts.tiles - summary.stagingTilesUsed)
            outcome.prunedResources = max(0, counts.resources - summary.resourcesWritten)
            outcome.linkedTiles = summary.linkedTiles.reduce(0, +)
            outcome.tileSharing = summary.tileSharing
            for (index, region) in plan.regions.enumerated() {
                if summary.incomplete[index] { outcome.incompleteRegions.append(region.key) }
                // The new file numbers region rows in plan order.
                outcome.regionRows[region.key] = Int64(index + 1)
                onRegion?(region.key, summary.linkedTiles[index],
                          region.zoomChanges.reduce(0) { $0 + $1.counts.add + $1.counts.keep }, !summary.incomplete[index])
            }
            // A row whose glyph ranges were left to this apply and not found (it stopped first)
            // lacks them: it is not complete, so the next plan reads its tiles and fetches them.
            for region in plan.regions where region.glyphsAtApply && !outcome.incompleteRegions.contains(region.key) {
                outcome.incompleteRegions.append(region.key)
            }
        }
        outcome.seconds = Date().timeIntervalSince(started)
        return outcome
    }

    /// Writes the plan's region rows into the staging store (new ones inserted, changed ones
    /// updated); returns every row id by region key.
    private func writeRegions(_ plan: Plan) throws -> [String: Int64] {
        var rows: [String: Int64] = [:]
        for region in plan.regions {
            if let rowID = region.rowID {
                if region.action == .update {
                    try store.updateRegion(rowID, definition: region.definition, description: region.description)
                }
                rows[region.key] = rowID
            } else {
                rows[region.key] = try store.insertRegion(definition: region.definition, description: region.description)
            }
        }
        return rows
    }

    /// Per group (canonical order), the positions of the tiles to download: those of the shard's
    /// share (every tile without a shard) the store lacks, or all of them for a template in
    /// `refetch` (its TileJSON changed upstream). A bit a tile, not a list of ids. With a shard,
    /// also each group's distinct tile count (counted on the way).
    private func missingTiles(_ groups: [TileGroup], refetch: Set<String>) throws -> ([TileBits], [Int]?) {
        var missing: [TileBits] = []
        var counts: [Int] = []
        var base = 0
        for group in groups {
            var bits = TileBits()
            let all = refetch.contains(group.tileSet.urlTemplate)
            let note = { (position: Int, isStored: Bool) in if !isStored || all { bits.insert(position) } }
            if let shardTiles {
                let count = try group.forEachTile(inOrdinals: shardTiles, base: base, store: store) { position, _, isStored in
                    note(position, isStored)
                }
                counts.append(count)
                base += count
            } else {
                // Every tile: no distinct count (a second walk of a merged cover) is needed.
                var position = 0
                try group.forEachTile(store: store) { _, isStored in
                    note(position, isStored)
                    position += 1
                }
            }
            missing.append(bits)
        }
        return (missing, shardTiles == nil ? nil : counts)
    }

    /// Runs one download and adds its statistics to the outcome; progress counts on from `progress`.
    private func download<I: IteratorProtocol>(_ requests: I, into outcome: inout ApplyOutcome, progress: inout DownloadProgress,
                                               onFailure: ((FetchRequest) -> Void)? = nil,
                                               sink: @escaping @Sendable ([FetchedItem]) throws -> Void) throws
        where I.Element == FetchRequest {
        var requests = requests
        let downloader = Downloader(fetcher: fetcher, configuration: configuration, sink: sink)
        let base = progress
        let report = onProgress
        downloader.onProgress = { step in
            report?(DownloadProgress(requested: base.requested, completed: base.completed + step.completed,
                                     succeeded: base.succeeded + step.succeeded, failed: base.failed + step.failed,
                                     bytes: base.bytes + step.bytes))
        }
        let failed = self.onFailure
        downloader.onFailure = { request, failure in
            onFailure?(request)
            failed?(request.url, failure.description)
        }
        let stats = try downloader.run(&requests)
        progress.completed += stats.succeeded + stats.failed
        progress.succeeded += stats.succeeded
        progress.failed += stats.failed
        progress.bytes += stats.bytes
        outcome.attempted += stats.requested
        outcome.downloaded += stats.succeeded
        outcome.missingTiles += stats.missingTiles
        if outcome.stopMessage == nil {
            outcome.stopMessage = stats.stopMessage
            outcome.stopURL = stats.stoppedBy?.url
            if case .changed? = stats.stoppedBy?.failure { outcome.stopIsTemporary = true }
        }
        record(stats, into: &outcome)
    }

    /// Adds what every download run counts (requests, retries, bytes, failures) to the outcome.
    private func record(_ stats: DownloadStats, into outcome: inout ApplyOutcome) {
        outcome.requested += stats.requested
        outcome.bytesDownloaded += stats.bytes
        outcome.retries += stats.retries
        for failure in stats.failures where outcome.failures.count < configuration.maxRecordedFailures {
            outcome.failures.append(ApplyOutcome.Failure(url: failure.url, reason: failure.failure.description))
        }
        outcome.failed += stats.failed
        for (reason, count) in stats.failureCounts { outcome.failureCounts[reason, default: 0] += count }
    }

    /// Revalidates expired content with its stored validators: a 304 keeps the bytes and moves
    /// the expiry on, a 200 replaces them (after verification, as any download).
    private func revalidate(before now: Int64, outcome: inout ApplyOutcome) throws {
        let requests = try store.expiredRequests(before: now)
        guard !requests.isEmpty else { return }
        let counts = Locked((notModified: 0, replaced: 0))
        let write = Self.handedToWriter { [store] items in try store.write(items) }
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { items in
            counts.withLock { counts in
                for item in items {
                    if item.body.isNotModified { counts.notModified += 1 } else { counts.replaced += 1 }
                }
            }
            try write(items)
        }
        let failed = self.onFailure
        downloader.onFailure = { request, failure in failed?(request.url, failure.description) }
        record(try downloader.run(requests), into: &outcome)
        let (notModified, replaced) = counts.withLock { $0 }
        outcome.revalidated += notModified
        outcome.refreshed += replaced
    }

    /// `write` as the sink of a download, which runs it on its writer thread.
    ///
    /// Why this is sound though the store and the assembler are not `Sendable` (SQLite
    /// connections, used by one thread at a time): `Downloader.run` hands every batch to the
    /// writer thread and joins it before it returns, and while it runs the applier's thread
    /// only runs the fetch loop, which does not touch them (failures reach the assembler through
    /// its `Locked` inbox). So they are used by one thread at a time, and the thread start and
    /// join order those uses.
    private static func handedToWriter(_ write: @escaping ([FetchedItem]) throws -> Void)
        -> @Sendable ([FetchedItem]) throws -> Void {
        nonisolated(unsafe) let write = write
        return { items in try write(items) }
    }

    /// Writes the styles and TileJSONs the plan was resolved from, unless the store already has
    /// the same bytes (so an apply with nothing to do writes nothing).
    private func writeDocuments(_ plan: Plan) throws {
        var items: [FetchedItem] = []
        var kinds: [String: ResourceKind] = [:]
        for region in plan.regions { for ref in region.resources.wanted { kinds[ref.url] = ref.kind } }
        for (url, body) in plan.documents.sorted(by: { $0.key < $1.key }) {
            guard let kind = kinds[url] else { continue }
            if try store.resourceData(url: url) == body.data { continue }
            items.append(FetchedItem(request: FetchRequest(url: url, kind: kind), body: body))
        }
        if !items.isEmpty { try store.write(items) }
    }
}

/// The tile requests of an apply, produced lazily: each group's tiles in turn, those whose
/// positions are in its `missing` bits.
struct WorkList: IteratorProtocol {
    let groups: [TileGroup]
    let missing: [TileBits]
    let shouldStop: @Sendable () -> Bool
    private var groupIndex = -1
    private var tiles: SortedUnion<TileCover>.Iterator?
    /// The current group's URL template, split once (it is expanded for every tile).
    private var template: TileURLTemplate.Compiled?
    private var position = 0
    private var left = 0

    init(groups: [TileGroup], missing: [TileBits], shouldStop: @escaping @Sendable () -> Bool) {
        self.groups = groups
        self.missing = missing
        self.shouldStop = shouldStop
    }

    mutating func next() -> FetchRequest? {
        if shouldStop() { return nil }
        while true {
            if left > 0, let tile = tiles?.next() {
                position += 1
                guard missing[groupIndex].contains(position - 1) else { continue }
                left -= 1
                let tileSet = groups[groupIndex].tileSet
                return tileSet.request(for: tile, template: template ?? TileURLTemplate.Compiled(tileSet.urlTemplate))
            }
            groupIndex += 1
            guard groupIndex < groups.count else { return nil }
            left = missing[groupIndex].count
            tiles = left > 0 ? groups[groupIndex].tiles.makeIterator() : nil
            if left > 0, template?.template != groups[groupIndex].tileSet.urlTemplate {
                template = TileURLTemplate.Compiled(groups[groupIndex].tileSet.urlTemplate)
            }
            position = 0
        }
    }
}
