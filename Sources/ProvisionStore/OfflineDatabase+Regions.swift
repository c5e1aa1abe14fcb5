import Foundation
import ProvisionModel
import TileMath

/// Region rows and their links to tiles and resources.
extension OfflineDatabase {
    /// Every region row, ordered by row id.
    public func regions() throws -> [StoredRegion] {
        try db.query("SELECT id, definition, description FROM regions ORDER BY id") {
            StoredRegion(rowID: $0.int64(0), definition: $0.data(1), description: $0.optionalData(2))
        }
    }

    /// Adds a region row (definition stored as TEXT, description as a BLOB) and returns its id.
    public func insertRegion(definition: Data, description: Data?) throws -> Int64 {
        try db.inTransaction {
            try db.run("INSERT INTO regions (definition, description) VALUES (?1, ?2)",
                       [.textBytes(definition), description.map { .blob($0) } ?? .null])
            return db.lastInsertRowID
        }
    }

    /// Replaces a region row's definition and description; throws `.notFound` for an unknown id.
    public func updateRegion(_ rowID: Int64, definition: Data, description: Data?) throws {
        let changed = try db.inTransaction {
            try db.run("UPDATE regions SET definition = ?1, description = ?2 WHERE id = ?3",
                       [.textBytes(definition), description.map { .blob($0) } ?? .null, .int(rowID)])
        }
        if changed == 0 { throw StoreError(.notFound, "no region with id \(rowID)", path: path) }
    }

    /// Deletes region rows; their links go with them (ON DELETE CASCADE). Unknown ids are ignored.
    public func deleteRegions(_ rowIDs: [Int64]) throws {
        guard !rowIDs.isEmpty else { return }
        try db.inTransaction {
            for id in rowIDs { try db.run("DELETE FROM regions WHERE id = ?1", [.int(id)]) }
        }
    }

    private func requireRegion(_ rowID: Int64) throws {
        if try db.queryFirst("SELECT 1 FROM regions WHERE id = ?1", [.int(rowID)], { _ in true }) == nil {
            throw StoreError(.notFound, "no region with id \(rowID)", path: path)
        }
    }

    /// Links the stored ones of `keys` to a region; returns how many links are new.
    @discardableResult
    public func linkTiles(_ keys: [TileKey], toRegion rowID: Int64) throws -> Int {
        try db.inTransaction {
            try requireRegion(rowID)
            let sql = """
                INSERT OR IGNORE INTO region_tiles (region_id, tile_id)
                SELECT ?6, id FROM tiles
                WHERE url_template = ?1 AND pixel_ratio = ?2 AND z = ?3 AND x = ?4 AND y = ?5
                """
            var added = 0
            for key in keys { added += try db.run(sql, OfflineDatabase.keyValues(key) + [.int(rowID)]) }
            return added
        }
    }

    /// Removes the links of `keys` from a region (the tiles stay until `pruneOrphans`).
    public func unlinkTiles(_ keys: [TileKey], fromRegion rowID: Int64) throws {
        guard !keys.isEmpty else { return }
        try db.inTransaction {
            let sql = "DELETE FROM region_tiles WHERE region_id = ?6 AND tile_id = (\(OfflineDatabase.tileIDSQL))"
            for key in keys { try db.run(sql, OfflineDatabase.keyValues(key) + [.int(rowID)]) }
        }
    }

    /// Links the stored ones of `urls` to a region.
    public func linkResources(_ urls: [String], toRegion rowID: Int64) throws {
        try db.inTransaction {
            try requireRegion(rowID)
            let sql = """
                INSERT OR IGNORE INTO region_resources (region_id, resource_id)
                SELECT ?2, id FROM resources WHERE url = ?1
                """
            for url in urls { try db.run(sql, [.text(url), .int(rowID)]) }
        }
    }

