/// The keys a job file (version 1) may hold, object by object.
///
/// The loader checks members against these lists, and a test checks that the JSON Schema in
/// `Jobs/schema/job.schema.json` names exactly these keys, so the two cannot drift apart.
public enum JobFileKeys {
    /// Keys of the top-level object. `$schema` (a string) is accepted and ignored so that editors
    /// can find the JSON Schema.
    public static let job = ["$schema", "version", "name", "store", "stylePacks", "regions", "origins", "limits",
                             "download", "searchPacks", "routingPacks", "attribution"]
    /// Top-level keys that must be present.
    public static let requiredJob = ["version", "name", "regions"]
    /// Keys of an entry of `stylePacks`.
    public static let stylePack = ["id", "style", "pixelRatio", "glyphs", "overzoom", "metadata"]
    /// Keys an entry of `stylePacks` must have.
    public static let requiredStylePack = ["id", "style"]
    /// Keys of an entry of `regions`.
    public static let region = ["id", "name", "bbox", "geometry", "geojson", "buffer", "zoom", "stylePacks", "tilesets",
                                "searchPacks", "routingPacks", "metadata", "limits"]
    /// Keys an entry of `regions` must have (besides exactly one of `areaKeys`).
    public static let requiredRegion = ["id", "name", "zoom"]
    /// The region keys of which exactly one gives the region's area.
    public static let areaKeys = ["bbox", "geometry", "geojson"]
    /// Keys of a region's `limits`.
    public static let limits = ["maxTiles", "maxBytes"]
    /// Keys of the job's `limits`: a region's, and the bundle-wide vendor limits.
    public static let jobLimits = limits + ["mapboxTiles", "requireAttribution"]
    /// Keys of the job's `attribution` when it is an object rather than its text.
    public static let attribution = ["text", "licence", "url"]
    /// Keys the job's `attribution` object must have.
    public static let requiredAttribution = ["text"]
    /// Keys of an entry of `searchPacks`.
    public static let searchPack = ["id", "sources", "names", "layers"]
    /// Keys an entry of `searchPacks` must have.
    public static let requiredSearchPack = ["id", "sources"]
    /// Keys of an entry of `routingPacks`.
    public static let routingPack = ["id", "tiles", "extract", "gzip", "levels", "attribution", "licence"]
    /// Keys an entry of `routingPacks` must have (besides exactly one of `routingSourceKeys`).
    public static let requiredRoutingPack = ["id"]
    /// The routing pack keys of which exactly one says where its tiles come from.
    public static let routingSourceKeys = ["tiles", "extract"]
    /// Keys of a layer of a search pack's `layers`.
    public static let searchLayer = ["kind", "class", "subclass", "rank"]
    /// Keys a layer of a search pack's `layers` must have.
    public static let requiredSearchLayer = ["kind"]
    /// Keys of `download`.
    public static let download = ["concurrency", "retries", "timeoutSeconds", "perHost", "requestsPerSecond",
                                  "maxResponseBytes", "stallSeconds", "missingTiles", "userAgent"]
}
