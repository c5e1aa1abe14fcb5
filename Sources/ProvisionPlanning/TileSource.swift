import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// The type of a style source, as the MapLibre Style Specification names it.
public enum SourceType: String, Equatable, Hashable, Sendable, CaseIterable {
    /// Vector tiles; always 512 pixels.
    case vector
    /// Raster tiles of the style's `tileSize` (default 512).
    case raster
    /// Raster elevation tiles of the style's `tileSize` (default 512).
    case rasterDEM = "raster-dem"
    /// GeoJSON, inline or from a `data` URL.
    case geojson
    /// One image at a `url`.
    case image
    /// Video; nothing is fetched for it offline.
    case video

    /// Whether the source draws from tiles (and so has a tileset).
    public var isTiled: Bool { self == .vector || self == .raster || self == .rasterDEM }
}

/// The resolved tileset of one source: what its tiles are stored under and fetched from.
public struct TileSource: Hashable, Sendable {
    /// How rows are numbered in the template.
    public enum Scheme: String, Hashable, Sendable {
        /// Rows from the north (the default).
        case xyz
        /// Rows from the south: the stored and requested y is 2^z − 1 − y.
        case tms
    }

    /// The canonical, unexpanded URL template (`tiles[0]`, made absolute): the tile key's `url_template`.
    public var template: String
    /// How the template numbers rows (TileJSON `scheme`; only `"tms"` flips).
    public var scheme: Scheme
    /// The lowest zoom the tileset has tiles for (TileJSON default 0).
    public var minZoom: Int
    /// The highest zoom the tileset has tiles for (TileJSON default 22).
    public var maxZoom: Int
    /// The tile size in pixels the zoom levels are shifted by (vector: always 512).
    public var tileSize: Int
    /// The type of the source the tileset belongs to.
    public var type: SourceType
    /// The TileJSON `bounds` as MapLibre keeps them; nil when absent (the whole world).
    public var bounds: TileBounds?
    /// How many templates the TileJSON's `tiles` lists (MapLibre only ever requests the first).
    public var templateCount: Int
    /// Sentences about how the TileJSON was read that the plan should show (bounds clamped or
    /// refused), in document order.
    public var readingNotes: [String]
    /// Why MapLibre refuses the tileset altogether (it then has no tiles), or nil.
    public var refusal: String?

    /// A tileset with the given properties.
    public init(template: String, scheme: Scheme = .xyz, minZoom: Int = 0, maxZoom: Int = 22, tileSize: Int = 512,
                type: SourceType = .vector, bounds: TileBounds? = nil, templateCount: Int = 1,
                readingNotes: [String] = [], refusal: String? = nil) {
        self.template = template
        self.scheme = scheme
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.tileSize = tileSize
        self.type = type
        self.bounds = bounds
        self.templateCount = templateCount
        self.readingNotes = readingNotes
        self.refusal = refusal
    }

    /// The tileset a TileJSON document describes. Relative templates are resolved against the
    /// TileJSON's URL (RFC 3986, on the text); for a `mapbox://` source URL against the API URL
    /// it is fetched from, and the result is then canonicalised to `mapbox://tiles/…`.
    ///
    /// - Parameters:
    ///   - tileJSON: the parsed TileJSON.
    ///   - sourceURL: the canonical URL the TileJSON is stored under (the style source's `url`).
    ///   - type: the type of the style source.
    ///   - tileSize: the style source's tile size (vector sources: 512).
    /// - Throws: `DocumentProblem` (document = `sourceURL`) when the TileJSON is not usable.
    public static func from(tileJSON: JSONValue, sourceURL: String, type: SourceType, tileSize: Int) throws -> TileSource {
        let base = MapboxURL.isMapboxURL(sourceURL) ? mapboxRequestBase(sourceURL) : sourceURL
        var source = try parseTileset(tileJSON, document: sourceURL, at: .root, type: type, tileSize: tileSize,
                                      base: base)
        if MapboxURL.isMapboxURL(sourceURL) {
            source.template = MapboxURL.canonicalizeTileURL(source.template, type: type, tileSize: tileSize)
        }
        return source
    }

    /// The tileset of a style source that lists its `tiles` inline. No canonicalisation applies,
    /// and templates must be absolute (MapLibre resolves nothing in a style).
    ///
    /// - Parameters:
    ///   - inlineSource: the source object from the style.
    ///   - styleURL: the style's URL, for errors.
    ///   - pointer: the JSON pointer of the source object in the style (`/sources/name`), for errors.
    public static func from(inlineSource: JSONValue, styleURL: String, pointer: String, type: SourceType,
                            tileSize: Int) throws -> TileSource {
        try parseTileset(inlineSource, document: styleURL, at: JSONPointer.parse(pointer), type: type,
                         tileSize: tileSize)
    }

