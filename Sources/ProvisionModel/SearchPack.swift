import Foundation

/// A search pack of the job file: a place index (`search/<id>.db` in the store) built from the
/// stored vector tiles of some sources, over the regions that name it.
public struct SearchPack: Equatable, Sendable {
    /// The id regions name it by; the file is `search/<id>.db`.
    public var id: String
    /// What it indexes, in the order given: a style pack id (all its vector sources),
    /// `<stylePack>/<sourceName>` (one source of a style), or a tileset URL a region draws with.
    public var sources: [String]
    /// The properties that hold names, in order of preference.
    public var names: [String]
    /// For a tile schema the index does not know: which layers hold which kind of named
    /// feature, by layer name; nil to detect OpenMapTiles or Mapbox Streets v8.
    public var layers: [String: SearchLayerMapping]?

    /// The name fields when a pack gives none: the local name, English, international, Latin.
    public static let defaultNames = ["name", "name:en", "name_en", "name_int", "name:latin"]
    /// The kinds a layer mapping may give (the place index's kinds, in its order).
    public static let kinds = ["place", "poi", "street", "water", "waterway", "natural", "airport", "park", "transit"]

    public init(id: String, sources: [String], names: [String] = SearchPack.defaultNames,
                layers: [String: SearchLayerMapping]? = nil) {
        self.id = id
        self.sources = sources
        self.names = names
        self.layers = layers
    }

    /// The file's path inside the store directory.
    public var file: String { "search/\(id).db" }
}

/// How one layer of an unknown tile schema feeds a search pack (a layer rule of the index).
public struct SearchLayerMapping: Equatable, Sendable {
    /// One of `SearchPack.kinds`.
    public var kind: String
    /// The property holding the feature's class.
    public var classKey: String
    /// The property holding its subclass, if any.
    public var subclassKey: String?
    /// Properties holding its rank, first present wins (lower is more important).
    public var rankKeys: [String]

    public init(kind: String, classKey: String = "class", subclassKey: String? = nil, rankKeys: [String] = []) {
        self.kind = kind
        self.classKey = classKey
        self.subclassKey = subclassKey
        self.rankKeys = rankKeys
    }
}

/// A search pack as a plan resolved it: its sources' tile templates, its regions, and whether
/// the apply builds its file.
public struct SearchPackPlan: Equatable, Sendable {
    /// The pack of the job.
    public var pack: SearchPack
    /// Its vector sources, resolved, in the order the pack names them (each template once).
    public var sources: [SearchPackSource]
    /// The ids of the regions that name it, in job order.
    public var regions: [String]
    /// sha256 (`sha256:…`) of everything but the tiles that decides the file: the pack's
    /// settings, its sources' templates and layers, its regions' geometries.
    public var settingsDigest: String
    /// What the apply does with the file.
    public var action: SearchPackAction
    /// Why, in a few words (`new`, `names changed`, `file missing` …); empty when kept.
    public var reason: String

    public init(pack: SearchPack, sources: [SearchPackSource], regions: [String], settingsDigest: String,
                action: SearchPackAction, reason: String) {
        self.pack = pack
        self.sources = sources
        self.regions = regions
        self.settingsDigest = settingsDigest
        self.action = action
        self.reason = reason
    }
}

/// What an apply does with a search pack's file.
public enum SearchPackAction: String, Equatable, Sendable {
    /// Built (or rebuilt) from the stored tiles.
    case build
    /// Left as it is: its inputs did not change and it is whole.
    case keep
}

/// One vector source of a search pack, resolved.
public struct SearchPackSource: Equatable, Sendable {
    /// As the pack names it: `<stylePack>/<sourceName>` or the tileset URL.
    public var name: String
    /// The canonical tile URL template the tiles are stored under.
    public var urlTemplate: String
    /// The pixel ratio stored with the tiles.
    public var pixelRatio: Int
    /// Whether the source numbers rows from the south.
    public var isTMS: Bool
    /// Its TileJSON's `vector_layers` ids, sorted; nil when it has no TileJSON saying so.
    public var vectorLayers: [String]?
    /// Its TileJSON's attribution, empty when none.
    public var attribution: String

    public init(name: String, urlTemplate: String, pixelRatio: Int, isTMS: Bool, vectorLayers: [String]?,
                attribution: String) {
        self.name = name
        self.urlTemplate = urlTemplate
        self.pixelRatio = pixelRatio
        self.isTMS = isTMS
        self.vectorLayers = vectorLayers
        self.attribution = attribution
    }
}

/// What the lock records of a search pack's file, so a later apply rebuilds it only when its
/// inputs changed, or the file is missing or not the one written.
public struct SearchPackRecord: Equatable, Sendable {
    public var id: String
    /// `search/<id>.db`.
    public var file: String
    /// sha256 (`sha256:…`) of the file's bytes.
    public var digest: String
    /// sha256 of the settings digest and every tile read (template, z, x, y and the sha256 of
    /// its inflated bytes, in the order read).
    public var inputDigest: String
    /// The plan's `SearchPackPlan.settingsDigest` it was built with.
    public var settingsDigest: String
    /// Entries (places) and the file's size.
    public var entries: Int
    public var bytes: Int64
    /// Vector tiles read.
    public var tiles: Int

    public init(id: String, file: String, digest: String, inputDigest: String, settingsDigest: String, entries: Int,
                bytes: Int64, tiles: Int) {
        self.id = id
        self.file = file
        self.digest = digest
        self.inputDigest = inputDigest
        self.settingsDigest = settingsDigest
        self.entries = entries
        self.bytes = bytes
        self.tiles = tiles
    }
}

/// What one search pack's build read and what of it was bad: skipped or cleaned, and counted,
/// so an apply names bad input instead of indexing it or failing on it.
public struct SearchPackFindings: Equatable, Sendable {
    /// The layers of a source's schema that none of its tiles held.
    public struct MissingLayers: Equatable, Sendable {
        /// The source as the pack names it.
        public var source: String
        public var layers: [String]

        public init(source: String, layers: [String]) {
            self.source = source
            self.layers = layers
        }
    }

    public var id: String
    /// Vector tiles read, and those of them that were not vector tiles (skipped).
    public var tiles = 0
    public var malformedTiles = 0
    /// Features read from the schema's layers, and those of them with a name.
    public var features = 0
    public var namedFeatures = 0
    /// Named features whose geometry could not be decoded (skipped).
    public var brokenGeometry = 0
    /// Names whose control characters became spaces (kept, cleaned).
    public var namesWithControlCharacters = 0
    /// Names longer than the index takes (skipped).
    public var namesTooLong = 0
    /// Per source, its schema's layers no tile held.
    public var missingLayers: [MissingLayers] = []

    public init(id: String) { self.id = id }

    /// Whether anything was skipped, cleaned or missing.
    public var hasFindings: Bool {
        malformedTiles + brokenGeometry + namesWithControlCharacters + namesTooLong > 0 || !missingLayers.isEmpty
    }
}
