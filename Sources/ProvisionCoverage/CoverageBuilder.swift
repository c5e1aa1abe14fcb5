import Foundation
import ProvisionModel
import TileMath

/// What a coverage picture reads from a store: its region rows and, zoom by zoom, its links.
public protocol CoverageStore: AnyObject {
    /// Every region row, ordered by row id.
    func regions() throws -> [StoredRegion]
    /// The zooms at which any tile is linked to a region, ascending.
    func linkedZooms() throws -> [Int]
    /// Calls `body` with every tile linked to a region row at `zoom`, one call per link (the row
    /// id and the key with its geographic tile: the rows of `tmsTemplates`, counted from the south
    /// in the store, are flipped), ordered by column then geographic row. Reads through a cursor:
    /// memory does not grow with the links.
    func forEachLinkedTile(zoom: Int, tmsTemplates: Set<String>, _ body: (_ regionRowID: Int64, _ key: TileKey) throws -> Void) throws
}

/// Merges, zoom by zoom, the tiles regions want (their covers) with the tiles a store links to
/// them, into cells: the pure core of the coverage pictures.
///
/// Each zoom is one pass: the wanted covers are merged in tile order with a heap while the
/// store's links stream past in the same order, so each position is settled once, with every
/// region's stake in it, and handed to a `CellAggregator`. Memory holds one column per cover,
/// the heap and the cells, never the tiles.
struct CoverageBuilder {
    /// Whether links without a wish are removals (a plan) or simply present (an audit).
    enum Mode {
        case plan, audit
    }

    /// One tile set a region row wants: where its links are and its cover per zoom.
    struct Stream {
        var region: Int
        /// The store row whose links fulfil it; nil for a row not stored yet.
        var rowID: Int64?
        var template: String
        /// The pixel ratio of its links; nil accepts any (an audit, where the lock does not say).
        var pixelRatio: Int?
        var zooms: Set<Int>
        var cover: (Int) -> TileCover
    }

    var mode: Mode
    var regionCount: Int
    var streams: [Stream]
    /// The region (index) of each store row the picture knows.
    var rowRegions: [Int64: Int]
    var tmsTemplates: Set<String>

    /// The views of `zooms` (ascending), sharing `budget` cells: each view may use what is left
    /// divided by the views still to come, so sparse low zooms leave more to the dense high ones.
    func views(zooms: [Int], budget: Int, store: CoverageStore?) throws -> [CoverageView] {
        var views: [CoverageView] = []
        var left = budget
        for (i, zoom) in zooms.enumerated() {
            let view = try self.view(zoom: zoom, budget: max(1, left / (zooms.count - i)), store: store)
            left -= view.cells.count
            views.append(view)
        }
        return views
    }

    /// The view of one zoom with at most `budget` cells.
    func view(zoom: Int, budget: Int, store: CoverageStore?) throws -> CoverageView {
        let active = streams.indices.filter { streams[$0].zooms.contains(zoom) }
        var lookup: [StreamKey: [Int]] = [:]
        for (local, index) in active.enumerated() {
            guard let row = streams[index].rowID else { continue }
            lookup[StreamKey(row: row, template: streams[index].template, ratio: streams[index].pixelRatio ?? -1), default: []].append(local)
        }
        var assembler = PositionAssembler(zoom: zoom, budget: budget, mode: mode, regionCount: regionCount,
                                          streamRegions: active.map { streams[$0].region })
        var heads = TileHeap(active.map { streams[$0].cover(zoom).makeIterator() })
        let anyRatio = mode == .audit
        try store?.forEachLinkedTile(zoom: zoom, tmsTemplates: tmsTemplates) { rowID, link in
            while let (tile, stream) = heads.popIfNotAfter(link.tile) { assembler.wanted(tile, stream: stream) }
            guard let region = rowRegions[rowID] else { return }
            let key = StreamKey(row: rowID, template: link.urlTemplate, ratio: anyRatio ? -1 : link.pixelRatio)
            assembler.linked(link.tile, streams: lookup[key] ?? [], region: region)
        }
        while let (tile, stream) = heads.popIfNotAfter(nil) { assembler.wanted(tile, stream: stream) }
        return assembler.finish()
    }

    struct StreamKey: Hashable {
        var row: Int64
        var template: String
        var ratio: Int
    }
}

/// Settles each position once every wish and link at it has arrived (they come in tile order).
private struct PositionAssembler {
    let mode: CoverageBuilder.Mode
    let streamRegions: [Int]
    var aggregator: CellAggregator
    var tiles = StateCounts()
    var regionTiles: [StateCounts]

    private var current: TileID?
    private var wantedBy: [Bool]
    private var linkedBy: [Bool]
    private var touchedStreams: [Int] = []
    private var staleRegions: [Int] = []
    private var wantedCount: [Int]
    private var unlinkedCount: [Int]
    /// `[r]` for each region: the regions list of most positions, allocated once.
    private let singletons: [[Int]]
    private var touchedRegions: [Int] = []

