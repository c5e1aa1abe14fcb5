import Foundation
import PlaceIndex
import TileMath

/// What a search pack file says about itself (its `metadata` table).
public struct PlaceIndexMetadata: Sendable {
    /// The pack's name (the file is `search/<pack>.db`).
    public var pack: String
    /// The sources the entries come from (URLs or names), in the order given.
    public var sources: [String]
    /// The attribution the tiles carry.
    public var attribution: String
    /// When it was built (RFC 3339, given by the caller: the only time in the file).
    public var buildTime: String
    /// The tile schema read (`openmaptiles`, `mapbox-streets-v8`, `custom`).
    public var tileSchema: String
    /// The name fields indexed.
    public var nameFields: [String]

    public init(pack: String, sources: [String], attribution: String, buildTime: String, tileSchema: String,
                nameFields: [String]) {
        self.pack = pack
        self.sources = sources
        self.attribution = attribution
        self.buildTime = buildTime
        self.tileSchema = tileSchema
        self.nameFields = nameFields
    }
}

/// One answer of a search, as the documented SQL returns it.
public struct PlaceSearchResult: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var kind: String
    public var featureClass: String
    public var position: LngLat
    public var rank: Int
    public var minZoom: Int
    /// Whether one of its names is the query, word for word (diacritics and case folded).
    public var exact: Bool
    /// The fewest words of its names the query matched (`tokens`).
    public var tokens: Int
    /// `d2`: the squared distance to `:lon`, `:lat` in degrees of latitude (longitude scaled by `:lon_scale`).
    public var distanceSquared: Double
    /// The ids of the regions its position lies in, in name order.
    public var regions: [String]

    /// Whether this answer comes before `other` in the order of `searchSQL` (`ORDER BY exact DESC,
    /// tokens, p.minzoom, p.rank, d2, p.id`): how answers of several packs merge into one list.
    public func ranks(before other: PlaceSearchResult) -> Bool {
        if exact != other.exact { return exact }
        return (tokens, minZoom, rank, distanceSquared, id) < (other.tokens, other.minZoom, other.rank, other.distanceSquared, other.id)
    }
}

/// The search pack file `search/<pack>.db`: an SQLite database the system SQLite of Android and
/// iOS reads (FTS4 with the unicode61 tokenizer folding diacritics, an R*Tree), written whole
/// through a temporary file and a rename, byte for byte the same for the same entries and
/// metadata. docs/search-packs.md documents the schema and `searchSQL`.
public enum PlaceIndexDatabase {
    /// The `schema_version` in `metadata`; bumped when a table or column changes meaning.
    public static let schemaVersion = 1

    /// The tables, created in this order on a new file.
    public static let schemaSQL = """
        CREATE TABLE metadata (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE places (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, layer TEXT NOT NULL,
            class TEXT NOT NULL, subclass TEXT NOT NULL, shape TEXT NOT NULL, lon REAL NOT NULL, lat REAL NOT NULL,
            west REAL NOT NULL, south REAL NOT NULL, east REAL NOT NULL, north REAL NOT NULL,
            rank INTEGER NOT NULL, minzoom INTEGER NOT NULL, maxzoom INTEGER NOT NULL);
        CREATE TABLE names (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL, name TEXT NOT NULL, tokens INTEGER NOT NULL);
        CREATE INDEX names_place ON names (place_id);
        CREATE INDEX places_position ON places (lat, lon);
        CREATE TABLE place_regions (region TEXT NOT NULL, place_id INTEGER NOT NULL, PRIMARY KEY (region, place_id));
        CREATE VIRTUAL TABLE names_fts USING fts4(name, tokenize=unicode61 "remove_diacritics=1", prefix="2,3");
        CREATE VIRTUAL TABLE places_rtree USING rtree(id, min_lon, max_lon, min_lat, max_lat);
        """

