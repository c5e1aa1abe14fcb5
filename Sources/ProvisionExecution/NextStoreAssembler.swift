import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Assembles the next file of an apply while its tiles download: walks every tile the
/// regions want in key order and hands each to the builder once, from memory when it was just
/// downloaded, else from the staging store (kept from before, or downloaded earlier and spilled).
///
/// Why: the next file (row ids and pages in key order, so every history gives the same
/// bytes) used to be a copy of the finished staging file, which wrote and read every byte of the
/// store twice more after the downloads. Downloads are requested in key order and finish nearly
/// in that order, so most go straight into the next file.
///
/// Kill safety: the builder commits once the oldest row it has not committed is `spillSeconds`
/// old (by the clock of `Limits`; batches come at least that often, empty when the writer is
/// idle), and a body that cannot be written yet (a tile before it is still downloading) is kept
/// in memory at most `spillSeconds`, or until `spillBytes` are waiting, and is then written to
/// the staging store. So a finished download is committed to one of the two files within about
/// that time; `ProvisionStore` takes a killed apply's next file back into the store
/// (`takeInPartialBuild`), and the next apply finds every committed tile stored.
///
/// Not thread-safe: `receive` and `finish` run on the writer thread; `failures` may be
/// noted from any thread.
final class NextStoreAssembler {
    /// How long and how much finished downloads may wait in memory before they are spilled.
    struct Limits {
        var spillSeconds: Double = 0.1
        var spillBytes: Int = 16 << 20
        /// Where the age of a waiting download is read.
        var clock: any MonotonicClock = SystemClock()
    }

    /// What the walk did, for the outcome.
    struct Summary {
        /// Tile links written per region (plan order).
        var linkedTiles: [Int] = []
        /// The linked tiles summed per set of region rows linking them, with their stored bytes.
        var tileSharing = ContentSharing()
        /// Regions (plan order) missing a tile or resource they want.
        var incomplete: [Bool] = []
        /// Resources written (all from the staging store).
        var resourcesWritten = 0
        /// Staging rows that went into the file (or were replaced by a new download).
        var stagingTilesUsed = 0
    }

    private enum Resolution {
        case body(FetchedItem)
        case spilled
        case failed
    }

    /// One tile of the walk, in stored-key order.
    private struct Entry {
        var tile: TileID
        var key: TileKey
        var isDownload: Bool
        /// The tile's ordinal in the key order of all the plan's tiles.
        var ordinal = 0
    }

    private let builder: NextStoreBuilder
    private let staging: StagingStore
    private let plan: Plan
    private let groups: [TileGroup]
    private let downloads: [TileBits]
    private let limits: Limits
    /// The ordinals of the tiles this store holds (a shard's share); nil: all of them.
    private let shard: Range<Int>?
    /// Each group's distinct tile count, when known.
    private let groupCounts: [Int]?
    /// The ordinal of the next tile the walk loads.
    private var nextOrdinal = 0
    /// Per region (plan order), the tiles of the shard it wants, by template and zoom.
    private var wantedCounts: [[String: Int]]
    /// Per member of the current group, the shard's tiles it wants so far.
    private var groupWanted: [Int] = []
    /// Downloads that failed for good, noted by the downloading thread.
    let failures = FailureInbox()

    private var regionIDs: [Int64] = []
    private var resourceIDs: [String: Int64] = [:]
    private var tileLinks: [IDRuns]
    /// Tiles linked by the same region rows one after another (`members`), summed before they are
    /// added to `summary.tileSharing`: neighbouring tiles mostly belong to the same regions.
    private var sharingRun = SharingRun()
    private var linkedCounts: [[String: Int]]
    private(set) var summary = Summary()

    // The walk.
    private var groupIndex = -1
    private var tiles: SortedUnion<TileCover>.Iterator?
    private var lookahead: TileID?
    /// The position (in the group's ascending order) of the next tile the walk loads.
    private var groupPosition = 0
    private var column: [Entry] = []
    /// The tiles of the column being loaded, ascending.
    private var columnTiles: [TileID] = []
    private var columnIndex = 0
    private var covers: [TileCover] = []
    /// Tiles linked so far in the current group, per entry of its `rows`.
    private var groupLinked: [Int] = []
    private var walkedTo: (x: Int, y: Int)?

    // The staging rows of the current group, read ahead in chunks.
    private var stagingRows: [StoredTileRow] = []
    private var stagingIndex = 0
    private var stagingAfter: (x: Int, y: Int)?
    private var stagingDone = false