    /// The URL a `mapbox://` TileJSON is requested from, without its query (no token is involved).
    static func mapboxRequestBase(_ sourceURL: String) -> String {
        guard let network = MapboxURL.networkURL(for: sourceURL, accessToken: "-") else { return sourceURL }
        return network.firstIndex(of: "?").map { String(network[..<$0]) } ?? network
    }

    /// Reads a TileJSON (or an inline source) as MapLibre's `Converter<Tileset>` does, with
    /// errors for what MapLibre would refuse or could not request. `base` is the URL relative
    /// templates resolve against; nil refuses them.
    static func parseTileset(_ json: JSONValue, document: String, at pointer: JSONPointer, type: SourceType,
                             tileSize: Int, base: String? = nil) throws -> TileSource {
        func fail(_ p: JSONPointer, _ message: String) -> DocumentProblem {
            DocumentProblem(document: document, pointer: p.description, message: message)
        }
        guard let object = json.objectValue else {
            throw fail(pointer, "expected a TileJSON object, found \(json.typeDescription)")
        }
        guard let tiles = object["tiles"] else {
            throw fail(pointer, "expected a \"tiles\" array of URL templates, found none")
        }
        guard let templates = tiles.arrayValue else {
            throw fail(pointer.appending("tiles"), "expected an array of URL templates, found \(tiles.typeDescription)")
        }
        for (i, item) in templates.enumerated() where item.stringValue == nil {
            throw fail(pointer.appending("tiles").appending(i), "expected a URL template string, found \(item.typeDescription)")
        }
        guard let written = templates.first?.stringValue else {
            throw fail(pointer.appending("tiles"), "expected at least one URL template, found an empty array")
        }
        let template = try absoluteTemplate(written, base: base) { fail(pointer.appending("tiles").appending(0), $0) }

        var scheme = Scheme.xyz
        if let value = object["scheme"] {
            guard let name = value.stringValue else {
                throw fail(pointer.appending("scheme"), "expected \"xyz\" or \"tms\", found \(value.typeDescription)")
            }
            // MapLibre reads any other string as xyz.
            if name == "tms" { scheme = .tms }
        }

        func zoom(_ key: String, default value: Int) throws -> Int {
            guard let member = object[key] else { return value }
            guard let number = member.doubleValue, number >= 0, number <= 255 else {
                throw fail(pointer.appending(key), "expected a zoom level from 0 to 255, found \(member.serialized())")
            }
            // MapLibre reads zooms as floats and truncates them to uint8.
            return Int(Float(number))
        }
        let minZoom = try zoom("minzoom", default: 0)
        let maxZoom = try zoom("maxzoom", default: 22)
        var source = TileSource(template: template, scheme: scheme, minZoom: minZoom, maxZoom: maxZoom,
                                tileSize: tileSize, type: type, templateCount: templates.count)
        if let value = object["bounds"] {
            try source.readBounds(value) { fail(pointer.appending("bounds"), $0) }
        }
        return source
    }

    /// The template MapLibre requests: `written` made absolute against `base`; it must be an
    /// http(s) (or `mapbox://`) URL with a `{z}`, `{quadkey}` or `{bbox-epsg-3857}` token.
    private static func absoluteTemplate(_ written: String, base: String?,
                                         fail: (String) -> DocumentProblem) throws -> String {
        var template = written
        let scheme = URLReference(written).scheme?.lowercased()
        if scheme == nil {
            guard let base else {
                throw fail("expected an absolute http(s) URL template, found the relative \"\(written)\"")
            }
            template = URLTemplate.resolve(written, against: base)
        }
        let resolvedScheme = URLReference(template).scheme?.lowercased()
        guard let resolvedScheme, ["http", "https", "mapbox"].contains(resolvedScheme) else {
            throw fail("expected an http:// or https:// URL template, found \"\(written)\""
                       + (resolvedScheme.map { " (scheme \($0):)" } ?? ""))
        }
        guard TileURLTemplate.isTemplate(template) else {
            throw fail("expected a URL template with {z} (or {quadkey} or {bbox-epsg-3857}), found \"\(written)\"")
        }
        return template
    }

    /// Reads TileJSON `bounds` as MapLibre does: four numbers, latitudes clamped to ±90 and
    /// longitudes to ±180 (noted), refused when south ≥ north or west ≥ east (noted; the
    /// tileset then has no tiles, as MapLibre loads none of it).
    private mutating func readBounds(_ value: JSONValue, fail: (String) -> DocumentProblem) throws {
        guard let items = value.arrayValue, items.count == 4 else {
            throw fail("expected bounds [west, south, east, north], found \(value.serialized())")
        }
        let numbers = items.compactMap(\.doubleValue)
        guard numbers.count == 4 else {
            throw fail("expected four numbers [west, south, east, north], found \(value.serialized())")
        }
        let (west, south, east, north) = (numbers[0], numbers[1], numbers[2], numbers[3])
        let written = value.serialized()
        guard let bounds = TileBounds(west: west, south: south, east: east, north: north) else {
            let why: String
            if min(max(south, -90), 90) >= min(max(north, -90), 90) {
                why = "its bounds \(written) have a south edge not below the north edge"
            } else if west >= east {
                why = "its bounds \(written) have a west edge not left of the east edge (bounds must not cross the antimeridian)"
            } else {
                why = "its bounds \(written) lie outside the world"
            }
            refusal = why
            readingNotes.append("MapLibre refuses this TileJSON: \(why); no tile of it is fetched")
            return
        }
        if bounds.west != west || bounds.east != east || bounds.south != south || bounds.north != north {
            readingNotes.append("bounds \(written) are clamped to [\(bounds.west), \(bounds.south), \(bounds.east), "
                                + "\(bounds.north)] as MapLibre does")
        }
        self.bounds = bounds.isWorld ? nil : bounds
    }

