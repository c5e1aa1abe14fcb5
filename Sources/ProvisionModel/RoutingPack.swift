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
    /// The size of each tile the source holds, when the plan can tell without fetching (an
    /// extract's index, a directory origin's files); nil when only a fetch tells (tiles over HTTP).
    /// A tile to add missing from it is a cell without roads: nothing is fetched.
    public var sourceBytes: [RoutingTile: Int]?
    /// The size of each tile the current extract holds, as the lock records it.
    public var storedBytes: [RoutingTile: Int]

    public init(pack: RoutingPack, regions: [String], regionTiles: [RegionLevelTiles], add: [RoutingTile],
                keep: [RoutingTile], absent: [RoutingTile], remove: [RoutingTile], action: RoutingPackAction, reason: String,
                sourceBytes: [RoutingTile: Int]? = nil, storedBytes: [RoutingTile: Int] = [:]) {
        self.pack = pack
        self.regions = regions
        self.regionTiles = regionTiles
        self.add = add
        self.keep = keep
        self.absent = absent
        self.remove = remove
        self.action = action
        self.reason = reason
        self.sourceBytes = sourceBytes
        self.storedBytes = storedBytes
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

    /// The bytes of the tiles `add` fetches: nil when the source's sizes are unknown until fetched
    /// (and there is something to fetch).
    public var bytesToDownload: Int64? { addedBytes(add) }

    /// Per level: the bytes of the tiles added (nil: unknown until fetched), removed and kept.
    public var levelBytes: [(level: Int, bytes: RoutingBytes)] {
        pack.levels.map { level in
            func onLevel(_ tiles: [RoutingTile]) -> [RoutingTile] { tiles.filter { $0.level == level } }
            return (level, RoutingBytes(add: addedBytes(onLevel(add)), remove: storedBytes(onLevel(remove)),
                                        keep: storedBytes(onLevel(keep))))
        }
    }

    /// Per entry of `regionTiles`: of the tiles the region's geometry meets on that level, those
    /// added and those kept (absent cells counted as kept, as in `levelChanges`), with their bytes.
    /// A tile two regions need counts for both.
    public var regionChanges: [(tiles: RegionLevelTiles, add: Int, keep: Int, bytes: RoutingBytes)] {
        let added = Set(add), kept = Set(keep + absent)
        return regionTiles.map { entry in
            let add = entry.cover.filter(added.contains), keep = entry.cover.filter(kept.contains)
            return (entry, add.count, keep.count, RoutingBytes(add: addedBytes(add), remove: 0, keep: storedBytes(keep)))
        }
    }

    /// The bytes of `tiles` to add by the source's sizes; nil when they are unknown and `tiles` is not empty.
    func addedBytes(_ tiles: [RoutingTile]) -> Int64? {
        guard !tiles.isEmpty else { return 0 }
        guard let sourceBytes else { return nil }
        return tiles.reduce(0) { $0 + Int64(sourceBytes[$1] ?? 0) }
    }

    /// The bytes of stored `tiles` by the lock's record.
    func storedBytes(_ tiles: [RoutingTile]) -> Int64 { tiles.reduce(0) { $0 + Int64(storedBytes[$1] ?? 0) } }

    /// The bytes of graph tiles added, removed and kept.
    public struct RoutingBytes: Equatable, Sendable {
        /// Nil when the source's sizes are unknown until the tiles are fetched.
        public var add: Int64?
        public var remove: Int64
        public var keep: Int64
    }

    /// The graph tiles one region's geometry meets on one level.
    public struct RegionLevelTiles: Equatable, Sendable {
        public var region: String
        public var level: Int
        public var tiles: Int
        /// Of those, the tiles the source is known to have none of.
        public var absent: Int
        /// The tiles themselves (what its add and keep figures are counted from).
        public var cover: [RoutingTile]

        public init(region: String, level: Int, tiles: Int, absent: Int, cover: [RoutingTile] = []) {
            self.region = region
            self.level = level
            self.tiles = tiles
            self.absent = absent
            self.cover = cover
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
