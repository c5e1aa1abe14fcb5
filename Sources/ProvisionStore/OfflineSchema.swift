/// The MapLibre Native offline database schema, version 6
/// (MapLibre `offline_schema.sql`; see reference/maplibre-offline.md §1.1).
///
/// Column order matters: MapLibre's merge inserts into the main file's `tiles` and `resources`
/// by position. `url`, `url_template` and `etag` must hold TEXT (a BLOB never equals MapLibre's
/// TEXT parameter); `data` holds a BLOB, zlib-deflated when `compressed` is 1.
public enum OfflineSchema {
    /// The `user_version` MapLibre Native and Mapbox GL Native ≤ v6 expect.
    public static let version = 6

    /// The CREATE statements, in the order they run (tables, then indexes).
    public static let statements: [String] = [
        // Everything that is not a tile: style (kind 1), TileJSON or GeoJSON (2), glyphs (4),
        // sprite image (5), sprite JSON (6), image (7). Looked up by url alone.
        """
        CREATE TABLE resources (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          url TEXT NOT NULL,
          kind INTEGER NOT NULL,
          expires INTEGER,
          modified INTEGER,
          etag TEXT,
          data BLOB,
          compressed INTEGER NOT NULL DEFAULT 0,
          accessed INTEGER NOT NULL,
          must_revalidate INTEGER NOT NULL DEFAULT 0,
          UNIQUE (url)
        )
        """,
        // Tiles, keyed by the unexpanded template, pixel ratio and z/x/y (y after any TMS flip).
        """
        CREATE TABLE tiles (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          url_template TEXT NOT NULL,
          pixel_ratio INTEGER NOT NULL,
          z INTEGER NOT NULL,
          x INTEGER NOT NULL,
          y INTEGER NOT NULL,
          expires INTEGER,
          modified INTEGER,
          etag TEXT,
          data BLOB,
          compressed INTEGER NOT NULL DEFAULT 0,
          accessed INTEGER NOT NULL,
          must_revalidate INTEGER NOT NULL DEFAULT 0,
          UNIQUE (url_template, pixel_ratio, z, x, y)
        )
        """,
        // Offline regions: definition is MapLibre's JSON, description is opaque app metadata.
        """
        CREATE TABLE regions (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          definition TEXT NOT NULL,
          description BLOB
        )
        """,
        // Which resources a region holds; unlinked resources are ambient cache.
        """
        CREATE TABLE region_resources (
          region_id INTEGER NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
          resource_id INTEGER NOT NULL REFERENCES resources(id),
          UNIQUE (region_id, resource_id)
        )
        """,
        // Which tiles a region holds; a tile shared by regions is stored once.
        """
        CREATE TABLE region_tiles (
          region_id INTEGER NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
          tile_id INTEGER NOT NULL REFERENCES tiles(id),
          UNIQUE (region_id, tile_id)
        )
        """,
        // Indexes MapLibre uses for eviction and for finding orphans.
        "CREATE INDEX resources_accessed ON resources (accessed)",
        "CREATE INDEX tiles_accessed ON tiles (accessed)",
        "CREATE INDEX region_resources_resource_id ON region_resources (resource_id)",
        "CREATE INDEX region_tiles_tile_id ON region_tiles (tile_id)",
    ]

    /// One column as `PRAGMA table_info` reports it.
    public struct Column: Equatable, Sendable, CustomStringConvertible {
        /// The column name.
        public var name: String
        /// The declared type.
        public var type: String
        /// Whether NOT NULL is declared.
        public var notNull: Bool
        /// The default value's SQL text, if any.
        public var defaultValue: String?
        /// The 1-based position in the primary key, 0 when not part of it.
        public var primaryKey: Int

        /// Creates a column description.
        public init(_ name: String, _ type: String, notNull: Bool, defaultValue: String? = nil, primaryKey: Int = 0) {
            self.name = name
            self.type = type
            self.notNull = notNull
            self.defaultValue = defaultValue
            self.primaryKey = primaryKey
        }

        /// `name TYPE [NOT NULL] [DEFAULT v] [PK]`.
        public var description: String {
            var text = "\(name) \(type)"
            if notNull { text += " NOT NULL" }
            if let defaultValue { text += " DEFAULT \(defaultValue)" }
            if primaryKey > 0 { text += " PRIMARY KEY" }
            return text
        }
    }

    private static let id = Column("id", "INTEGER", notNull: true, primaryKey: 1)
    private static let cacheColumns: [Column] = [
        Column("expires", "INTEGER", notNull: false),
        Column("modified", "INTEGER", notNull: false),
        Column("etag", "TEXT", notNull: false),
        Column("data", "BLOB", notNull: false),
        Column("compressed", "INTEGER", notNull: true, defaultValue: "0"),
        Column("accessed", "INTEGER", notNull: true),
        Column("must_revalidate", "INTEGER", notNull: true, defaultValue: "0"),
    ]

    /// The expected columns of each table, in order.
    public static let tables: [(name: String, columns: [Column])] = [
        ("resources", [id, Column("url", "TEXT", notNull: true), Column("kind", "INTEGER", notNull: true)]
            + cacheColumns),
        ("tiles", [
            id, Column("url_template", "TEXT", notNull: true), Column("pixel_ratio", "INTEGER", notNull: true),
            Column("z", "INTEGER", notNull: true), Column("x", "INTEGER", notNull: true),
            Column("y", "INTEGER", notNull: true),
        ] + cacheColumns),
        ("regions", [id, Column("definition", "TEXT", notNull: true), Column("description", "BLOB", notNull: false)]),
        ("region_resources", [
            Column("region_id", "INTEGER", notNull: true), Column("resource_id", "INTEGER", notNull: true),
        ]),
        ("region_tiles", [
            Column("region_id", "INTEGER", notNull: true), Column("tile_id", "INTEGER", notNull: true),
        ]),
    ]

    /// The index names (beyond SQLite's automatic UNIQUE indexes).
    public static let indexes = [
        "resources_accessed", "tiles_accessed", "region_resources_resource_id", "region_tiles_tile_id",
    ]
}