    // Finished downloads not yet written.
    private var resolved: [TileKey: Resolution] = [:]
    private var waiting: [(key: TileKey, since: UInt64)] = []
    private var waitingHead = 0
    private var waitingBytes = 0
    /// When the oldest row not yet committed was written (`limits.clock`); nil: all committed.
    ///
    /// Why not a commit per batch: a commit rewrites the last page of the table and of each index
    /// and journals them, which at a batch per few hundred tiles doubled the file writes.
    private var uncommittedSince: UInt64?

    /// An assembler of `groups` (in key order), of which the tiles at the positions in
    /// `downloads` (per group, in its ascending order) are being downloaded; with `shard`, only the tiles whose canonical
    /// ordinals fall in it are written, and a region is complete when it has all of those.
    ///
    /// `groupCounts`, each group's distinct tile count when the caller knows it, lets a shard's
    /// walk pass over the groups outside its range without stepping through their tiles.
    init(builder: NextStoreBuilder, staging: StagingStore, plan: Plan, groups: [TileGroup], downloads: [TileBits],
         limits: Limits = Limits(), shard: Range<Int>? = nil, groupCounts: [Int]? = nil) {
        self.shard = shard
        self.groupCounts = groupCounts
        wantedCounts = Array(repeating: [:], count: plan.regions.count)
        self.builder = builder
        self.staging = staging
        self.plan = plan
        self.groups = groups
        self.downloads = downloads
        self.limits = limits
        tileLinks = Array(repeating: IDRuns(), count: plan.regions.count)
        linkedCounts = Array(repeating: [:], count: plan.regions.count)
    }

    /// The groups of a plan in key order: template (bytes), pixel ratio, zoom.
    static func keyOrder(_ groups: [TileGroup]) -> [TileGroup] {
        Plan.keyOrder(groups)
    }

    /// Writes the region rows (ids in plan order) and the stored resources they want.
    func begin() throws {
        for region in plan.regions {
            regionIDs.append(try builder.addRegion(definition: region.definition, description: region.description))
        }
        let wanted = Set(plan.regions.flatMap { $0.resources.wanted.map(\.url) })
        for row in try staging.resourceRows(urls: Array(wanted)) {
            resourceIDs[row.url] = try builder.addResource(row)
        }
        summary.resourcesWritten = resourceIDs.count
        try builder.commit()
    }

    /// Takes a batch of finished downloads (possibly empty: the writer was idle), writes what
    /// the walk can, spills what waited too long, and commits.
    func receive(_ items: [FetchedItem]) throws {
        let now = limits.clock.now
        for item in items {
            guard let key = item.request.tileKey else { continue }
            resolved[key] = .body(item)
            waiting.append((key, now))
            waitingBytes += item.body.data.count + (item.body.zlibData?.count ?? 0)
        }
        for key in failures.drain() where resolved[key] == nil { resolved[key] = .failed }
        try walk(finishing: false)
        try spillIfDue(now: now)
        if let since = uncommittedSince, Double(limits.clock.now &- since) / 1e9 >= limits.spillSeconds {
            try builder.commit()
            uncommittedSince = nil
        }
    }

    /// Finishes the walk (a download never answered counts as failed), writes the links and
    /// returns what was done.
    func finish() throws -> Summary {
        for key in failures.drain() where resolved[key] == nil { resolved[key] = .failed }
        try walk(finishing: true)
        for (index, region) in plan.regions.enumerated() {
            let ids = Set(region.resources.wanted.compactMap { resourceIDs[$0.url] }).sorted()
            try builder.linkResources(ids, toRegion: regionIDs[index])
            var complete = ids.count == Set(region.resources.wanted.map(\.url)).count
            for set in region.tileSets {
                for z in set.zooms {
                    let key = countKey(set, z)
                    let wanted = shard == nil ? set.cover(of: region.area, zoom: z).count : wantedCounts[index][key] ?? 0
                    if linkedCounts[index][key] ?? 0 < wanted { complete = false }
                }
            }
            summary.incomplete.append(!complete)
        }
        for (index, ids) in tileLinks.enumerated() {
            try builder.linkTiles(ids, toRegion: regionIDs[index])
            summary.linkedTiles.append(ids.count)
        }
        sharingRun.flush(into: &summary.tileSharing)
        tileLinks = []
        return summary
    }

    // MARK: The walk

