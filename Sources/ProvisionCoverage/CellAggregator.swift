import Foundation
import TileMath

/// Gathers the tiles of one zoom into at most `budget` cells, coarsening as it goes.
///
/// Why coarsen while streaming: the number of cells a view will need is known only after every
/// tile was seen. Each time the cells outgrow the budget, every cell is replaced by its parent
/// tile (one zoom coarser, merging four into one), so memory never holds more than the budget
/// and all cells of a view end at the same zoom: the finest one that fits.
struct CellAggregator {
    /// The zoom of the tiles added.
    let zoom: Int
    /// The most cells kept.
    let budget: Int
    /// How many zooms coarser than `zoom` the cells are.
    private(set) var shift = 0
    private var cells: [UInt64: Tally] = [:]

    struct Tally {
        var counts: StateCounts
        var regions: [Int]
        var state: CoverageState
        var change: CoverageState?
    }

    init(zoom: Int, budget: Int) {
        self.zoom = zoom
        self.budget = max(1, budget)
    }

    /// Adds one tile of `zoom` (each position once) in `state`, belonging to `regions` (ascending).
    mutating func add(x: Int, y: Int, state: CoverageState, change: CoverageState?, regions: [Int]) {
        let key = Self.key(x >> shift, y >> shift)
        if var tally = cells[key] {
            tally.counts[state] += 1
            tally.regions = Self.union(tally.regions, regions)
            tally.change = nil
            cells[key] = tally
        } else {
            var counts = StateCounts()
            counts[state] = 1
            cells[key] = Tally(counts: counts, regions: regions, state: state, change: change)
        }
        while cells.count > budget && shift < zoom { coarsen() }
    }

    /// The cells, ordered by x then y.
    func result() -> [CoverageCell] {
        let cellZoom = zoom - shift
        return cells.sorted { $0.key < $1.key }.map { key, tally in
            let tile = TileID(z: cellZoom, x: Int(key >> 32), y: Int(key & 0xFFFF_FFFF))
            guard shift > 0 else { return CoverageCell(tile: tile, state: tally.state, change: tally.change, regions: tally.regions) }
            return CoverageCell(tile: tile, state: tally.counts.dominant ?? tally.state, regions: tally.regions, tally: tally.counts)
        }
    }

    private mutating func coarsen() {
        shift += 1
        var parents: [UInt64: Tally] = [:]
        parents.reserveCapacity(cells.count / 2)
        for (key, tally) in cells {
            let parent = Self.key(Int(key >> 32) >> 1, Int(key & 0xFFFF_FFFF) >> 1)
            if var merged = parents[parent] {
                merged.counts = merged.counts + tally.counts
                merged.regions = Self.union(merged.regions, tally.regions)
                merged.change = nil
                parents[parent] = merged
            } else {
                parents[parent] = tally
            }
        }
        cells = parents
    }

    private static func key(_ x: Int, _ y: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: x) << 32 | UInt64(truncatingIfNeeded: y) & 0xFFFF_FFFF
    }

    /// The union of two ascending index lists, ascending.
    static func union(_ a: [Int], _ b: [Int]) -> [Int] {
        if a == b || b.isEmpty { return a }
        if a.isEmpty { return b }
        var out: [Int] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                out.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
                j += 1
            }
        }
        return out
    }
}
