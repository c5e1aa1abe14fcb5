import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import TileMath

/// The steps of `Planner.plan`: matching stored regions, removals, and counting downloads.
extension Planner {
    /// Gives each desired row the stored region it continues: the row the lock recorded for its
    /// key first, else one with the same definition and description. A matched row whose
    /// definition or description changed becomes an update. Returns the stored rows claimed and
    /// the updated rows that get a note on what devices do (made once their tiles are counted).
    static func matchStoredRegions(_ rows: inout [RegionPlan], stored storedRegions: [StoredRegion], input: PlanInput)
        -> (claimed: Set<Int64>, noted: [(row: Int, definitionChanged: Bool)]) {
        var claimed = Set<Int64>()
        let byID = Dictionary(uniqueKeysWithValues: storedRegions.map { ($0.rowID, $0) })
        var matches: [Int: StoredRegion] = [:]
        for i in rows.indices {
            if let id = input.lockedRows[rows[i].key], let stored = byID[id], !claimed.contains(id) {
                matches[i] = stored
                claimed.insert(id)
            }
        }
        for i in rows.indices where matches[i] == nil {
            if let stored = storedRegions.first(where: {
                !claimed.contains($0.rowID) && $0.definition == rows[i].definition
                    && ($0.description ?? Data()) == rows[i].description
            }) {
                matches[i] = stored
                claimed.insert(stored.rowID)
            }
        }
        var noted: [(row: Int, definitionChanged: Bool)] = []
        for (i, match) in matches.sorted(by: { $0.key < $1.key }) {
            rows[i].rowID = match.rowID
            rows[i].action = .keep
            let definitionChanged = match.definition != rows[i].definition
            if definitionChanged || (match.description ?? Data()) != rows[i].description {
                rows[i].action = .update
                noted.append((i, definitionChanged))
            }
        }
        return (claimed, noted)
    }

    /// The stored regions no desired row claimed: the apply removes them.
    static func removedRegions(_ storedRegions: [StoredRegion], claimed: Set<Int64>, input: PlanInput,
                               store: StoredRegions?) throws -> [RemovedRegion] {
        var removed: [RemovedRegion] = []
        let keysByRow = Dictionary(input.lockedRows.map { ($0.value, $0.key) }, uniquingKeysWith: min)
        for stored in storedRegions where !claimed.contains(stored.rowID) {
            let tiles = try store?.linkedTileCounts(region: stored.rowID).reduce(0) { $0 + $1.count } ?? 0
            let resources = try store?.linkedResources(region: stored.rowID).count ?? 0
            removed.append(RemovedRegion(rowID: stored.rowID, key: keysByRow[stored.rowID],
                                         tileCount: tiles, resourceCount: resources))
        }
        return removed
    }

    /// Counts the downloads, each tile once however many rows want it; the same pass counts the
    /// distinct tiles the store will hold, which limits.maxTiles, maxBytes and the Mapbox tile
    /// limit cap, and sets each row's byte estimate.
    ///
    /// A tile's size is, in order: the mean stored size of its template and zoom, the mean an
    /// origin archive measured (`originTileSizes`), or the size assumed for its source type;
    /// `bases` collects which were used, for the plan's note; the `maxBytes` refusals name them.
    static func countDownloads(_ rows: inout [RegionPlan], input: PlanInput, store: (StoredTiles & StoredSizes)?,
                               refetch: Set<String>, sharing: inout ContentSharing,
                               bases: inout Set<TileByteBasis>) throws -> (tiles: Int, bytes: Int64) {
        let types = templateTypes(input)
        // Mean sizes are read once per template, for all the zooms the rows want of it.
        var wantedZooms: [String: ClosedRange<Int>] = [:]
        for set in rows.flatMap(\.tileSets) {
            let zooms = wantedZooms[set.urlTemplate] ?? set.zooms
            wantedZooms[set.urlTemplate] = min(zooms.lowerBound, set.zooms.lowerBound)...max(zooms.upperBound, set.zooms.upperBound)
        }
        var meanSizes: [String: (zooms: ClosedRange<Int>, sizes: [Int: Double])] = [:]
        var used = Set<TileByteBasis>()
        func meanSize(_ template: String, _ z: Int) throws -> Double {
            let sizes: [Int: Double]
            if let cached = meanSizes[template], cached.zooms.contains(z) {
                sizes = cached.sizes
            } else {
                let zooms = wantedZooms[template].flatMap { $0.contains(z) ? $0 : nil } ?? z...z
                sizes = try store?.meanTileSizes(urlTemplate: template, zooms: zooms) ?? [:]
                meanSizes[template] = (zooms, sizes)
            }
            if let stored = sizes[z] {
                used.insert(.store)
                return stored
            }
            if let origin = input.originTileSizes[template], let measured = origin.sizes[z] {
                used.insert(.origin(origin.origin))
                return measured
            }
            let type = types[template] ?? .vector
            let assumed = assumedTileBytes(for: type, vectorBytes: input.assumedTileBytes)
            used.insert(.assumed(type == .raster || type == .rasterDEM ? type : .vector, assumed))
            return Double(assumed)
        }
        func basis() -> String { listed(used.sorted().map(\.text)) }
        defer { bases = used }
        var toDownload = 0
        var bytes: Int64 = 0
        var distinct = 0
        var mapboxTiles = 0
        var totalEstimate: Double = 0
        var perRowBytes = [Int64](repeating: 0, count: rows.count)
        let tileLimit = input.job.limits.maxTiles ?? defaultMaxTiles
        for group in Plan.tileGroups(rows) {
            let mean = try meanSize(group.tileSet.urlTemplate, group.zoom)
            let refetchAll = refetch.contains(group.tileSet.urlTemplate)
            let (inGroup, missing) = try countGroup(group, rows: rows, store: store, refetchAll: refetchAll, meanSize: mean,
                                                    sharing: &sharing)
            distinct += inGroup
            if distinct > tileLimit { throw tileLimitError(limit: tileLimit, job: input.job, found: grouped(distinct)) }
            if MapboxURL.isMapboxURL(group.tileSet.urlTemplate) { mapboxTiles += inGroup }
            toDownload += missing
            bytes += Int64((Double(missing) * mean).rounded())
            totalEstimate += Double(inGroup) * mean
            for member in group.rows {
                let added = rows[member].zoomChanges.first {
                    $0.urlTemplate == group.tileSet.urlTemplate && $0.zoom == group.zoom
                }?.counts.add ?? 0
                perRowBytes[member] += Int64((Double(added) * mean).rounded())
            }
        }
        for i in rows.indices { rows[i].estimatedBytes = perRowBytes[i] }
        try checkRegionLimits(rows, job: input.job, meanSize: meanSize, basis: basis)
        try checkMapboxTileLimit(mapboxTiles, job: input.job)
        if let maxBytes = input.job.limits.maxBytes, totalEstimate > Double(maxBytes) {
            throw PlanError.limitExceeded(
                "the store would hold an estimated \(ByteFormat.exact(Int64(totalEstimate))) of tiles "
                    + "(\(plural(distinct, "tile"))), over limits.maxBytes = \(ByteFormat.exact(maxBytes)); estimated from "
                    + "\(basis()); raise it or shrink the regions or zooms")
        }
        return (toDownload, bytes)
    }

