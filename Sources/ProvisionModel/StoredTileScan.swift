import Foundation
import TileMath

/// Covers merged with what a store holds, one column at a time.
///
/// Why columns: a cover is produced column by column, west to east, and the store's key index
/// (template, pixel ratio, zoom, x, y) is ordered the same way, so a merge of the two holds one
/// column of each side: a plan of ten million tiles against a store of millions reads each stored
/// row of the cover once and keeps no list of either in memory. A TMS set's rows are stored from
/// the south, so its columns are flipped before they are compared.
extension PlannedTileSet {
    /// How many tiles of `cover` (a cover of this set) the store holds; with `region`, how many
    /// of them are linked to that region row.
    public func storedCount(of cover: TileCover, in store: StoredTiles, linkedTo region: Int64? = nil) throws -> Int {
        var count = 0
        try scan(cover, .presence(linkedTo: region), in: store) { _ in count += 1 }
        return count
    }

    /// How many tiles of `cover` (a cover of this set) the store holds, and their stored length.
    public func storedTotals(of cover: TileCover, in store: StoredTiles) throws -> (count: Int, bytes: Int64) {
        var totals = (count: 0, bytes: Int64(0))
        try scan(cover, .lengths, in: store) { bytes in
            totals.count += 1
            totals.bytes += bytes
        }
        return totals
    }

    /// Whether the store holds each of `column` (tiles of one column of this set, ascending, each
    /// once), in the same order.
    public func storedFlags(_ column: [TileID], in store: StoredTiles) throws -> [Bool] {
        var flags = [Bool](repeating: false, count: column.count)
        try match(column, .presence(linkedTo: nil), in: store) { i, _ in flags[i] = true }
        return flags
    }

    /// The stored length of each of `column` (tiles of one column of this set, ascending, each
    /// once) the store holds, nil for the others, in the same order.
    public func storedLengths(_ column: [TileID], in store: StoredTiles) throws -> [Int64?] {
        var lengths = [Int64?](repeating: nil, count: column.count)
        try match(column, .lengths, in: store) { i, bytes in lengths[i] = bytes }
        return lengths
    }

    /// What is read of a column's stored rows.
    private enum ColumnRead {
        /// Which rows are stored (with a region, linked to it); the value is 0.
        case presence(linkedTo: Int64?)
        /// The stored rows with their stored lengths.
        case lengths
    }

    /// Calls `body` with each stored row of `asked`, ascending, and the value `what` reads.
    private func read(_ asked: StoredTileColumn, _ what: ColumnRead, in store: StoredTiles,
                      _ body: (_ y: Int, _ value: Int64) throws -> Void) throws {
        switch what {
        case .presence(let region): try store.forEachStoredTile(in: asked, linkedTo: region) { try body($0, 0) }
        case .lengths: try store.forEachStoredTileLength(in: asked, body)
        }
    }

    /// Reads the stored rows of `cover` column by column and calls `found` with the value of
    /// each row inside the cover.
    private func scan(_ cover: TileCover, _ what: ColumnRead, in store: StoredTiles, _ found: (Int64) -> Void) throws {
        for column in cover.columns {
            let spans = storedSpans(column.rows, zoom: cover.zoom)
            guard let first = spans.first, let last = spans.last else { continue }
            var span = 0
            let asked = StoredTileColumn(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: cover.zoom, x: column.x,
                                         rows: first.lowerBound..<last.upperBound)
            try read(asked, what, in: store) { y, value in
                while span < spans.count && spans[span].upperBound <= y { span += 1 }
                if span < spans.count && spans[span].contains(y) { found(value) }
            }
        }
    }

    /// Reads the stored rows of `column` (tiles of one column, ascending, each once) and calls
    /// `found` with the index in `column` of each tile stored, and its value.
    private func match(_ column: [TileID], _ what: ColumnRead, in store: StoredTiles, _ found: (Int, Int64) -> Void) throws {
        guard let first = column.first else { return }
        let count = column.count
        // The rows as the store keeps them, ascending (a TMS column runs from the south).
        let rows = isTMS ? column.reversed().map { key(for: $0).tile.y } : column.map(\.y)
        var i = 0
        let asked = StoredTileColumn(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: first.z, x: first.x,
                                     rows: rows[0]..<(rows[count - 1] + 1))
        try read(asked, what, in: store) { y, value in
            while i < count && rows[i] < y { i += 1 }
            if i < count && rows[i] == y {
                found(isTMS ? count - 1 - i : i, value)
                i += 1
            }
        }
    }

    /// A column's row spans (north to south) as the store keeps them, ascending.
    func storedSpans(_ rows: [Range<Int>], zoom: Int) -> [Range<Int>] {
        guard isTMS else { return rows }
        let n = 1 << zoom
        return rows.reversed().map { (n - $0.upperBound)..<(n - $0.lowerBound) }
    }
}
