import Foundation

/// A routing pack of the job file: the tiles of a Valhalla routing graph that the regions naming
/// it need, fetched tile by tile from `tiles` and written as one tile extract,
/// `routing/<id>.tar` in the store, that Valhalla opens as `mjolnir.tile_extract`.
public struct RoutingPack: Equatable, Sendable {
    /// The id regions name it by; the file is `routing/<id>.tar`.
    public var id: String
    /// The tile URL template with `{tilePath}` (Valhalla's own `mjolnir.tile_url` form): the
    /// token is replaced by a tile's path, `2/000/864/819.gph` (`.gph.gz` with ``gzip``); empty
    /// when the tiles come from ``extract``.
    public var tiles: String
    /// A tile extract (a tar with `index.bin`, as `valhalla_build_extract` writes) the tiles are
    /// read from instead of fetched one by one: a local file, or an http(s) URL read with range
    /// requests (``remoteExtract``); nil when they come from ``tiles``.
    public var extract: URL?
    /// Whether the server holds gzipped tiles (`.gph.gz`, Valhalla's `mjolnir.tile_url_gz`).
    public var gzip: Bool
    /// The hierarchy levels fetched, ascending (default 0, 1 and 2: every road level).
    public var levels: [Int]
    /// Who made the graph, for the bundle's credits; nil when not given.
    public var attribution: String?
    /// The graph's licence; nil when not given.
    public var licence: String?

    /// The road levels a pack fetches when it names none.
    public static let defaultLevels = [0, 1, 2]
    /// The levels a pack may name (3 is transit, present only in builds with transit).
    public static let knownLevels = [0, 1, 2, 3]
    /// The token of `tiles` a tile's path replaces.
    public static let pathToken = "{tilePath}"

    public init(id: String, tiles: String, extract: URL? = nil, gzip: Bool = false, levels: [Int] = RoutingPack.defaultLevels,
                attribution: String? = nil, licence: String? = nil) {
        self.id = id
        self.tiles = tiles
        self.extract = extract
        self.gzip = gzip
        self.levels = levels
        self.attribution = attribution
        self.licence = licence
    }

    /// Where the tiles come from, as the lock records it: the URL template, or `extract:<path or URL>`.
    public var source: String { extract.map { "extract:" + ($0.isFileURL ? $0.path : $0.absoluteString) } ?? tiles }

    /// The URL of an extract read over HTTP(S) (or through the `origins` its prefix maps), else nil.
    public var remoteExtract: String? { extract.flatMap { $0.isFileURL ? nil : $0.absoluteString } }

    /// The extract's path inside the store directory.
    public var file: String { "routing/\(id).tar" }

    /// The directory inside the store that holds the tiles fetched for the next extract until it
    /// is written, so an apply killed midway does not fetch them again.
    public var stagingDirectory: String { "routing/.\(id).partial" }

    /// The canonical URL of the tile at `path` (`2/000/864/819.gph`); the path itself for a pack
    /// read from an extract.
    public func url(path: String) -> String {
        guard extract == nil else { return path }
        return tiles.replacingOccurrences(of: Self.pathToken, with: gzip ? path + ".gz" : path)
    }
}

/// One tile of a routing graph, by level and index on the level's grid (the plain numbers of
/// `RoutingGraph.GraphTileID`, which the model does not import).
public struct RoutingTile: Hashable, Comparable, Sendable {
    public var level: Int
    public var index: Int

    public init(level: Int, index: Int) {
        self.level = level
        self.index = index
    }

    /// Level first, then index: the order of tile paths and of an extract's members.
    public static func < (a: RoutingTile, b: RoutingTile) -> Bool { (a.level, a.index) < (b.level, b.index) }
}

/// What an apply does with a routing pack's extract.
public enum RoutingPackAction: String, Equatable, Sendable {
    /// Written (or rewritten): tiles are added or removed, or the file is missing or changed.
    case build
    /// Left as it is: it holds exactly the tiles the regions need.
    case keep
}