    /// Removes every resource link of a region whose URL is not in `keeping`.
    public func unlinkResources(fromRegion rowID: Int64, keeping urls: Set<String>) throws {
        try db.inTransaction {
            let linked = try db.query("""
                SELECT r.id, r.url FROM region_resources rr JOIN resources r ON r.id = rr.resource_id
                WHERE rr.region_id = ?1
                """, [.int(rowID)]) { ($0.int64(0), $0.text(1)) }
            for (id, url) in linked where !urls.contains(url) {
                try db.run("DELETE FROM region_resources WHERE region_id = ?1 AND resource_id = ?2",
                           [.int(rowID), .int(id)])
            }
        }
    }

    /// How many tile links a region has (one to a tile row that is gone included): a count of
    /// the region's entries in the (region_id, tile_id) index, without reading the tiles.
    public func tileLinkCount(region rowID: Int64) throws -> Int {
        Int(try db.queryFirst(OfflineDatabase.tileLinkCountSQL, [.int(rowID)]) { $0.int64(0) } ?? 0)
    }

    static let tileLinkCountSQL = "SELECT count(*) FROM region_tiles WHERE region_id = ?1"

    /// Linked tile counts of a region by template and zoom, sorted by template then zoom.
    public func linkedTileCounts(region rowID: Int64) throws -> [TileCount] {
        try db.query("""
            SELECT t.url_template, t.z, count(*) FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id
            WHERE rt.region_id = ?1 GROUP BY t.url_template, t.z ORDER BY t.url_template, t.z
            """, [.int(rowID)]) {
            TileCount(urlTemplate: $0.text(0), zoom: Int($0.int64(1)), count: Int($0.int64(2)))
        }
    }

    /// The resource URLs linked to a region, sorted by their UTF-8 bytes.
    public func linkedResources(region rowID: Int64) throws -> [String] {
        try db.query("""
            SELECT r.url FROM region_resources rr JOIN resources r ON r.id = rr.resource_id
            WHERE rr.region_id = ?1 ORDER BY r.url
            """, [.int(rowID)]) { $0.text(0) }
    }
}

extension OfflineDatabase {
    /// Calls `body` with each tile linked to a region for one template: its stored key, its
    /// payload as stored (nil for a tile with no content) and whether that is zlib-compressed.
    /// Rows are stepped one at a time, so memory does not grow with the region.
    public func forEachLinkedTilePayload(region rowID: Int64, urlTemplate: String,
                                         _ body: (TileKey, Data?, Bool) throws -> Void) throws {
        try step("""
            SELECT t.z, t.x, t.y, t.pixel_ratio, t.data, t.compressed FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id
            WHERE rt.region_id = ?1 AND t.url_template = ?2
            """, [.int(rowID), .text(urlTemplate)]) { row in
            let key = TileKey(urlTemplate: urlTemplate, pixelRatio: Int(row.int64(3)),
                              tile: TileID(z: Int(row.int64(0)), x: Int(row.int64(1)), y: Int(row.int64(2))))
            try body(key, row.optionalData(4), row.int64(5) != 0)
        }
    }
}

extension OfflineDatabase {
    /// The region rows linking the row `key` names (none for a row that is missing or linked
    /// to no region), by row id.
    public func regionsLinking(_ key: ChunkKey) throws -> [Int64] {
        switch key {
        case .resource(let url):
            return try db.query("""
                SELECT rr.region_id FROM region_resources rr JOIN resources r ON r.id = rr.resource_id
                WHERE r.url = ?1 ORDER BY rr.region_id
                """, [.text(url)]) { $0.int64(0) }
        case .tile(let tile):
            return try db.query("""
                SELECT rt.region_id FROM region_tiles rt JOIN tiles t ON t.id = rt.tile_id
                WHERE t.url_template = ?1 AND t.pixel_ratio = ?2 AND t.z = ?3 AND t.x = ?4 AND t.y = ?5
                ORDER BY rt.region_id
                """, [.text(tile.urlTemplate), .int(Int64(tile.pixelRatio)), .int(Int64(tile.tile.z)),
                      .int(Int64(tile.tile.x)), .int(Int64(tile.tile.y))]) { $0.int64(0) }
        }
    }
}