    /// Writes tiles in key order until one still downloading is reached (or, finishing, to the end).
    private func walk(finishing: Bool) throws {
        while let entry = try currentEntry() {
            if let shard, !shard.contains(entry.ordinal) {
                columnIndex += 1
                continue
            }
            var fresh: FetchedItem?
            if entry.isDownload {
                switch resolved.removeValue(forKey: entry.key) {
                case .body(let item):
                    fresh = item
                    waitingBytes -= item.body.data.count + (item.body.zlibData?.count ?? 0)
                case nil where !finishing:
                    return
                default:
                    break
                }
            }
            let stored = try stagingRow(at: entry.key.tile)
            var id: Int64?
            if let fresh {
                id = try builder.addTile(entry.key, body: fresh.body)
            } else if let stored {
                id = try builder.addTile(stored)
            }
            if stored != nil { summary.stagingTilesUsed += 1 }
            if let id { link(entry, id: id) }
            if shard != nil { countWanted(entry) }
            walkedTo = (entry.key.tile.x, entry.key.tile.y)
            columnIndex += 1
        }
    }

    /// The next tile of the walk, moving on to the next column or group when needed; nil at the end.
    private func currentEntry() throws -> Entry? {
        while columnIndex >= column.count {
            if !loadColumn() {
                countGroupLinks()
                groupIndex += 1
                guard groupIndex < groups.count else { return nil }
                startGroup()
            }
        }
        return column[columnIndex]
    }

    private func startGroup() {
        let group = groups[groupIndex]
        if let shard, let count = groupCounts?[groupIndex], !(nextOrdinal..<(nextOrdinal + count)).overlaps(shard) {
            // None of its tiles is the shard's: its ordinals are passed over, its tiles not walked.
            nextOrdinal += count
            lookahead = nil
            tiles = nil
        } else {
            var iterator = group.tiles.makeIterator()
            lookahead = iterator.next()
            tiles = iterator
        }
        groupPosition = 0
        covers = group.rows.count > 1 ? group.covers : []
        groupLinked = Array(repeating: 0, count: group.rows.count)
        groupWanted = Array(repeating: 0, count: group.rows.count)
        walkedTo = nil
        stagingRows = []
        stagingIndex = 0
        stagingAfter = nil
        stagingDone = false
    }

    /// Reads the next column of the current group (its tiles in stored order: a TMS set stores
    /// y from the south, so its columns are walked bottom-up); false when the group is done.
    private func loadColumn() -> Bool {
        column.removeAll(keepingCapacity: true)
        columnIndex = 0
        guard groupIndex >= 0, let first = lookahead else { return false }
        let group = groups[groupIndex]
        let wanted = downloads[groupIndex]
        columnTiles.removeAll(keepingCapacity: true)
        var tile = first
        while true {
            columnTiles.append(tile)
            lookahead = tiles?.next()
            guard let next = lookahead, next.x == first.x else { break }
            tile = next
        }
        let start = groupPosition
        groupPosition += columnTiles.count
        let ordinals = nextOrdinal..<(nextOrdinal + columnTiles.count)
        nextOrdinal = ordinals.upperBound
        // A column outside the shard gets no entries (the walk would pass over each).
        if let shard, !ordinals.overlaps(shard) { return true }
        for (offset, tile) in columnTiles.enumerated() {
            column.append(Entry(tile: tile, key: group.tileSet.key(for: tile), isDownload: wanted.contains(start + offset)))
        }
        if group.tileSet.isTMS { column.reverse() }
        for index in column.indices { column[index].ordinal = ordinals.lowerBound + index }
        return true
    }

    /// The staging row at stored tile `tile` of the current group, if there is one; rows before
    /// it are passed over (they belong to no region now and are left out).
    private func stagingRow(at tile: TileID) throws -> StoredTileRow? {
        let group = groups[groupIndex]
        while true {
            if stagingIndex == stagingRows.count {
                if stagingDone { return nil }
                stagingRows = try staging.tileRows(urlTemplate: group.tileSet.urlTemplate, pixelRatio: group.tileSet.pixelRatio,
                                                   zoom: group.zoom, after: stagingAfter, limit: 512)
                stagingIndex = 0
                stagingDone = stagingRows.count < 512
                if let last = stagingRows.last { stagingAfter = (last.key.tile.x, last.key.tile.y) }
                if stagingRows.isEmpty { return nil }
            }
            let row = stagingRows[stagingIndex]
            let rowKey = (row.key.tile.x, row.key.tile.y), wanted = (tile.x, tile.y)
            if rowKey > wanted { return nil }
            stagingIndex += 1
            if rowKey == wanted { return row }
        }
    }

    /// Counts a tile of the shard for the member rows whose cover has it (each row once).
    private func countWanted(_ entry: Entry) {
        let group = groups[groupIndex]
        var counted: [Int] = []
        for (index, row) in group.rows.enumerated() where !counted.contains(row) {
            if !covers.isEmpty && !covers[index].contains(entry.tile) { continue }
            counted.append(row)
            groupWanted[index] += 1
        }
    }