    // MARK: - Zoom levels

    /// The zoom level of this tileset whose tiles cover region zoom `zoom` (MapLibre's
    /// `util::coveringZoomLevel`): z + log2(512 / tileSize), rounded for raster (and video)
    /// sources and floored for all others, raster-dem included.
    public func coveringZoomLevel(_ zoom: Double) -> Int {
        let z = zoom + log2(512.0 / Double(tileSize))
        return Int(type == .raster || type == .video ? z.rounded() : z.rounded(.down))
    }

    /// THE tile zoom levels fetched for a region zoom range; nil when none are.
    ///
    /// MapLibre's offline download fetches the covering levels of the region's zooms clamped to
    /// the tileset's own range: a 256-pixel raster source shifts the range up by one (region
    /// 0…15 fetches z1…16), and a region reaching past `maxzoom` fetches up to `maxzoom` (the
    /// renderer overzooms those tiles). When the whole region lies above `maxzoom`, MapLibre
    /// fetches nothing, although the renderer would draw the layer from the `maxzoom` tiles;
    /// with `overzoom` (the default) those tiles, at `maxzoom` alone, are fetched.
    /// A tileset MapLibre refuses (``refusal``) has no zooms.
    public func zoomRange(regionMin: Int, regionMax: Int, overzoom: Bool = true) -> ClosedRange<Int>? {
        guard refusal == nil else { return nil }
        let coverMin = coveringZoomLevel(Double(regionMin))
        let low = max(coverMin, minZoom, 0)
        let high = min(coveringZoomLevel(Double(regionMax)), maxZoom)
        if low <= high { return low...high }
        if overzoom && coverMin > maxZoom && maxZoom >= max(minZoom, 0) { return maxZoom...maxZoom }
        return nil
    }

    /// Whether `zoomRange` fetches this region's zooms only because of overzoom (the region
    /// lies wholly above `maxzoom`).
    public func isOverzoomed(regionMin: Int, regionMax: Int) -> Bool {
        zoomRange(regionMin: regionMin, regionMax: regionMax, overzoom: false) == nil
            && zoomRange(regionMin: regionMin, regionMax: regionMax, overzoom: true) != nil
    }

    // MARK: - Keys and URLs

    /// 2 when the template has a `{ratio}` token and the pack draws at more than 1x, else 1.
    public func pixelRatio(forPack pack: StylePack) -> Int {
        pixelRatio(forDeviceRatio: pack.pixelRatio)
    }

    /// 2 when the template has a `{ratio}` token and `ratio` > 1, else 1: the tile key's pixel ratio.
    public func pixelRatio(forDeviceRatio ratio: Int) -> Int {
        template.contains("{ratio}") && ratio > 1 ? 2 : 1
    }

    /// The stored row of geographic tile `tile`: flipped for `scheme: tms`.
    public func storedTile(for tile: TileID) -> TileID {
        scheme == .tms ? TileID(z: tile.z, x: tile.x, y: tile.tmsY) : tile
    }

    /// The key geographic (XYZ, rows from the north) tile `tile` is stored under.
    public func tileKey(for tile: TileID, pixelRatio: Int) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: self.pixelRatio(forDeviceRatio: pixelRatio), tile: storedTile(for: tile))
    }

    /// The canonical URL of geographic tile `tile`: the template with `{z} {x} {y} {quadkey}
    /// {bbox-epsg-3857} {prefix} {ratio}` expanded, using the stored (post-TMS) row; any other
    /// token is left literally.
    public func url(for tile: TileID, pixelRatio: Int) -> String {
        TileURLTemplate.expand(template, tile: storedTile(for: tile), pixelRatio: pixelRatio)
    }

    /// The request that fetches geographic tile `tile` at device ratio `pixelRatio`.
    public func fetchRequest(for tile: TileID, pixelRatio: Int) -> FetchRequest {
        FetchRequest(url: url(for: tile, pixelRatio: pixelRatio), kind: .tile,
                     tileKey: tileKey(for: tile, pixelRatio: pixelRatio), tile: tile)
    }
}
