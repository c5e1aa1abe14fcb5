import Foundation
import TileMath

/// The shape a place's entry was made from.
public enum PlaceShape: String, Codable, Sendable {
    case point, line, polygon
}

/// One real-world feature in the index.
public struct PlaceEntry: Hashable, Sendable {
    /// The feature's cleaned names, in the order of the name fields, without repeats.
    public var names: [String]
    /// What it is.
    public var kind: PlaceKind
    /// The tile layer it came from.
    public var layer: String
    /// Its class and subclass ("" when the tile says none).
    public var featureClass: String
    public var subclass: String
    /// Point, line or polygon.
    public var shape: PlaceShape
    /// A position on the feature: the point as given (at the highest zoom it appears); the point at
    /// half the length of a line's merged pieces; a point inside a polygon.
    public var position: LngLat
    /// The box of its geometry.
    public var extent: BoundingBox
    /// Its own rank (a rank property of the tile) or else its class's order; lower is more important.
    public var rank: Int
    /// The lowest and highest zoom the feature appears at.
    public var minZoom: Int
    public var maxZoom: Int
    /// The ids of the given regions its position lies in, sorted.
    public var regions: [String]
}

/// An area entries are tagged with: a box or polygons (holes excluded).
public struct PlaceRegion: Hashable, Sendable {
    public var id: String
    public var area: CoverArea

    /// A region named `id` covering `area` (`.paths` areas contain nothing).
    public init(id: String, area: CoverArea) {
        self.id = id
        self.area = area
    }

    func contains(_ p: LngLat) -> Bool {
        switch area {
        case .bbox(let box):
            let inLng = box.crossesAntimeridian ? (p.lng >= box.west || p.lng <= box.east) : (p.lng >= box.west && p.lng <= box.east)
            return inLng && p.lat >= box.south && p.lat <= box.north
        case .polygons(let polygons):
            let w = WorldPoint(p)
            return polygons.contains { PlaceGeometry.contains($0.rings.map { $0.map(WorldPoint.init) }, w) }
        case .paths:
            return false
        }
    }
}

/// What the build saw and skipped: counts for the report, never silent.
public struct PlaceIndexReport: Hashable, Sendable {
    /// Tiles read.
    public var tiles = 0
    /// Tiles that were not vector tiles, by id (z/x/y), sorted.
    public var malformedTiles: [String] = []
    /// Features read from the schema's layers, and those of them with at least one name.
    public var features = 0
    public var namedFeatures = 0
    /// Features whose geometry could not be decoded (skipped).
    public var brokenGeometry = 0
    /// Names from which control characters were stripped (kept, cleaned).
    public var namesWithControlCharacters = 0
    /// Names longer than the limit (skipped).
    public var namesTooLong = 0
    /// The schema's layers no tile held, sorted.
    public var missingLayers: [String] = []
    /// Entries written.
    public var entries = 0

    public init() {}
}

/// The settings of one index build.
public struct PlaceIndexOptions: Sendable {
    /// The tile schema (`PlaceSchema.detect`).
    public var schema: PlaceSchema
    /// The properties that hold names, in order of preference.
    public var nameFields: [String]
    /// Regions entries are tagged with.
    public var regions: [PlaceRegion]
    /// Names longer than this many characters are skipped as absurd.
    public var maxNameLength: Int
    /// The bytes of read features the builder holds in memory before it sets them aside, sorted,
    /// on disk.
    public var memoryBudget: Int
    /// Where features set aside go (unlinked files, on that directory's disk); nil: the system's
    /// temporary directory.
    public var sortDirectory: URL?

    /// The default name fields: the local name, English, international and Latin.
    public static let defaultNameFields = ["name", "name:en", "name_en", "name_int", "name:latin"]

    public init(schema: PlaceSchema, nameFields: [String] = PlaceIndexOptions.defaultNameFields,
                regions: [PlaceRegion] = [], maxNameLength: Int = 200, memoryBudget: Int = 64 << 20,
                sortDirectory: URL? = nil) {
        self.schema = schema
        self.nameFields = nameFields
        self.regions = regions
        self.maxNameLength = maxNameLength
        self.memoryBudget = memoryBudget
        self.sortDirectory = sortDirectory
    }
}

/// Cleans one name as it comes from a tile.
enum NameCleaner {
    enum Result: Equatable {
        case name(String, strippedControls: Bool)
        case empty
        case tooLong
    }

    /// Control characters (Unicode Cc, and the line and paragraph separators) become spaces,
    /// runs of white space one space, the ends trimmed; longer than `maxLength` characters is absurd.
    static func clean(_ raw: String, maxLength: Int) -> Result {
        var stripped = false
        var scalars = String.UnicodeScalarView()
        var lastWasSpace = true
        for scalar in raw.unicodeScalars {
            let control = scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
            if control { stripped = true }
            if control || scalar.properties.isWhitespace {
                if !lastWasSpace { scalars.append(" ") }
                lastWasSpace = true
            } else {
                scalars.append(scalar)
                lastWasSpace = false
            }
        }
        var text = String(scalars)
        if text.hasSuffix(" ") { text.removeLast() }
        if text.isEmpty { return .empty }
        if text.count > maxLength { return .tooLong }
        return .name(text, strippedControls: stripped)
    }
}
