import Foundation
import ProvisionModel

extension OfflineDatabase {
    /// Writes the regions `regionOrder` (row ids of this database, in the order they get ids
    /// 1, 2, …) and the content they link to into a fresh database at `url`, in a canonical
    /// order: resources by URL, tiles by key, links by id. Content no listed region links to is
    /// left out.
    ///
    /// Why: row ids and page layout record history (which apply inserted what, and when). The
    /// same content written in the same order into a new file gives the same bytes, so a store
    /// built fresh, incrementally from another job, or resumed after a kill ends byte-identical.
    /// The copy is made beside the store and renamed over it, so the switch is atomic.
    public func writeCanonicalCopy(to url: URL, regionOrder: [Int64]) throws {
        try? FileManager.default.removeItem(at: url)
        let copy = try OfflineDatabase(url: url, epoch: epoch)
        let target = copy.db
        try target.exec("PRAGMA synchronous = OFF")
        try target.run("ATTACH DATABASE ?1 AS src", [.text(path)])
        defer { try? target.exec("DETACH DATABASE src") }
        try target.inTransaction {
            try target.exec("CREATE TEMP TABLE region_order (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL)")
            for (index, old) in regionOrder.enumerated() {
                try target.run("INSERT INTO temp.region_order (old_id, new_id) VALUES (?1, ?2)", [.int(old), .int(Int64(index + 1))])
            }
            try target.exec("""
                INSERT INTO main.regions (id, definition, description)
                SELECT o.new_id, r.definition, r.description
                FROM src.regions r JOIN temp.region_order o ON o.old_id = r.id ORDER BY o.new_id
                """)
            // New ids are positions in key order, assigned once in temporary maps keyed by the old
            // ids, so the link tables are rebuilt by integer joins rather than key lookups.
            try target.exec("""
                CREATE TEMP TABLE resource_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL);
                INSERT INTO temp.resource_map (old_id, new_id)
                SELECT r.id, row_number() OVER (ORDER BY r.url)
                FROM src.resources r
                WHERE r.id IN (SELECT rr.resource_id FROM src.region_resources rr JOIN temp.region_order o ON o.old_id = rr.region_id);
                CREATE TEMP TABLE tile_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL);
                INSERT INTO temp.tile_map (old_id, new_id)
                SELECT t.id, row_number() OVER (ORDER BY t.url_template, t.pixel_ratio, t.z, t.x, t.y)
                FROM src.tiles t
                WHERE t.id IN (SELECT rt.tile_id FROM src.region_tiles rt JOIN temp.region_order o ON o.old_id = rt.region_id);
                """)
            try target.exec("""
                INSERT INTO main.resources (id, url, kind, expires, modified, etag, data, compressed, accessed, must_revalidate)
                SELECT m.new_id, r.url, r.kind, r.expires, r.modified, r.etag, r.data, r.compressed, r.accessed, r.must_revalidate
                FROM temp.resource_map m JOIN src.resources r ON r.id = m.old_id
                ORDER BY m.new_id
                """)
            try target.exec("""
                INSERT INTO main.tiles (id, url_template, pixel_ratio, z, x, y, expires, modified, etag, data, compressed,
                                        accessed, must_revalidate)
                SELECT m.new_id, t.url_template, t.pixel_ratio, t.z, t.x, t.y, t.expires, t.modified, t.etag, t.data,
                       t.compressed, t.accessed, t.must_revalidate
                FROM temp.tile_map m JOIN src.tiles t ON t.id = m.old_id
                ORDER BY m.new_id
                """)
            try target.exec("""
                INSERT INTO main.region_resources (region_id, resource_id)
                SELECT o.new_id, m.new_id
                FROM src.region_resources rr
                JOIN temp.region_order o ON o.old_id = rr.region_id
                JOIN temp.resource_map m ON m.old_id = rr.resource_id
                ORDER BY o.new_id, m.new_id
                """)
            try target.exec("""
                INSERT INTO main.region_tiles (region_id, tile_id)
                SELECT o.new_id, m.new_id
                FROM src.region_tiles rt
                JOIN temp.region_order o ON o.old_id = rt.region_id
                JOIN temp.tile_map m ON m.old_id = rt.tile_id
                ORDER BY o.new_id, m.new_id
                """)
            try target.exec("DROP TABLE temp.resource_map; DROP TABLE temp.tile_map")
            try target.exec("DROP TABLE temp.region_order")
        }
        try target.exec("DETACH DATABASE src")
        try copy.finish()
    }
}
