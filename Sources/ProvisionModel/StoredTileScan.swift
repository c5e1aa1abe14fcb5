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
    public func storedCount(of cover: TileCover, in store: StoreInventory, linkedTo region: Int64? = nil) throws -> Int {
        var count = 0
        for column in cover.columns {
            let spans = storedSpans(column.rows, zoom: cover.zoom)
            guard let first = spans.first, let last = spans.last else { continue }
            var span = 0
            let asked = StoredTileColumn(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: cover.zoom, x: column.x,
                                         rows: first.lowerBound..<last.upperBound)
            try store.forEachStoredTile(in: asked, linkedTo: region) { y in
                while span < spans.count && spans[span].upperBound <= y { span += 1 }
                if span < spans.count && spans[span].contains(y) { count += 1 }
            }
        }
        return count
    }

    /// Whether the store holds each of `column` (tiles of one column of this set, ascending, each
    /// once), in the same order.
    public func storedFlags(_ column: [TileID], in store: StoreInventory) throws -> [Bool] {
        guard let first = column.first else { return [] }
        let count = column.count
        // The rows as the store keeps them, ascending (a TMS column runs from the south).
        let rows = isTMS ? column.reversed().map { key(for: $0).tile.y } : column.map(\.y)
        var flags = [Bool](repeating: false, count: count)
        var i = 0
        let asked = StoredTileColumn(urlTemplate: urlTemplate, pixelRatio: pixelRatio, zoom: first.z, x: first.x,
                                     rows: rows[0]..<(rows[count - 1] + 1))
        try store.forEachStoredTile(in: asked, linkedTo: nil) { y in
            while i < count && rows[i] < y { i += 1 }
            if i < count && rows[i] == y {
                flags[isTMS ? count - 1 - i : i] = true
                i += 1
            }
        }
        return flags
    }

    /// A column's row spans (north to south) as the store keeps them, ascending.
    func storedSpans(_ rows: [Range<Int>], zoom: Int) -> [Range<Int>] {
        guard isTMS else { return rows }
        let n = 1 << zoom
        return rows.reversed().map { (n - $0.upperBound)..<(n - $0.lowerBound) }
    }
}
