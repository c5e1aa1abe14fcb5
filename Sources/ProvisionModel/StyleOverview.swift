/// What a style pack's style does, as the plan shows it: its sources, fonts and sprites.
public struct StyleOverview: Equatable, Sendable {
    /// Every source of the style, in style order, skipped ones included.
    public var sources: [StyleSourceSummary]
    /// The font stacks glyphs are fetched for, in MapLibre's order.
    public var fontStacks: [[String]]
    /// Glyph range files fetched per font stack (256, or 130 without ideographs); 0 without a `glyphs` template.
    public var glyphRangesPerStack: Int
    /// The style's `glyphs` template, if it has one.
    public var glyphsTemplate: String?
    /// The sprite base URLs, in style order.
    public var sprites: [String]

    /// An overview with the given parts (none by default).
    public init(sources: [StyleSourceSummary] = [], fontStacks: [[String]] = [], glyphRangesPerStack: Int = 0,
                glyphsTemplate: String? = nil, sprites: [String] = []) {
        self.sources = sources
        self.fontStacks = fontStacks
        self.glyphRangesPerStack = glyphRangesPerStack
        self.glyphsTemplate = glyphsTemplate
        self.sprites = sprites
    }
}

/// One source of a style and what a download fetches for it.
public struct StyleSourceSummary: Equatable, Sendable {
    /// What is fetched for a source.
    public enum Fetch: Equatable, Sendable {
        /// Its tiles (and its TileJSON when it has a `url`); `StylePackPlan.sources` holds the tileset.
        case tiles
        /// One resource: a GeoJSON `data` URL or an image `url`.
        case resource(String)
        /// Nothing: inline GeoJSON data, an image with an empty `url`.
        case nothing
        /// Nothing, because MapLibre skips the source too; the reason says why.
        case skipped(String)

        /// `tiles`, `resource`, `nothing` or `skipped`.
        public var name: String {
            switch self {
            case .tiles: return "tiles"
            case .resource: return "resource"
            case .nothing: return "nothing"
            case .skipped: return "skipped"
            }
        }
    }

    /// The source's name (its key in the style's `sources`).
    public var name: String
    /// The source's `type` as written (`vector`, `raster-dem` …; `?` when it has none).
    public var type: String
    /// What is fetched for it.
    public var fetch: Fetch
    /// For a tiled source: how many URL templates its tileset lists (the first one is used).
    public var templateCount: Int
    /// For a tiled source: the tile zooms fetched for each region drawn with the pack, in job order.
    public var zooms: [RegionZooms]

    /// A source summary.
    public init(name: String, type: String, fetch: Fetch, templateCount: Int = 0, zooms: [RegionZooms] = []) {
        self.name = name
        self.type = type
        self.fetch = fetch
        self.templateCount = templateCount
        self.zooms = zooms
    }
}

/// The tile zooms one source is fetched at for one region.
public struct RegionZooms: Equatable, Sendable {
    /// The job region id.
    public var region: String
    /// The zooms fetched, after the covering-zoom rule and the source's own range; nil for none.
    public var zooms: ClosedRange<Int>?

    /// The zooms of `region`.
    public init(region: String, zooms: ClosedRange<Int>?) {
        self.region = region
        self.zooms = zooms
    }
}
