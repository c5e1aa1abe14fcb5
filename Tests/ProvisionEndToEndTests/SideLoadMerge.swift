import Foundation
import XCTest

/// MapLibre Native's side-load merge (`OfflineDatabase::mergeDatabase`), written from its
/// documented semantics and run by the sqlite3 shell, as a device runs it on a bundle:
///
/// - the side database is attached, and refused unless its `user_version` equals the main's;
/// - side regions whose (definition, description) pair the main lacks are inserted;
/// - a tile or resource is inserted where the main lacks it, and replaced only where the side's
///   `modified` is newer;
/// - the side's region_tiles and region_resources are linked to the matching main regions.
enum SideLoadMerge {
    /// What one merge did.
    struct Result: Equatable {
        var regionsAdded: Int
        var tilesAdded: Int
        var tilesReplaced: Int
        var resourcesAdded: Int
        var resourcesReplaced: Int
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// Merges `side` into `main` (modified in place).
    static func merge(_ side: URL, into main: URL) throws -> Result {
        let shell = SQLiteShell(database: main)
        let mainVersion = try shell.int("PRAGMA user_version")
        let sideVersion = try SQLiteShell(database: side).int("PRAGMA user_version")
        guard mainVersion == sideVersion else {
            throw Refused(description: "side database has user_version \(sideVersion), main \(mainVersion)")
        }
        let tileKey = "m.url_template = s.url_template AND m.pixel_ratio = s.pixel_ratio AND m.z = s.z AND m.x = s.x AND m.y = s.y"
        let sameRegion = "mr.definition = sr.definition AND mr.description IS sr.description"
        let content = "expires, modified, etag, data, compressed, accessed, must_revalidate"
        let sql = """
            ATTACH '\(side.path)' AS side;
            BEGIN;
            CREATE TEMP TABLE counts (what TEXT, n INTEGER);
            INSERT INTO main.regions (definition, description)
              SELECT sr.definition, sr.description FROM side.regions sr
              WHERE NOT EXISTS (SELECT 1 FROM main.regions mr WHERE \(sameRegion));
            INSERT INTO counts VALUES ('regions', changes());
            UPDATE main.tiles AS m SET expires = s.expires, modified = s.modified, etag = s.etag, data = s.data,
                compressed = s.compressed, must_revalidate = s.must_revalidate
              FROM side.tiles AS s WHERE \(tileKey) AND s.modified > m.modified;
            INSERT INTO counts VALUES ('tiles replaced', changes());
            INSERT INTO main.tiles (url_template, pixel_ratio, z, x, y, \(content))
              SELECT s.url_template, s.pixel_ratio, s.z, s.x, s.y, \(content.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
              FROM side.tiles s WHERE NOT EXISTS (SELECT 1 FROM main.tiles m WHERE \(tileKey));
            INSERT INTO counts VALUES ('tiles added', changes());
            UPDATE main.resources AS m SET kind = s.kind, expires = s.expires, modified = s.modified, etag = s.etag,
                data = s.data, compressed = s.compressed, must_revalidate = s.must_revalidate
              FROM side.resources AS s WHERE m.url = s.url AND s.modified > m.modified;
            INSERT INTO counts VALUES ('resources replaced', changes());
            INSERT INTO main.resources (url, kind, \(content))
              SELECT s.url, s.kind, \(content.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
              FROM side.resources s WHERE NOT EXISTS (SELECT 1 FROM main.resources m WHERE m.url = s.url);
            INSERT INTO counts VALUES ('resources added', changes());
            INSERT OR IGNORE INTO main.region_tiles (region_id, tile_id)
              SELECT mr.id, m.id FROM side.region_tiles srt
              JOIN side.regions sr ON sr.id = srt.region_id JOIN main.regions mr ON \(sameRegion)
              JOIN side.tiles s ON s.id = srt.tile_id JOIN main.tiles m ON \(tileKey);
            INSERT OR IGNORE INTO main.region_resources (region_id, resource_id)
              SELECT mr.id, m.id FROM side.region_resources srr
              JOIN side.regions sr ON sr.id = srr.region_id JOIN main.regions mr ON \(sameRegion)
              JOIN side.resources s ON s.id = srr.resource_id JOIN main.resources m ON m.url = s.url;
            COMMIT;
            SELECT n FROM counts ORDER BY rowid;
            """
        let counts = try shell.rows(sql, writing: true).compactMap { $0.first.flatMap { Int($0) } }
        guard counts.count == 5 else { throw Refused(description: "merge printed \(counts)") }
        return Result(regionsAdded: counts[0], tilesAdded: counts[2], tilesReplaced: counts[1],
                      resourcesAdded: counts[4], resourcesReplaced: counts[3])
    }
}