    /// The query an app runs: names matching `:match` (every word a prefix), places inside the box
    /// `:west`, `:south`, `:east`, `:north` (the whole world for a search anywhere) and, unless
    /// `:region` is NULL, in the region of that id; exact names
    /// first, then names with fewer words, the places shown at lower zooms, lower rank, nearer
    /// to `:lon`, `:lat` (`:lon_scale` is cos(latitude), so degrees of longitude count as metres do).
    public static let searchSQL = """
        SELECT p.id, p.name, p.kind, p.class, p.lon, p.lat, p.rank, p.minzoom,
               MAX(n.tokens = :tokens AND n.id IN (SELECT docid FROM names_fts WHERE names_fts MATCH :phrase)) AS exact,
               MIN(n.tokens) AS tokens,
               ((p.lon - :lon) * :lon_scale) * ((p.lon - :lon) * :lon_scale) + (p.lat - :lat) * (p.lat - :lat) AS d2
        FROM names_fts
        JOIN names AS n ON n.id = names_fts.docid
        JOIN places AS p ON p.id = n.place_id
        JOIN places_rtree AS r ON r.id = p.id
        WHERE names_fts MATCH :match
          AND r.max_lon >= :west AND r.min_lon <= :east AND r.max_lat >= :south AND r.min_lat <= :north
          AND (:region IS NULL OR p.id IN (SELECT place_id FROM place_regions WHERE region = :region))
        GROUP BY p.id
        ORDER BY exact DESC, tokens, p.minzoom, p.rank, d2, p.id
        LIMIT :limit
        """

    /// `searchSQL` for an SQLite built without the R*Tree module (some Android system builds say
    /// "no such module: rtree"): the same answers in the same order, the box tested on `places`
    /// (through its `(lat, lon)` index) instead of `places_rtree`.
    public static let searchSQLWithoutRTree = searchSQL
        .replacingOccurrences(of: "JOIN places_rtree AS r ON r.id = p.id\n", with: "")
        .replacingOccurrences(of: "r.max_lon >= :west AND r.min_lon <= :east AND r.max_lat >= :south AND r.min_lat <= :north",
                              with: "p.lon >= :west AND p.lon <= :east AND p.lat >= :south AND p.lat <= :north")

    /// The words of a query as the index sees them: runs of letters and digits, lowercased.
    public static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar.properties.generalCategory == .nonspacingMark {
                current.append(scalar)
            } else if !current.isEmpty {
                words.append(String(current).lowercased())
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { words.append(String(current).lowercased()) }
        return words
    }

    /// The parameters of `searchSQL` for a query typed by a user: `:match` is each word with a
    /// `*` (prefix query), `:phrase` the words in quotes, `:tokens` their count; `:region` NULL
    /// searches every region.
    public static func parameters(query: String, near: LngLat?, box: BoundingBox = .world, region: String? = nil,
                                  limit: Int) -> [String: SQLiteValue] {
        let words = words(query)
        let center = near ?? LngLat(lng: 0, lat: 0)
        return [
            ":match": .text(words.map { $0 + "*" }.joined(separator: " ")),
            ":phrase": .text("\"" + words.joined(separator: " ") + "\""),
            ":tokens": .int(Int64(words.count)),
            ":lon": .double(center.lng), ":lat": .double(center.lat),
            ":lon_scale": .double(cos(center.lat * .pi / 180)),
            ":west": .double(box.west), ":south": .double(box.south), ":east": .double(box.east), ":north": .double(box.north),
            ":region": region.map { .text($0) } ?? .null, ":limit": .int(Int64(limit)),
        ]
    }

    /// Writes `entries` (in the order given) and `metadata` to `url`: a new database in a temporary
    /// file of the same directory, vacuumed, then renamed over `url`. On failure `url` keeps what
    /// it held and the temporary file is removed.
    public static func write(_ entries: [PlaceEntry], metadata: PlaceIndexMetadata, to url: URL) throws {
        try write(metadata: metadata, to: url) { add in
            for entry in entries { try add(entry) }
        }
    }