/// A routing pack as a plan resolved it: the tiles its regions' covers meet, each level's changes
/// against the store, and what the apply does with the file.
public struct RoutingPackPlan: Equatable, Sendable {
    /// The pack of the job.
    public var pack: RoutingPack
    /// The ids of the regions that name it, in job order.
    public var regions: [String]
    /// Per region (in `regions` order) and level, the graph tiles its geometry meets.
    public var regionTiles: [RegionLevelTiles]
    /// Tiles to fetch (or take from the staging directory), sorted.
    public var add: [RoutingTile]
    /// Tiles the current extract holds that stay, sorted.
    public var keep: [RoutingTile]
    /// Tiles the source had none of (HTTP 404, sea) when last fetched: recorded, not fetched again.
    public var absent: [RoutingTile]
    /// Tiles the current extract holds that no region needs any more, sorted.
    public var remove: [RoutingTile]
    /// What the apply does with the file.
    public var action: RoutingPackAction
    /// Why, in a few words (`new`, `tiles change`, `file missing` …); empty when kept.
    public var reason: String

    public init(pack: RoutingPack, regions: [String], regionTiles: [RegionLevelTiles], add: [RoutingTile],
                keep: [RoutingTile], absent: [RoutingTile], remove: [RoutingTile], action: RoutingPackAction, reason: String) {
        self.pack = pack
        self.regions = regions
        self.regionTiles = regionTiles
        self.add = add
        self.keep = keep
        self.absent = absent
        self.remove = remove
        self.action = action
        self.reason = reason
    }

    /// Every tile the regions need (present or absent), sorted.
    public var wanted: [RoutingTile] { (add + keep + absent).sorted() }

    /// Per level: tiles added, removed and kept (absent tiles count as kept: nothing is done).
    public var levelChanges: [(level: Int, counts: ChangeCounts)] {
        pack.levels.map { level in
            (level, ChangeCounts(add: add.filter { $0.level == level }.count,
                                 remove: remove.filter { $0.level == level }.count,
                                 keep: (keep + absent).filter { $0.level == level }.count))
        }
    }

    /// The graph tiles one region's geometry meets on one level.
    public struct RegionLevelTiles: Equatable, Sendable {
        public var region: String
        public var level: Int
        public var tiles: Int
        /// Of those, the tiles the source is known to have none of.
        public var absent: Int

        public init(region: String, level: Int, tiles: Int, absent: Int) {
            self.region = region
            self.level = level
            self.tiles = tiles
            self.absent = absent
        }
    }
}

/// What the lock records of a routing pack's extract: where its tiles came from and each tile's
/// digest, so a later apply keeps what it holds and fetches only what is new.
public struct RoutingPackRecord: Equatable, Sendable {
    public var id: String
    /// `routing/<id>.tar`.
    public var file: String
    /// The pack's `tiles` template and `gzip` when it was written: another source refetches every tile.
    public var source: String
    public var gzip: Bool
    /// sha256 (`sha256:…`) of the extract's bytes, and their count.
    public var digest: String
    public var bytes: Int64
    /// The build every tile is of (dataset id and Valhalla version); nil for an extract of no tile.
    public var datasetID: UInt64?
    public var version: String?
    /// The tiles it holds, sorted, each with its size and sha256.
    public var tiles: [Tile]
    /// Tiles the source answered 404 for (sea): recorded so that they are not asked for again.
    public var absent: [RoutingTile]

    /// One stored tile.
    public struct Tile: Equatable, Sendable {
        public var tile: RoutingTile
        /// Its path in the extract (`2/000/864/819.gph`).
        public var path: String
        public var bytes: Int
        /// sha256 (`sha256:…`) of its bytes.
        public var digest: String

        public init(tile: RoutingTile, path: String, bytes: Int, digest: String) {
            self.tile = tile
            self.path = path
            self.bytes = bytes
            self.digest = digest
        }
    }

    public init(id: String, file: String, source: String, gzip: Bool, digest: String, bytes: Int64, datasetID: UInt64?,
                version: String?, tiles: [Tile], absent: [RoutingTile]) {
        self.id = id
        self.file = file
        self.source = source
        self.gzip = gzip
        self.digest = digest
        self.bytes = bytes
        self.datasetID = datasetID
        self.version = version
        self.tiles = tiles
        self.absent = absent
    }
}
