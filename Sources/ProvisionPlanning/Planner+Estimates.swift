import Foundation
import ProvisionFoundation
import ProvisionModel

/// The mean tile size per zoom an origin archive measured for one tile template.
public struct OriginTileSizes: Equatable, Sendable {
    /// The archive, as the job's `origins` names it (for messages).
    public var origin: String
    /// Mean bytes per tile by zoom.
    public var sizes: [Int: Double]

    /// The sizes `origin` measured.
    public init(origin: String, sizes: [Int: Double]) {
        self.origin = origin
        self.sizes = sizes
    }
}

/// Where a tile byte estimate came from: `maxBytes` refusals name it.
public enum TileByteBasis: Hashable, Sendable, Comparable {
    /// The mean stored size of the template's tiles at that zoom, measured in the store.
    case store
    /// The mean size of the origin archive's tiles at that zoom.
    case origin(String)
    /// The documented size assumed per tile of a source type (docs/job-file.md, "Byte estimates").
    case assumed(SourceType, Int)

    /// The basis in words.
    public var text: String {
        switch self {
        case .store: return "the mean size of the tiles already stored"
        case .origin(let origin): return "the mean tile size per zoom of the origin archive \(origin)"
        case .assumed(let type, let bytes):
            return "an assumed \(grouped(bytes)) bytes per \(type.rawValue) tile (docs/job-file.md, \"Byte estimates\")"
        }
    }

    /// Ordered by their text, so a message lists them the same way every time.
    public static func < (a: TileByteBasis, b: TileByteBasis) -> Bool { a.text < b.text }
}

extension Planner {
    /// Bytes assumed per raster tile (PNG, JPEG or WebP) where nothing measured one: a typical
    /// 256-pixel street map raster tile is 10–25 kB, a 512-pixel or `@2x` one about twice that.
    public static let assumedRasterTileBytes = 30_000
    /// Bytes assumed per terrain (`raster-dem`) tile: 512-pixel Terrarium or Mapbox Terrain-RGB
    /// PNGs of mountains run 60–150 kB, of plains far less.
    public static let assumedTerrainTileBytes = 80_000

    /// The bytes assumed per tile of a source type; vector tiles take `vectorBytes` (the plan
    /// input's `assumedTileBytes`, `defaultTileBytes` unless a caller measured better).
    public static func assumedTileBytes(for type: SourceType, vectorBytes: Int) -> Int {
        switch type {
        case .raster: return assumedRasterTileBytes
        case .rasterDEM: return assumedTerrainTileBytes
        default: return vectorBytes
        }
    }

    /// The source type of every tile template the job's packs and tilesets resolve to (the
    /// first one seen for a template several sources share).
    static func templateTypes(_ input: PlanInput) -> [String: SourceType] {
        var types: [String: SourceType] = [:]
        for pack in input.packs.values.sorted(by: { $0.pack.id < $1.pack.id }) {
            for source in pack.tileSources where types[source.template] == nil { types[source.template] = source.type }
        }
        for key in input.regionTilesets.keys.sorted() {
            for source in input.regionTilesets[key]?.tileSources ?? [] where types[source.template] == nil {
                types[source.template] = source.type
            }
        }
        return types
    }

    /// The note naming an assumed size per format when the tile byte estimate rests on one
    /// (nothing measured those tiles: no stored tile of their template and zoom, no MBTiles
    /// origin), so the plan's `~` figures are never an unnamed guess.
    static func estimateNote(_ bases: Set<TileByteBasis>) -> [PlanNote] {
        let assumed = bases.filter { if case .assumed = $0 { return true } else { return false } }.sorted()
        guard !assumed.isEmpty else { return [] }
        return [PlanNote(subject: "byte estimate", message: "tiles nothing measured (no stored tile of their template and "
                         + "zoom, no MBTiles origin) are estimated at " + listed(assumed.map(\.text)))]
    }
}
