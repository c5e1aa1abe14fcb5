import Foundation
import ProvisionModel
import TileMath

/// Carries out a plan against a store: downloads what is missing, links region rows to their
/// tiles and resources, removes what the job dropped. It never re-plans: every tile it touches
/// comes from the plan's covers.
///
/// Order matters for kill safety. Content is written before it is linked, and rows are removed
/// last, so a store killed at any point holds a committed state: downloaded-but-unlinked tiles
/// are ambient rows the next apply finds and links without fetching them again.
public final class Applier {
    private let store: ResourceStore
    private let fetcher: Fetcher
    private let configuration: Downloader.Configuration

    /// Called with download progress on the downloading thread.
    public var onProgress: ((DownloadProgress) -> Void)?
    /// Called with a short description of each phase.
    public var onPhase: ((String) -> Void)?
    /// Called after a region row is linked: its key, tiles linked, tiles wanted, and whether it
    /// is complete.
    public var onRegion: ((String, Int, Int, Bool) -> Void)?
    /// Polled before each new request: once it returns true no further download starts, the
    /// ones in flight finish and are written, and the apply links what it has and returns.
    public var shouldStop: @Sendable () -> Bool = { false }

    /// An applier writing to `store` and downloading through `fetcher`.
    public init(store: ResourceStore, fetcher: Fetcher, configuration: Downloader.Configuration = Downloader.Configuration()) {
        self.store = store
        self.fetcher = fetcher
        self.configuration = configuration
    }

    /// Applies `plan`. Failed downloads do not stop the apply: they leave their regions
    /// incomplete, which the outcome reports. Store errors are thrown.
    public func apply(_ plan: Plan) throws -> ApplyOutcome {
        let started = Date()
        var outcome = ApplyOutcome()

        onPhase?("regions")
        var rowIDs: [Int64] = []
        for region in plan.regions {
            if let rowID = region.rowID {
                if region.action == .update {
                    try store.updateRegion(rowID, definition: region.definition, description: region.description)
                }
                rowIDs.append(rowID)
            } else {
                rowIDs.append(try store.insertRegion(definition: region.definition, description: region.description))
            }
            outcome.regionRows[region.key] = rowIDs.last
        }

        onPhase?("resources")
        try writeDocuments(plan)
        var wanted: [String: ResourceRef] = [:]
        for region in plan.regions { for ref in region.resources.wanted { wanted[ref.url] = ref } }
        let stored = try store.storedResources(among: Array(wanted.keys))
        let resourceRequests = wanted.values.filter { !stored.contains($0.url) }.sorted()
            .map { FetchRequest(url: $0.url, kind: $0.kind) }

        onPhase?("tiles")
        let groups = plan.tileGroups
        var missing: [[TileID]] = []
        let refetch = Set(plan.refetchTemplates)
        for group in groups {
            var tiles: [TileID] = []
            let all = refetch.contains(group.tileSet.urlTemplate)  // its TileJSON changed upstream
            try group.forEachTile(store: store) { tile, isStored in
                if !isStored || all { tiles.append(tile) }
            }
            missing.append(tiles)
        }
        var requests = WorkList(resources: resourceRequests, groups: groups, missing: missing, shouldStop: shouldStop)
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { [store] items in
            try store.write(items)
        }
        let total = requests.count
        let report = onProgress
        downloader.onProgress = { progress in
            var progress = progress
            progress.requested = total
            report?(progress)
        }
        let stats = try downloader.run(&requests)
        outcome.requested = stats.requested
        outcome.downloaded = stats.succeeded
        outcome.bytesDownloaded = stats.bytes
        outcome.retries = stats.retries
        for failure in stats.failures {
            outcome.failures.append(ApplyOutcome.Failure(url: failure.url, reason: failure.failure.description))
        }
        outcome.failed = stats.failed
        outcome.failureCounts = stats.failureCounts
        outcome.stopped = shouldStop()
        outcome.missingTiles = stats.missingTiles
        outcome.stopMessage = stats.stopMessage

        if let refresh = plan.refresh {
            onPhase?("refresh")
            try revalidate(before: refresh.before, outcome: &outcome)
        }

        onPhase?("links")
        for (index, region) in plan.regions.enumerated() {
            let rowID = rowIDs[index]
            let complete = try link(region, rowID: rowID, outcome: &outcome)
            if !complete { outcome.incompleteRegions.append(region.key) }
            if let onRegion {
                let linked = try store.linkedTileCounts(region: rowID).reduce(0) { $0 + $1.count }
                let wanted = region.zoomChanges.reduce(0) { $0 + $1.counts.add + $1.counts.keep }
                onRegion(region.key, linked, wanted, complete)
            }
        }

        onPhase?("cleanup")
        let removed = plan.removedRegions.map(\.rowID)
        if !removed.isEmpty { try store.deleteRegions(removed) }
        outcome.removedRegions = removed.count
        let pruned = try store.pruneOrphans()
        outcome.prunedTiles = pruned.tiles
        outcome.prunedResources = pruned.resources
        outcome.seconds = Date().timeIntervalSince(started)
        return outcome
    }

