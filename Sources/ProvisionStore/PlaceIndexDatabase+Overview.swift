import Foundation
import TileMath

/// What a search pack holds, in brief: its places per region and where the first of them lie
/// (the coverage pictures show them).
public struct PlaceIndexOverview: Equatable, Sendable {
    /// A place as a picture draws it: its position and the zooms its tiles show it at.
    public struct Place: Equatable, Sendable {
        public var position: LngLat
        public var zooms: ClosedRange<Int>
    }

    /// Places in the file (`places` rows).
    public var entries: Int
    /// Places per region id (`place_regions`), by region id.
    public var regions: [String: Int]
    /// The first `limit` places, by lowest zoom, rank and id: the ones a map shows first.
    public var places: [Place]
}

extension PlaceIndexDatabase {
    /// The overview of the pack at `url` (opened read-only), at most `limit` places drawn; throws
    /// as `search` does for a file that is not a search pack of this version.
    public static func overview(_ url: URL, limit: Int) throws -> PlaceIndexOverview {
        let db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false))
        // Best effort: closing a read-only connection after the rows are read.
        defer { try? db.close() }
        try checkIsPack(db, url: url)
        let entries = try db.queryFirst("SELECT count(*) FROM places") { Int($0.int64(0)) } ?? 0
        let counts = try db.query("SELECT region, count(*) FROM place_regions GROUP BY region") { ($0.text(0), Int($0.int64(1))) }
        let places = try db.query("SELECT lon, lat, minzoom, maxzoom FROM places ORDER BY minzoom, rank, id LIMIT ?",
                                  [.int(Int64(limit))]) { row in
            PlaceIndexOverview.Place(position: LngLat(lng: row.double(0), lat: row.double(1)),
                                     zooms: Int(row.int64(2))...max(Int(row.int64(2)), Int(row.int64(3))))
        }
        return PlaceIndexOverview(entries: entries, regions: Dictionary(counts, uniquingKeysWith: { a, _ in a }), places: places)
    }
}