    init(zoom: Int, budget: Int, mode: CoverageBuilder.Mode, regionCount: Int, streamRegions: [Int]) {
        self.mode = mode
        self.streamRegions = streamRegions
        aggregator = CellAggregator(zoom: zoom, budget: budget)
        regionTiles = [StateCounts](repeating: StateCounts(), count: regionCount)
        wantedBy = [Bool](repeating: false, count: streamRegions.count)
        linkedBy = wantedBy
        wantedCount = [Int](repeating: 0, count: regionCount)
        unlinkedCount = wantedCount
        singletons = (0..<regionCount).map { [$0] }
    }

    /// Stream `stream` wants `tile`.
    mutating func wanted(_ tile: TileID, stream: Int) {
        move(to: tile)
        if !wantedBy[stream] && !linkedBy[stream] { touchedStreams.append(stream) }
        wantedBy[stream] = true
    }

    /// The store links `tile` for `streams` (the wishes of its row, template and pixel ratio), or,
    /// when there are none, to `region` without a wish.
    mutating func linked(_ tile: TileID, streams: [Int], region: Int) {
        move(to: tile)
        if streams.isEmpty { staleRegions.append(region) }
        for stream in streams {
            if !wantedBy[stream] && !linkedBy[stream] { touchedStreams.append(stream) }
            linkedBy[stream] = true
        }
    }

    mutating func finish() -> CoverageView {
        settle()
        return CoverageView(zoom: aggregator.zoom, cellZoom: aggregator.zoom - aggregator.shift, cells: aggregator.result(),
                            tiles: tiles, regionTiles: regionTiles)
    }

    private mutating func move(to tile: TileID) {
        if let current, current != tile { settle() }
        current = tile
    }

    private mutating func settle() {
        guard let tile = current else { return }
        touchedRegions.removeAll(keepingCapacity: true)
        for stream in touchedStreams {
            let region = streamRegions[stream]
            if !touchedRegions.contains(region) { touchedRegions.append(region) }
            if wantedBy[stream] {
                wantedCount[region] += 1
                if !linkedBy[stream] { unlinkedCount[region] += 1 }
            }
            wantedBy[stream] = false
            linkedBy[stream] = false
        }
        for region in staleRegions where !touchedRegions.contains(region) { touchedRegions.append(region) }
        touchedStreams.removeAll(keepingCapacity: true)
        staleRegions.removeAll(keepingCapacity: true)
        current = nil
        guard !touchedRegions.isEmpty else { return }
        let regions = touchedRegions.count == 1 ? singletons[touchedRegions[0]] : touchedRegions.sorted()
        var change: CoverageState?
        for region in regions {
            let state: CoverageState
            if wantedCount[region] > 0 {
                state = unlinkedCount[region] == 0 ? .present : (mode == .plan ? .add : .missing)
            } else {
                state = mode == .plan ? .remove : .present
            }
            regionTiles[region][state] += 1
            if regions.count > 1 { regionTiles[region][.shared] += 1 }
            change = Self.combine(change, state)
            wantedCount[region] = 0
            unlinkedCount[region] = 0
        }
        let state = regions.count > 1 ? CoverageState.shared : (change ?? .present)
        tiles[state] += 1
        aggregator.add(x: tile.x, y: tile.y, state: state, change: regions.count > 1 ? change : nil, regions: regions)
    }

    /// What happens to a tile shared by regions: add when any region adds it, else missing,
    /// else present when any keeps it, else remove.
    static func combine(_ a: CoverageState?, _ b: CoverageState) -> CoverageState {
        guard let a else { return b }
        for state in [CoverageState.add, .missing, .present, .remove] where a == state || b == state { return state }
        return b
    }
}

/// A min-heap of tile iterators: the next tile over all of them, in tile order, with its iterator.
private struct TileHeap {
    private var iterators: [TileCover.Iterator]
    private var heap: [(tile: TileID, index: Int)] = []

    init(_ iterators: [TileCover.Iterator]) {
        self.iterators = iterators
        for i in self.iterators.indices {
            if let tile = self.iterators[i].next() { push((tile, i)) }
        }
    }

    /// Removes and returns the smallest head when it is not after `limit` (any head when nil).
    mutating func popIfNotAfter(_ limit: TileID?) -> (TileID, Int)? {
        guard let top = heap.first else { return nil }
        if let limit, limit < top.tile { return nil }
        if let tile = iterators[top.index].next() {
            heap[0] = (tile, top.index)
            siftDown(0)
        } else {
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                siftDown(0)
            }
        }
        return (top.tile, top.index)
    }

    private static func before(_ a: (tile: TileID, index: Int), _ b: (tile: TileID, index: Int)) -> Bool {
        a.tile < b.tile || (a.tile == b.tile && a.index < b.index)
    }

    private mutating func push(_ element: (tile: TileID, index: Int)) {
        heap.append(element)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && Self.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && Self.before(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