    private func link(_ entry: Entry, id: Int64) {
        let group = groups[groupIndex]
        if uncommittedSince == nil { uncommittedSince = limits.clock.now }
        sharingRun.startTile()
        for (index, row) in group.rows.enumerated() {
            if !covers.isEmpty && !covers[index].contains(entry.tile) { continue }
            if tileLinks[row].last == id { continue }  // a row listing the same tile set twice
            tileLinks[row].append(id)
            groupLinked[index] += 1
            sharingRun.addMember(regionIDs[row])
        }
        sharingRun.endTile(bytes: builder.lastTileBytes, into: &summary.tileSharing)
    }

    /// Adds the current group's link counts to its rows' totals.
    private func countGroupLinks() {
        guard groupIndex >= 0, groupIndex < groups.count else { return }
        let group = groups[groupIndex]
        for (index, row) in group.rows.enumerated() {
            linkedCounts[row][countKey(group.tileSet, group.zoom), default: 0] += groupLinked[index]
            wantedCounts[row][countKey(group.tileSet, group.zoom), default: 0] += groupWanted[index]
        }
        groupLinked = []
        groupWanted = []
    }

    private func countKey(_ set: PlannedTileSet, _ z: Int) -> String {
        "\(z)\u{0}\(set.pixelRatio)\u{0}\(set.urlTemplate)"
    }

    // MARK: Spilling

    /// Writes the downloads still waiting to the staging store when the oldest has waited
    /// `spillSeconds` or they hold `spillBytes`.
    private func spillIfDue(now: UInt64) throws {
        while waitingHead < waiting.count, !isWaiting(waiting[waitingHead].key) { waitingHead += 1 }
        guard waitingHead < waiting.count else {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
            return
        }
        let age = Double(now &- waiting[waitingHead].since) / 1e9
        guard age >= limits.spillSeconds || waitingBytes >= limits.spillBytes else {
            if waitingHead > 4096 {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
            return
        }
        var items: [FetchedItem] = []
        for (key, _) in waiting[waitingHead...] {
            if case .body(let item) = resolved[key] {
                items.append(item)
                resolved[key] = .spilled
            }
        }
        try staging.write(items)
        waiting.removeAll(keepingCapacity: true)
        waitingHead = 0
        waitingBytes = 0
        // The staging rows read ahead may lack what was just written: read again from here.
        stagingRows = []
        stagingIndex = 0
        stagingAfter = walkedTo
        stagingDone = false
    }

    private func isWaiting(_ key: TileKey) -> Bool {
        if case .body = resolved[key] { return true }
        return false
    }
}

/// Keys of downloads that failed, handed from the downloading thread to the writer thread.
struct FailureInbox: Sendable {
    private let keys = Mutex<[TileKey]>([])

    /// Notes a download that failed for good (any thread).
    func note(_ request: FetchRequest) {
        guard let key = request.tileKey else { return }
        keys.withLock { $0.append(key) }
    }

    /// The keys noted since the last call.
    func drain() -> [TileKey] {
        keys.withLock { keys in
            let drained = keys
            keys = []
            return drained
        }
    }
}

/// The run of consecutive linked tiles with the same region rows, summed before it goes into a
/// `ContentSharing` (one dictionary update per run instead of per tile).
struct SharingRun {
    private var members: [Int64] = []
    private var tileMembers: [Int64] = []
    private var count = 0
    private var bytes: Int64 = 0

    /// Begins the region rows of the next tile.
    mutating func startTile() { tileMembers.removeAll(keepingCapacity: true) }

    /// A region row linking the tile (kept ascending and distinct).
    mutating func addMember(_ region: Int64) {
        let at = tileMembers.firstIndex { $0 >= region } ?? tileMembers.endIndex
        if at < tileMembers.endIndex, tileMembers[at] == region { return }
        tileMembers.insert(region, at: at)
    }

    /// Ends the tile (of `bytes` stored bytes); a tile no region row links is not counted.
    mutating func endTile(bytes tileBytes: Int64, into sharing: inout ContentSharing) {
        guard !tileMembers.isEmpty else { return }
        if tileMembers != members {
            flush(into: &sharing)
            swap(&members, &tileMembers)
        }
        count += 1
        bytes += tileBytes
    }

    /// Adds the run so far to `sharing`.
    mutating func flush(into sharing: inout ContentSharing) {
        if count > 0 { sharing.add(members, kind: .tile, count: count, bytes: bytes) }
        count = 0
        bytes = 0
    }
}
