import Foundation

/// What a named feature is, across tile schemas.
public enum PlaceKind: String, CaseIterable, Codable, Sendable, Comparable {
    /// A settlement, region or country (OpenMapTiles `place`, Mapbox `place_label`).
    case place
    /// A point of interest (`poi`, `poi_label`).
    case poi
    /// A named road or path (`transportation_name`, `road`).
    case street
    /// A named body of water (`water_name`).
    case water
    /// A river, stream or canal (`waterway`).
    case waterway
    /// A mountain peak or other natural feature (`mountain_peak`, `natural_label`).
    case natural
    /// An airport (`aerodrome_label`, `airport_label`).
    case airport
    /// A park or protected area (`park`).
    case park
    /// A stop or station (`transit_stop_label`).
    case transit

    /// Kinds compare in declaration order (entries are sorted by kind first).
    public static func < (a: PlaceKind, b: PlaceKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How one layer of a tile schema feeds the index.
public struct LayerRule: Hashable, Sendable {
    /// What the layer's named features are.
    public var kind: PlaceKind
    /// The property holding the feature's class.
    public var classKey: String
    /// The property holding its subclass (OpenMapTiles `subclass`, Mapbox `type`), if any.
    public var subclassKey: String?
    /// Properties holding the feature's own rank, first present wins (lower is more important).
    public var rankKeys: [String]
    /// Classes in order of importance: the rank of a feature without a rank property.
    public var classOrder: [String]

    /// A rule with the given parts.
    public init(kind: PlaceKind, classKey: String = "class", subclassKey: String? = nil,
                rankKeys: [String] = [], classOrder: [String] = []) {
        self.kind = kind
        self.classKey = classKey
        self.subclassKey = subclassKey
        self.rankKeys = rankKeys
        self.classOrder = classOrder
    }

    /// The rank a feature without a rank property gets when its class is not in `classOrder`.
    public static let unrankedClass = 100
}

/// A tile schema as the index reads it: which layers hold which kinds of named feature.
public struct PlaceSchema: Hashable, Sendable {
    /// `openmaptiles`, `mapbox-streets-v8` or `custom`.
    public var name: String
    /// The layers read, by layer name.
    public var layers: [String: LayerRule]

    /// A schema with the given parts.
    public init(name: String, layers: [String: LayerRule]) {
        self.name = name
        self.layers = layers
    }

    private static let settlementOrder = [
        "continent", "country", "state", "province", "city", "town", "village", "suburb", "hamlet", "quarter",
        "neighbourhood", "neighborhood", "isolated_dwelling", "locality", "island",
    ]
    private static let roadOrder = [
        "motorway", "trunk", "primary", "secondary", "tertiary", "street", "minor", "street_limited", "service",
        "track", "path", "pedestrian",
    ]

    /// OpenMapTiles 3.x (openmaptiles.org/schema).
    public static let openMapTiles = PlaceSchema(name: "openmaptiles", layers: [
        "place": LayerRule(kind: .place, rankKeys: ["rank"], classOrder: settlementOrder),
        "poi": LayerRule(kind: .poi, subclassKey: "subclass", rankKeys: ["rank"]),
        "transportation_name": LayerRule(kind: .street, subclassKey: "subclass", classOrder: roadOrder),
        "water_name": LayerRule(kind: .water, classOrder: ["ocean", "sea", "bay", "lake", "strait"]),
        "waterway": LayerRule(kind: .waterway, classOrder: ["river", "canal", "stream", "drain", "ditch"]),
        "mountain_peak": LayerRule(kind: .natural, rankKeys: ["rank"], classOrder: ["peak", "volcano", "saddle"]),
        "aerodrome_label": LayerRule(kind: .airport, classOrder: ["international", "public", "regional", "military"]),
        "park": LayerRule(kind: .park, rankKeys: ["rank"]),
    ])

    /// Mapbox Streets v8 (docs.mapbox.com/data/tilesets/reference/mapbox-streets-v8).
    public static let mapboxStreetsV8 = PlaceSchema(name: "mapbox-streets-v8", layers: [
        "place_label": LayerRule(kind: .place, subclassKey: "type", rankKeys: ["symbolrank"], classOrder: settlementOrder),
        "poi_label": LayerRule(kind: .poi, subclassKey: "type", rankKeys: ["filterrank", "sizerank"]),
        "road": LayerRule(kind: .street, subclassKey: "type", classOrder: roadOrder),
        "natural_label": LayerRule(kind: .natural, subclassKey: "maki", rankKeys: ["filterrank", "sizerank"]),
        "airport_label": LayerRule(kind: .airport, subclassKey: "maki", rankKeys: ["sizerank"]),
        "transit_stop_label": LayerRule(kind: .transit, subclassKey: "mode", rankKeys: ["filterrank"]),
    ])

    /// The schemas the index knows without a mapping.
    public static let known = [openMapTiles, mapboxStreetsV8]

    /// The schema of a source from its TileJSON's `vector_layers` ids: `mapping` when given (a
    /// custom schema, read as it is), else the known schema most of whose layers the source has.
    ///
    /// - Throws: `PlaceIndexError.unknownSchema` naming `source` when no known schema matches and
    ///   no mapping is given; `.emptyMapping` when the mapping names no layer of the source.
    public static func detect(vectorLayerIDs: [String], source: String,
                              mapping: [String: LayerRule]? = nil) throws -> PlaceSchema {
        let ids = Set(vectorLayerIDs)
        if let mapping {
            let used = mapping.filter { ids.contains($0.key) }
            guard !used.isEmpty else {
                throw PlaceIndexError.emptyMapping(source: source, layers: mapping.keys.sorted(),
                                                   vectorLayers: vectorLayerIDs.sorted())
            }
            return PlaceSchema(name: "custom", layers: mapping)
        }
        let scored = known.map { schema in (schema, schema.layers.keys.filter(ids.contains).count) }
        let best = scored.max { $0.1 < $1.1 }!
        let tied = scored.filter { $0.1 == best.1 }.count > 1
        // Half of a schema's layers at least: "place" alone (a common word) does not make OpenMapTiles.
        guard best.1 * 2 >= best.0.layers.count, !tied else {
            throw PlaceIndexError.unknownSchema(source: source, vectorLayers: vectorLayerIDs.sorted())
        }
        return best.0
    }
}

/// Why a place index cannot be built.
public enum PlaceIndexError: Error, Equatable, CustomStringConvertible {
    /// The source's layers match neither OpenMapTiles nor Mapbox Streets v8 and no mapping was given.
    case unknownSchema(source: String, vectorLayers: [String])
    /// A mapping names no layer the source has.
    case emptyMapping(source: String, layers: [String], vectorLayers: [String])

    public var description: String {
        switch self {
        case .unknownSchema(let source, let layers):
            return "source \(source): its vector layers (\(layers.joined(separator: ", "))) are neither OpenMapTiles nor "
                + "Mapbox Streets v8; give a layer mapping (layer → kind) for its schema"
        case .emptyMapping(let source, let layers, let vectorLayers):
            return "source \(source): the layer mapping names \(layers.joined(separator: ", ")), none of which is among "
                + "its vector layers (\(vectorLayers.joined(separator: ", ")))"
        }
    }
}
