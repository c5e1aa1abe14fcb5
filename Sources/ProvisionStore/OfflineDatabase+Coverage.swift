import Foundation
import ProvisionModel
import TileMath

/// The reads of the coverage pictures (`plan --html`, `audit --html`): the region links of one
/// zoom at a time, in geographic tile order, through a cursor.
///
/// Why the (template, pixel ratio) pairs first: the tiles' unique index starts with url_template,
/// pixel_ratio, z, so knowing the pairs lets each zoom's query seek straight to its entries
/// instead of reading the whole table once per zoom. The pairs come from skipping through that
/// index (one seek per pair), never from a scan.
extension OfflineDatabase {
    /// The distinct (template, pixel ratio) pairs of the tiles table, ascending.
    public func tilePairs() throws -> [(urlTemplate: String, pixelRatio: Int)] {
        var pairs: [(urlTemplate: String, pixelRatio: Int)] = []
        var next = try db.queryFirst("SELECT url_template, pixel_ratio FROM tiles ORDER BY url_template, pixel_ratio LIMIT 1") {
            ($0.text(0), Int($0.int64(1)))
        }
        while let pair = next {
            pairs.append((pair.0, pair.1))
            next = try db.queryFirst("""
                SELECT url_template, pixel_ratio FROM tiles WHERE (url_template, pixel_ratio) > (?1, ?2)
                ORDER BY url_template, pixel_ratio LIMIT 1
                """, [.text(pair.0), .int(Int64(pair.1))]) { ($0.text(0), Int($0.int64(1))) }
        }
        return pairs
    }

    /// The zooms at which some tile is linked to a region row, ascending.
    public func linkedZooms() throws -> [Int] {
        var zooms = Set<Int>()
        for pair in try tilePairs() {
            var next = try db.queryFirst("SELECT min(z) FROM tiles WHERE url_template = ?1 AND pixel_ratio = ?2",
                                         [.text(pair.urlTemplate), .int(Int64(pair.pixelRatio))]) { $0.optionalInt64(0) } ?? nil
            while let z = next {
                let linked = try db.queryFirst("""
                    SELECT 1 FROM tiles t JOIN region_tiles rt ON rt.tile_id = t.id
                    WHERE t.url_template = ?1 AND t.pixel_ratio = ?2 AND t.z = ?3 LIMIT 1
                    """, [.text(pair.urlTemplate), .int(Int64(pair.pixelRatio)), .int(z)]) { _ in true } ?? false
                if linked { zooms.insert(Int(z)) }
                next = try db.queryFirst("SELECT min(z) FROM tiles WHERE url_template = ?1 AND pixel_ratio = ?2 AND z > ?3",
                                         [.text(pair.urlTemplate), .int(Int64(pair.pixelRatio)), .int(z)]) { $0.optionalInt64(0) } ?? nil
            }
        }
        return zooms.sorted()
    }

    /// Calls `body` with every link of a region row to a tile at `zoom` (the row id, and the key
    /// with its geographic tile: the rows of `tmsTemplates` are flipped from TMS), ordered by
    /// column then geographic row. One statement steps through the links; SQLite sorts them
    /// within its own bounded memory, spilling to a temporary file.
    public func forEachLinkedTile(zoom: Int, tmsTemplates: Set<String>,
                                  _ body: (_ regionRowID: Int64, _ key: TileKey) throws -> Void) throws {
        let pairs = try tilePairs()
        guard !pairs.isEmpty, zoom >= 0, zoom <= TileID.maxZoom else { return }
        let templates = Array(Set(pairs.map(\.urlTemplate))).sorted()
        let ratios = Array(Set(pairs.map(\.pixelRatio))).sorted()
        let flipped = templates.filter(tmsTemplates.contains)
        var values: [SQLiteValue] = [.int(Int64(zoom)), .int(Int64((1 << zoom) - 1))]
        func placeholders(_ items: [SQLiteValue]) -> String {
            let first = values.count + 1
            values += items
            return (first..<(first + items.count)).map { "?\($0)" }.joined(separator: ", ")
        }
        let templateList = placeholders(templates.map { .text($0) })
        let ratioList = placeholders(ratios.map { .int(Int64($0)) })
        let row = flipped.isEmpty ? "t.y" : "CASE WHEN t.url_template IN (\(placeholders(flipped.map { .text($0) }))) THEN ?2 - t.y ELSE t.y END"
        let sql = """
            SELECT rt.region_id, t.url_template, t.pixel_ratio, t.x, \(row) AS geographic_y
            FROM tiles t JOIN region_tiles rt ON rt.tile_id = t.id
            WHERE t.url_template IN (\(templateList)) AND t.pixel_ratio IN (\(ratioList)) AND t.z = ?1
            ORDER BY t.x, geographic_y
            """
        try step(sql, values) { row in
            try body(row.int64(0), TileKey(urlTemplate: row.text(1), pixelRatio: Int(row.int64(2)),
                                           tile: TileID(z: zoom, x: Int(row.int64(3)), y: Int(row.int64(4)))))
        }
    }
}