    /// Writes the entries `produce` hands to the function it is given (in that order) and
    /// `metadata` to `url`, as `write(_:metadata:to:)` does, and returns how many there were.
    ///
    /// Why a producer: a pack's entries are written as they are made, never all held at once.
    /// The `metadata` rows (which count the entries) go in after them: the file is vacuumed, which
    /// lays out every table from its rows alone, so the bytes are those of rows inserted first.
    @discardableResult
    public static func write(metadata: PlaceIndexMetadata, to url: URL,
                             entries produce: (_ add: (PlaceEntry) throws -> Void) throws -> Void) throws -> Int {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        // Best effort: a temporary file an earlier run left, if any; creating it below fails loudly.
        try? FileManager.default.removeItem(at: temporary)
        do {
            let db = try SQLiteDatabase(path: temporary.path)
            try db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = MEMORY; PRAGMA encoding = 'UTF-8'")
            try db.exec(schemaSQL)
            let count = try db.inTransaction {
                var rows = try PlaceRows(db: db)
                try produce { try rows.insert($0) }
                try insertMetadata(metadata, entries: rows.places, into: db)
                try db.run("INSERT INTO names_fts (names_fts) VALUES ('optimize')")
                return rows.places
            }
            // No journal for the vacuum: it rewrites every page, and a journal in memory would hold
            // the whole file; the temporary file is removed if it fails. The bytes are the same.
            try db.exec("PRAGMA journal_mode = OFF")
            try db.exec("VACUUM")
            try db.close()
            guard rename(temporary.path, url.path) == 0 else {
                throw StoreError(.io, "cannot rename the search pack into place: \(String(cString: strerror(errno)))",
                                 path: url.path)
            }
            let directoryFD = open(directory.path, O_RDONLY)
            if directoryFD >= 0 {
                _ = fsync(directoryFD)
                _ = closeDirectory(directoryFD)
            }
            return count
        } catch {
            // Best effort: removing a temporary file that may already be gone; the error below is what matters.
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    private static func insertMetadata(_ metadata: PlaceIndexMetadata, entries: Int, into db: SQLiteDatabase) throws {
        let rows: [(String, String)] = [
            ("schema_version", String(schemaVersion)), ("format", "provision-search-pack"), ("pack", metadata.pack),
            ("sources", json(metadata.sources)), ("attribution", metadata.attribution),
            ("build_time", metadata.buildTime), ("tile_schema", metadata.tileSchema),
            ("name_fields", json(metadata.nameFields)), ("entries", String(entries)),
        ]
        for (name, value) in rows {
            try db.run("INSERT INTO metadata (name, value) VALUES (?, ?)", [.text(name), .text(value)])
        }
    }

    /// Inserts entries one at a time into the places, R*Tree, names, FTS and region tables,
    /// numbering places and names from 1 in the order given.
    ///
    /// Why the statements are held: looking each up by its text for every row of millions costs more
    /// than the insert.
    private struct PlaceRows {
        private(set) var places = 0
        private var names: Int64 = 0
        private let place, rtree, name, fts, region: SQLiteStatement

        init(db: SQLiteDatabase) throws {
            place = try db.prepare("""
                INSERT INTO places (id, name, kind, layer, class, subclass, shape, lon, lat, west, south, east, north,
                                    rank, minzoom, maxzoom) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            rtree = try db.prepare("INSERT INTO places_rtree (id, min_lon, max_lon, min_lat, max_lat) VALUES (?, ?, ?, ?, ?)")
            name = try db.prepare("INSERT INTO names (id, place_id, name, tokens) VALUES (?, ?, ?, ?)")
            fts = try db.prepare("INSERT INTO names_fts (docid, name) VALUES (?, ?)")
            region = try db.prepare("INSERT INTO place_regions (region, place_id) VALUES (?, ?)")
        }

        mutating func insert(_ entry: PlaceEntry) throws {
            places += 1
            let id = Int64(places)
            try Self.run(place, [.int(id), .text(entry.names[0]), .text(entry.kind.rawValue), .text(entry.layer),
                                 .text(entry.featureClass), .text(entry.subclass), .text(entry.shape.rawValue),
                                 .double(entry.position.lng), .double(entry.position.lat),
                                 .double(entry.extent.west), .double(entry.extent.south),
                                 .double(entry.extent.east), .double(entry.extent.north),
                                 .int(Int64(entry.rank)), .int(Int64(entry.minZoom)), .int(Int64(entry.maxZoom))])
            try Self.run(rtree, [.int(id), .double(entry.position.lng), .double(entry.position.lng),
                                 .double(entry.position.lat), .double(entry.position.lat)])
            for text in entry.names {
                names += 1
                try Self.run(name, [.int(names), .int(id), .text(text), .int(Int64(words(text).count))])
                try Self.run(fts, [.int(names), .text(text)])
            }
            for regionID in entry.regions {
                try Self.run(region, [.text(regionID), .int(id)])
            }
        }

        /// Runs `statement` once with `values` bound, as `SQLiteDatabase.run` does.
        private static func run(_ statement: SQLiteStatement, _ values: [SQLiteValue]) throws {
            try statement.bind(values)
            while try statement.step() {}
            statement.reset()
        }
    }

    /// What is wrong with the search pack at `url`, for an audit: empty when it is whole. Checks
    /// that it opens as SQLite, SQLite's own integrity check, that it says it is a search pack, the FTS index against its names
    /// (FTS4's `integrity-check`), the R*Tree against its places, the schema version, and that
    /// `metadata.entries`, the places, the R*Tree and the names agree. Never writes.
    public static func problems(_ url: URL) -> [String] {
        let db: SQLiteDatabase
        do {
            db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false))
        } catch {
            return ["cannot open: \(error)"]
        }
        // Best effort: closing a read-only connection; the problems are what it reports.
        defer { try? db.close() }
        var problems: [String] = []
        func check(_ what: String, _ body: () throws -> String?) {
            do {
                if let problem = try body() { problems.append(problem) }
            } catch {
                problems.append("\(what): \(error)")
            }
        }
        check("integrity check") {
            let rows = try db.query("PRAGMA integrity_check") { $0.text(0) }
            return rows == ["ok"] ? nil : "integrity check: " + rows.prefix(5).joined(separator: "; ")
        }
        guard problems.isEmpty else { return problems }
        check("metadata") {
            let format = try db.queryFirst("SELECT value FROM metadata WHERE name = 'format'") { $0.text(0) }
            guard format == "provision-search-pack" else {
                return "not a search pack: its metadata has no format 'provision-search-pack'"
            }
            let version = try db.queryFirst("SELECT value FROM metadata WHERE name = 'schema_version'") { $0.text(0) }
            return version == String(schemaVersion) ? nil : "schema_version is \(version ?? "missing"), not \(schemaVersion)"
        }
        check("counts") {
            let stated = try db.queryFirst("SELECT value FROM metadata WHERE name = 'entries'") { $0.text(0) }
            let places = try db.queryFirst("SELECT count(*) FROM places") { $0.int64(0) } ?? -1
            let rtree = try db.queryFirst("SELECT count(*) FROM places_rtree") { $0.int64(0) } ?? -1
            let named = try db.queryFirst("SELECT count(DISTINCT place_id) FROM names") { $0.int64(0) } ?? -1
            let fts = try db.queryFirst("SELECT count(*) FROM names_fts") { $0.int64(0) } ?? -1
            let names = try db.queryFirst("SELECT count(*) FROM names") { $0.int64(0) } ?? -1
            guard stated == String(places), rtree == places, named == places, fts == names else {
                return "counts disagree: metadata says \(stated ?? "nothing"), \(places) places, \(rtree) in the R*Tree, "
                    + "\(named) named, \(names) names, \(fts) in the FTS index"
            }
            return nil
        }
        check("FTS index") {
            let differing = try db.queryFirst("""
                SELECT count(*) FROM names AS n LEFT JOIN names_fts AS f ON f.docid = n.id WHERE f.name IS NOT n.name
                """) { $0.int64(0) } ?? 0
            guard differing == 0 else { return "\(differing) names differ from the FTS index's" }
            // The index itself: each name (up to 1,000 spread over the file) finds itself.
            let total = try db.queryFirst("SELECT count(*) FROM names") { $0.int64(0) } ?? 0
            let stride = max(1, total / 1000)
            let sample = try db.query("SELECT id, name FROM names WHERE id % ? = 0", [.int(stride)]) { ($0.int64(0), $0.text(1)) }
            var lost = 0
            for (id, name) in sample {
                let match = words(name).map { "\"\($0)\"" }.joined(separator: " ")
                guard !match.isEmpty else { continue }
                let found = try db.queryFirst("SELECT 1 FROM names_fts WHERE names_fts MATCH ? AND docid = ?",
                                              [.text(match), .int(id)]) { _ in true } ?? false
                if !found { lost += 1 }
            }
            return lost == 0 ? nil : "\(lost) of \(sample.count) names sampled are not found by the FTS index"
        }
        check("R*Tree") {
            let off = try db.queryFirst("""
                SELECT count(*) FROM places AS p LEFT JOIN places_rtree AS r ON r.id = p.id
                WHERE r.id IS NULL OR p.lon < r.min_lon - 1e-4 OR p.lon > r.max_lon + 1e-4
                   OR p.lat < r.min_lat - 1e-4 OR p.lat > r.max_lat + 1e-4
                """) { $0.int64(0) } ?? 0
            return off == 0 ? nil : "\(off) places are missing from the R*Tree or lie outside their box"
        }
        return problems
    }

    /// The build time (Unix seconds) the pack at `url` says it was built at (`metadata.build_time`),
    /// so that a rebuild for comparison writes the same bytes; nil when it cannot be read.
    public static func buildTime(_ url: URL) -> Int64? {
        // A file that does not open or has no such row has no build time to give: the caller says so.
        guard let db = try? SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false)) else { return nil }
        // Best effort: closing a read-only connection.
        defer { try? db.close() }
        // As above: no row, or not a table, is no build time.
        let text = try? db.queryFirst("SELECT value FROM metadata WHERE name = 'build_time'") { $0.text(0) }
        guard let text = text ?? nil, let date = ISO8601DateFormatter().date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    /// Runs `searchSQL` (`searchSQLWithoutRTree` when `rtree` is false) on the pack at `url`
    /// (opened read-only), after checking that it is a search pack of this `schemaVersion`
    /// (a `StoreError` naming the file otherwise, as for a file SQLite cannot read).
    public static func search(_ url: URL, query: String, near: LngLat? = nil, box: BoundingBox = .world,
                              region: String? = nil, limit: Int = 10, rtree: Bool = true) throws -> [PlaceSearchResult] {
        guard !words(query).isEmpty else { return [] }
        let db = try SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false))
        // Best effort: closing a read-only connection after the results are read.
        defer { try? db.close() }
        try checkIsPack(db, url: url)
        let sql = rtree ? searchSQL : searchSQLWithoutRTree
        let statement = try db.prepare(sql)
        let values = parameters(query: query, near: near, box: box, region: region, limit: limit)
        for (offset, name) in parameterNames(sql).enumerated() {
            try statement.bind(values[name] ?? .null, at: Int32(offset + 1))
        }
        var results: [PlaceSearchResult] = []
        while try statement.step() {
            results.append(PlaceSearchResult(
                id: statement.int64(0), name: statement.text(1), kind: statement.text(2), featureClass: statement.text(3),
                position: LngLat(lng: statement.double(4), lat: statement.double(5)),
                rank: Int(statement.int64(6)), minZoom: Int(statement.int64(7)), exact: statement.int64(8) != 0,
                tokens: Int(statement.int64(9)), distanceSquared: statement.double(10), regions: []))
        }
        statement.reset()
        for index in results.indices {
            results[index].regions = try db.query("SELECT region FROM place_regions WHERE place_id = ? ORDER BY region",
                                                  [.int(results[index].id)]) { $0.text(0) }
        }
        return results
    }

    /// Throws unless `db` says it is a search pack (`format`) of this `schemaVersion`: another
    /// SQLite file, or a pack of another version, would answer wrongly or not at all.
    static func checkIsPack(_ db: SQLiteDatabase, url: URL) throws {
        let metadata = try db.query("SELECT name, value FROM metadata WHERE name IN ('format', 'schema_version')") {
            ($0.text(0), $0.text(1))
        }
        let values = Dictionary(metadata, uniquingKeysWith: { first, _ in first })
        guard values["format"] == "provision-search-pack" else {
            throw StoreError(.schemaMismatch, "not a search pack (its metadata has no format 'provision-search-pack')", path: url.path)
        }
        guard values["schema_version"] == String(schemaVersion) else {
            throw StoreError(.unsupportedVersion, "a search pack of schema_version \(values["schema_version"] ?? "none"), "
                             + "not \(schemaVersion): write it again with this provision", path: url.path)
        }
    }

    /// The `:name` parameters of `sql` in the order SQLite numbers them (each new name takes the
    /// next index where it first appears).
    static func parameterNames(_ sql: String) -> [String] {
        var names: [String] = []
        var scalars = Array(sql.unicodeScalars)[...]
        while let colon = scalars.firstIndex(of: ":") {
            let rest = scalars[(colon + 1)...]
            let end = rest.firstIndex { !($0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0)) } ?? rest.endIndex
            let name = ":" + String(String.UnicodeScalarView(rest[..<end]))
            if name.count > 1, !names.contains(name) { names.append(name) }
            scalars = scalars[end...]
        }
        return names
    }

    private static func json(_ strings: [String]) -> String {
        // Serialising an array of strings cannot fail.
        let data = try? JSONSerialization.data(withJSONObject: strings, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }
}

/// `close(2)` of the directory flushed after the rename.
private func closeDirectory(_ fd: Int32) -> Int32 {
    close(fd)
}
