import Foundation

/// Sweeps one world copy of a polygon cover west to east, keeping only the edges that reach into
/// the current column (an active-edge list over edges sorted by their west end).
struct PolygonColumnSweep {
    let edges: PolygonEdges
    /// Added to an unwrapped column to get the in-world one.
    let offset: Int
    /// The unwrapped columns this copy produces.
    let end: Int
    var column: Int
    var nextEdge = 0
    var active: [PolygonEdge] = []

    init(edges: PolygonEdges, copy: Int) {
        self.edges = edges
        let n = edges.tilesPerSide
        offset = -copy * n
        column = max(edges.columnRange.lowerBound, copy * n)
        end = min(edges.columnRange.upperBound, (copy + 1) * n)
    }

    /// The next column of this copy with covered rows, as a in-world column.
    mutating func next() -> TileCover.Column? {
        let all = edges.edges
        while column < end {
            let right = Double(column + 1)
            while nextEdge < all.count, all[nextEdge].minX < right {
                active.append(all[nextEdge])
                nextEdge += 1
            }
            let left = Double(column)
            active.removeAll { $0.maxX <= left }
            if active.isEmpty {
                guard nextEdge < all.count else { return nil }
                column = max(column + 1, Int(floor(all[nextEdge].minX)))
                continue
            }
            let rows = edges.rows(inColumn: column, edges: active)
            column += 1
            if !rows.isEmpty {
                return TileCover.Column(x: column - 1 + offset, rows: rows)
            }
        }
        return nil
    }
}

/// Merges the sweeps of every world copy a polygon cover reaches into in-world column order.
struct PolygonColumnMerger {
    var sweeps: [PolygonColumnSweep]
    var pending: [TileCover.Column?]
    let tilesPerSide: Int

    init(edges: PolygonEdges) {
        let n = edges.tilesPerSide
        let range = edges.columnRange
        let firstCopy = Int(floor(Double(range.lowerBound) / Double(n)))
        let lastCopy = Int(floor(Double(range.upperBound - 1) / Double(n)))
        sweeps = (firstCopy...max(firstCopy, lastCopy)).map { PolygonColumnSweep(edges: edges, copy: $0) }
        pending = []
        tilesPerSide = n
        for index in sweeps.indices {
            pending.append(sweeps[index].next())
        }
    }

    mutating func next() -> TileCover.Column? {
        guard let x = pending.compactMap({ $0?.x }).min() else { return nil }
        var rows: [Range<Int>] = []
        var copies = 0
        for index in pending.indices where pending[index]?.x == x {
            rows += pending[index]?.rows ?? []
            copies += 1
            pending[index] = sweeps[index].next()
        }
        if copies > 1 {
            rows = PolygonEdges.merged(rows, limit: tilesPerSide)
        }
        return TileCover.Column(x: x, rows: rows)
    }
}
