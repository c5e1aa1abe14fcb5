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

    /// Told of the apply's phases, download progress, failed downloads and linked regions.
    public var observer: ApplyObserver = SilentApplyObserver()
    /// With a shard's share (`Shard.range(total:)` of the plan's distinct tiles), only the tiles
    /// whose canonical ordinals fall in it are downloaded and written; nil: every tile.
    public var shardTiles: Range<Int>?
    /// Polled before each new request: once it returns true no further download starts, the
    /// ones in flight finish and are written, and the apply links what it has and returns.
    public var shouldStop: @Sendable () -> Bool = { false }
    /// For plans with `"glyphs": "used"` rows: called once the tiles are in the staging store
    /// with the plan and the store, returns the glyph resources each row's labels need (by row
    /// key; every such row when `all`, as after a refresh). Nil: rows keep the resources planned.
    public var resolveGlyphs: ((Plan, StoredTiles, _ all: Bool) throws -> [String: [ResourceRef]])?

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
        let started = Date()
        observer.phase(.regions)
        let regionRows = try writeRegions(plan)
        observer.phase(.resources)
        try writeDocuments(plan)
        var run = try countDownloads(plan)
        run.outcome.regionRows = regionRows
        try download(run.resourceRequests.makeIterator(), into: &run, sink: stagingSink)

        observer.phase(.tiles)
        let assembler: CanonicalAssembler?
        let glyphScan = scansGlyphs(plan, building: builder != nil)
        if let builder, streams(plan, glyphScan: glyphScan) {
            assembler = try streamTiles(&run, into: builder)
        } else {
            try stageTiles(&run, glyphScan: glyphScan)
            assembler = try builder.map { try beginAssembly($0, run, downloads: run.groups.map { _ in TileBits() }) }
        }
        run.outcome.stopped = shouldStop()

        observer.phase(.links)
        run.outcome.removedRegions = plan.removedRegions.count
        if let assembler { try link(assembler, &run) }
        run.outcome.seconds = Date().timeIntervalSince(started)
        return run.outcome
    }

    /// What one apply carries from step to step: the plan (the glyph step adds the ranges it
    /// finds), the outcome it fills in, the download progress so far and what is to download.
    private struct ApplyState {
        var plan: Plan
        var outcome = ApplyOutcome()
        var progress: DownloadProgress
        /// The resources the staging store lacks, in key order.
        let resourceRequests: [FetchRequest]
        /// The plan's tile groups in canonical order, their positions to download, and (with a
        /// shard) their distinct tile counts.
        let groups: [TileGroup]
        let missing: [TileBits]
        let groupCounts: [Int]?
    }

    /// Counts what the apply downloads: the resources the staging store lacks, then the tiles.
    private func countDownloads(_ plan: Plan) throws -> ApplyState {
        var wanted: [String: ResourceRef] = [:]
        for region in plan.regions { for ref in region.resources.wanted { wanted[ref.url] = ref } }
        let resourceRequests = try missingRequests(wanted.values)
        let groups = CanonicalAssembler.canonicalOrder(plan.tileGroups)
        let (missing, groupCounts) = try missingTiles(groups, refetch: Set(plan.refetchTemplates))
        let tiles = missing.reduce(0) { $0 + $1.count }
        var state = ApplyState(plan: plan, progress: DownloadProgress(requested: resourceRequests.count + tiles, completed: 0,
                                                                        succeeded: 0, failed: 0, bytes: 0),
                               resourceRequests: resourceRequests, groups: groups, missing: missing, groupCounts: groupCounts)
        state.outcome.plannedResources = resourceRequests.count
        state.outcome.plannedTiles = tiles
        return state
    }

    /// The requests of those of `refs` the staging store lacks, in key order.
    private func missingRequests(_ refs: some Collection<ResourceRef>) throws -> [FetchRequest] {
        let stored = try store.storedResources(among: refs.map(\.url))
        return refs.filter { !stored.contains($0.url) }.sorted().map { FetchRequest(url: $0.url, kind: $0.kind) }
    }

    /// A download sink committing to the staging store. The store crosses to the writer thread:
    /// see `handedToWriter`.
    private var stagingSink: @Sendable ([FetchedItem]) throws -> Void {
        Self.handedToWriter { [store] items in try store.write(items) }
    }

    /// The tile requests, in canonical order. A fatal answer (401/403) to a resource stops the
    /// run before any tile is requested.
    private func tileRequests(_ run: ApplyState) -> WorkList {
        let halted = run.outcome.stopMessage != nil, stop = shouldStop
        return WorkList(groups: run.groups, missing: run.missing, shouldStop: { halted || stop() })
    }

    /// Whether the glyph ranges of "used" rows are found at this apply, from the stored tiles'
    /// labels: for rows the plan left them to, and for every such row after a refresh.
    private func scansGlyphs(_ plan: Plan, building: Bool) -> Bool {
        building && resolveGlyphs != nil
            && (plan.regions.contains(where: \.glyphsAtApply)
                || (plan.refresh != nil && plan.stylePacks.contains { $0.glyphDemand != nil }))
    }

    /// Whether tiles stream into the canonical file as they arrive. Streaming needs the staging
    /// store final before the walk reads it; a refresh rewrites staged rows afterwards, and the
    /// glyph ranges of "used" rows are known only once their tiles are stored (resources come
    /// first in the file), so then the file is assembled once the downloads are done, all from
    /// the staging store.
    private func streams(_ plan: Plan, glyphScan: Bool) -> Bool {
        plan.refresh == nil && !glyphScan
    }

    /// An assembler of the canonical file through `builder`, begun; `downloads` are the tile
    /// positions it waits for (none when the staging store already holds every download).
    private func beginAssembly(_ builder: CanonicalStoreBuilder, _ run: ApplyState, downloads: [TileBits]) throws
        -> CanonicalAssembler {
        let limits = CanonicalAssembler.Limits(spillSeconds: configuration.flushWindow, clock: configuration.clock)
        let assembler = CanonicalAssembler(builder: builder, staging: store, plan: run.plan, groups: run.groups,
                                           downloads: downloads, limits: limits, shard: shardTiles,
                                           groupCounts: run.groupCounts)
        try assembler.begin()
        return assembler
    }

    /// Downloads the tiles straight into the canonical file, which the assembler writes in key
    /// order as they arrive (spilling to the staging store what has to wait).
    private func streamTiles(_ run: inout ApplyState, into builder: CanonicalStoreBuilder) throws -> CanonicalAssembler {
        let tiles = tileRequests(run)
        let assembler = try beginAssembly(builder, run, downloads: run.missing)
        let failures = assembler.failures
        // The assembler crosses to the writer thread: see `handedToWriter`.
        try download(tiles, into: &run, onFailure: { failures.note($0) },
                     sink: Self.handedToWriter { items in try assembler.receive(items) })
        return assembler
    }

    /// Downloads the tiles into the staging store, then revalidates expired content (with a
    /// refresh) and fetches the glyph ranges the stored tiles' labels need (with `glyphScan`).
    private func stageTiles(_ run: inout ApplyState, glyphScan: Bool) throws {
        try download(tileRequests(run), into: &run, sink: stagingSink)
        if let refresh = run.plan.refresh {
            observer.phase(.refresh)
            try revalidate(before: refresh.before, outcome: &run.outcome)
        }
        if glyphScan { try fetchUsedGlyphs(&run) }
    }

    /// Finds the glyph ranges the stored tiles' labels need, adds them to the plan and downloads
    /// those the staging store lacks; nothing when the run has stopped.
    private func fetchUsedGlyphs(_ run: inout ApplyState) throws {
        guard let resolveGlyphs, run.outcome.stopMessage == nil, !shouldStop() else { return }
        observer.phase(.glyphs)
        let found = try resolveGlyphs(run.plan, store, run.plan.refresh != nil)
        run.plan.resolveGlyphs(found)
        run.outcome.glyphResources = found
        let requests = try missingRequests(Set(found.values.flatMap { $0 }))
        run.outcome.plannedResources += requests.count
        run.progress.requested += requests.count
        try download(requests.makeIterator(), into: &run, sink: stagingSink)
    }

    /// Finishes the canonical file (its links) and records what it holds: pruned and linked
    /// counts, and each region's row, tiles and completeness.
    private func link(_ assembler: CanonicalAssembler, _ run: inout ApplyState) throws {
        let summary = try assembler.finish()
        let counts = try store.rowCounts()
        run.outcome.prunedTiles = max(0, counts.tiles - summary.stagingTilesUsed)
        run.outcome.prunedResources = max(0, counts.resources - summary.resourcesWritten)
        run.outcome.linkedTiles = summary.linkedTiles.reduce(0, +)
        run.outcome.tileSharing = summary.tileSharing
        for (index, region) in run.plan.regions.enumerated() {
            if summary.incomplete[index] { run.outcome.incompleteRegions.append(region.key) }
            // The new file numbers region rows in plan order.
            run.outcome.regionRows[region.key] = Int64(index + 1)
            observer.regionLinked(key: region.key, linkedTiles: summary.linkedTiles[index],
                                  wantedTiles: region.zoomChanges.reduce(0) { $0 + $1.counts.add + $1.counts.keep },
                                  complete: !summary.incomplete[index])
        }
        // A row whose glyph ranges were left to this apply and not found (it stopped first)
        // lacks them: it is not complete, so the next plan reads its tiles and fetches them.
        for region in run.plan.regions where region.glyphsAtApply && !run.outcome.incompleteRegions.contains(region.key) {
            run.outcome.incompleteRegions.append(region.key)
        }
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
    private func download<I: IteratorProtocol>(_ requests: I, into run: inout ApplyState,
                                               onFailure: ((FetchRequest) -> Void)? = nil,
                                               sink: @escaping @Sendable ([FetchedItem]) throws -> Void) throws
        where I.Element == FetchRequest {
        var requests = requests
        let downloader = Downloader(fetcher: fetcher, configuration: configuration, sink: sink)
        let base = run.progress
        let observer = self.observer
        downloader.onProgress = { step in
            observer.downloads(DownloadProgress(requested: base.requested, completed: base.completed + step.completed,
                                                succeeded: base.succeeded + step.succeeded, failed: base.failed + step.failed,
                                                bytes: base.bytes + step.bytes))
        }
        downloader.onFailure = { request, failure in
            onFailure?(request)
            observer.failed(url: request.url, reason: failure.description)
        }
        let stats = try downloader.run(&requests)
        run.progress.completed += stats.succeeded + stats.failed
        run.progress.succeeded += stats.succeeded
        run.progress.failed += stats.failed
        run.progress.bytes += stats.bytes
        run.outcome.attempted += stats.requested
        run.outcome.downloaded += stats.succeeded
        run.outcome.missingTiles += stats.missingTiles
        if run.outcome.stopMessage == nil {
            run.outcome.stopMessage = stats.stopMessage
            run.outcome.stopURL = stats.stoppedBy?.url
            if case .changed? = stats.stoppedBy?.failure { run.outcome.stopIsTemporary = true }
        }
        record(stats, into: &run.outcome)
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
        let observer = self.observer
        downloader.onFailure = { request, failure in observer.failed(url: request.url, reason: failure.description) }
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