    /// Revalidates expired content with its stored validators: a 304 keeps the bytes and moves
    /// the expiry on, a 200 replaces them (after verification, as any download).
    private func revalidate(before now: Int64, outcome: inout ApplyOutcome) throws {
        let requests = try store.expiredRequests(before: now)
        guard !requests.isEmpty else { return }
        let counts = RevalidationCounts()
        let downloader = Downloader(fetcher: fetcher, configuration: configuration) { [store] items in
            counts.add(items)
            try store.write(items)
        }
        let stats = try downloader.run(requests)
        outcome.revalidated += counts.notModified
        outcome.refreshed += counts.replaced
        outcome.requested += stats.requested
        outcome.retries += stats.retries
        outcome.bytesDownloaded += stats.bytes
        for failure in stats.failures where outcome.failures.count < 100 {
            outcome.failures.append(ApplyOutcome.Failure(url: failure.url, reason: failure.failure.description))
        }
        outcome.failed += stats.failed
        for (reason, count) in stats.failureCounts { outcome.failureCounts[reason, default: 0] += count }
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

    /// Links a row to every stored tile and resource it wants and unlinks what it no longer
    /// wants; returns whether everything it wants is linked.
    private func link(_ region: RegionPlan, rowID: Int64, outcome: inout ApplyOutcome) throws -> Bool {
        var complete = true
        var wantedSets = Set<String>()
        for set in region.tileSets {
            for z in set.zooms {
                wantedSets.insert("\(z) \(set.urlTemplate)")
                var batch: [TileKey] = []
                batch.reserveCapacity(TileGroup.lookupBatch)
                for tile in TileCover(region.area, zoom: z) {
                    batch.append(set.key(for: tile))
                    if batch.count == TileGroup.lookupBatch {
                        outcome.linkedTiles += try store.linkTiles(batch, toRegion: rowID)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { outcome.linkedTiles += try store.linkTiles(batch, toRegion: rowID) }
            }
            // Then, in one pass over the row's links of this template: unlink what the row no
            // longer wants (tiles outside the cover, or at another ratio) and check completeness.
            let linkedByZoom = try store.linkedTileKeysByZoom(region: rowID, urlTemplate: set.urlTemplate)
            for z in set.zooms {
                let cover = TileCover(region.area, zoom: z)
                let linked = linkedByZoom[z] ?? []
                let stale = linked.filter { key in
                    let geographic = set.isTMS ? TileID(z: key.tile.z, x: key.tile.x, y: key.tile.tmsY) : key.tile
                    return key.pixelRatio != set.pixelRatio || !cover.contains(geographic)
                }
                if !stale.isEmpty { try store.unlinkTiles(stale, fromRegion: rowID) }
                if linked.count - stale.count < cover.count { complete = false }
            }
        }
        for count in try store.linkedTileCounts(region: rowID) where !wantedSets.contains("\(count.zoom) \(count.urlTemplate)") {
            let linked = try store.linkedTileKeysByZoom(region: rowID, urlTemplate: count.urlTemplate)[count.zoom] ?? []
            try store.unlinkTiles(linked, fromRegion: rowID)
        }

        let urls = region.resources.wanted.map(\.url)
        try store.linkResources(urls, toRegion: rowID)
        try store.unlinkResources(fromRegion: rowID, keeping: Set(urls))
        if try store.linkedResources(region: rowID).count < Set(urls).count { complete = false }
        return complete
    }
}

/// The requests of an apply, produced lazily: resources first, then each group's missing tiles.
struct WorkList: IteratorProtocol {
    let resources: [FetchRequest]
    let groups: [TileGroup]
    let missing: [[TileID]]
    let shouldStop: @Sendable () -> Bool
    private var resourceIndex = 0
    private var groupIndex = 0
    private var tileIndex = 0

    init(resources: [FetchRequest], groups: [TileGroup], missing: [[TileID]], shouldStop: @escaping @Sendable () -> Bool) {
        self.resources = resources
        self.groups = groups
        self.missing = missing
        self.shouldStop = shouldStop
    }

    /// The total number of requests.
    var count: Int { resources.count + missing.reduce(0) { $0 + $1.count } }

    mutating func next() -> FetchRequest? {
        if shouldStop() { return nil }
        if resourceIndex < resources.count {
            resourceIndex += 1
            return resources[resourceIndex - 1]
        }
        while groupIndex < groups.count {
            if tileIndex < missing[groupIndex].count {
                tileIndex += 1
                return groups[groupIndex].tileSet.request(for: missing[groupIndex][tileIndex - 1])
            }
            groupIndex += 1
            tileIndex = 0
        }
        return nil
    }
}

/// 304 and 200 answers to revalidation, counted on the writer thread.
final class RevalidationCounts: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var notModified = 0
    private(set) var replaced = 0

    func add(_ items: [FetchedItem]) {
        lock.lock()
        defer { lock.unlock() }
        for item in items {
            if item.body.isNotModified { notModified += 1 } else { replaced += 1 }
        }
    }
}