    /// The distinct tiles of a group and how many of them the store lacks (all of them when the
    /// group's source is fetched again); adds the group's tiles to `sharing` by the rows wanting
    /// each: stored ones with their stored length, the others estimated at `meanSize`.
    static func countGroup(_ group: TileGroup, rows: [RegionPlan], store: StoredTiles?, refetchAll: Bool,
                           meanSize: Double, sharing: inout ContentSharing) throws -> (tiles: Int, missing: Int) {
        let onlyRow = group.areas.count == 1 ? group.rows[0] : nil
        if let onlyRow, store == nil || refetchAll {
            // Nothing stored (or everything refetched) and nothing to merge: the count is
            // arithmetic, a planet at z22 included.
            let count = group.cover(at: 0).count
            sharing.add([Int64(onlyRow)], kind: .tile, count: count, bytes: estimate(count, meanSize), estimated: true)
            return (count, count)
        }
        if let onlyRow, let store {
            // One cover: its count is arithmetic, and the store is asked what it holds of it.
            let cover = group.cover(at: 0)
            let stored = try group.tileSet.storedTotals(of: cover, in: store)
            let missing = cover.count - stored.count
            sharing.add([Int64(onlyRow)], kind: .tile, count: stored.count, bytes: stored.bytes)
            sharing.add([Int64(onlyRow)], kind: .tile, count: missing, bytes: estimate(missing, meanSize), estimated: true)
            return (cover.count, missing)
        }
        var inGroup = 0
        var missing = 0
        var tally = MembershipTally()
        try group.forEachTileWithMembers(store: store) { _, members, storedSize in
            inGroup += 1
            if let storedSize, !refetchAll {
                tally.add(members, storedBytes: storedSize)
            } else {
                missing += 1
                tally.add(members, storedBytes: nil)
            }
        }
        for (members, counts) in tally.final {
            let rowsOf = members.map { Int64(group.rows[$0]) }
            sharing.add(rowsOf, kind: .tile, count: counts.stored, bytes: counts.storedBytes)
            sharing.add(rowsOf, kind: .tile, count: counts.missing, bytes: estimate(counts.missing, meanSize), estimated: true)
        }
        return (inGroup, missing)
    }

    /// `count` tiles of `meanSize` bytes, rounded.
    static func estimate(_ count: Int, _ meanSize: Double) -> Int64 { Int64((Double(count) * meanSize).rounded()) }
}

/// Tiles of one group counted per set of members holding them: stored ones with their bytes,
/// missing ones by number. Consecutive tiles mostly share their members, so the last entry is
/// kept at hand.
struct MembershipTally {
    private var counts: [[Int]: (stored: Int, storedBytes: Int64, missing: Int)] = [:]
    private var last: [Int] = []
    private var running = (stored: 0, storedBytes: Int64(0), missing: 0)

    mutating func add(_ members: [Int], storedBytes: Int64?) {
        if members != last {
            flush()
            last = members
            running = counts[members] ?? (0, 0, 0)
        }
        if let storedBytes {
            running.stored += 1
            running.storedBytes += storedBytes
        } else {
            running.missing += 1
        }
    }

    private mutating func flush() {
        if !last.isEmpty { counts[last] = running }
    }

    /// The counts, the running entry included.
    var final: [[Int]: (stored: Int, storedBytes: Int64, missing: Int)] {
        var copy = self
        copy.flush()
        return copy.counts
    }
}
