import Foundation
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

    /// The canonical, unexpanded URL template (`tiles[0]`): the tile key's `url_template`.
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

    /// A tileset with the given properties.
    public init(template: String, scheme: Scheme = .xyz, minZoom: Int = 0, maxZoom: Int = 22, tileSize: Int = 512,
                type: SourceType = .vector) {
        self.template = template
        self.scheme = scheme
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.tileSize = tileSize
        self.type = type
    }

    /// The tileset a TileJSON document describes, with its tile template canonicalised when the
    /// TileJSON was loaded from a `mapbox://` source URL.
    ///
    /// - Parameters:
    ///   - tileJSON: the parsed TileJSON.
    ///   - sourceURL: the canonical URL the TileJSON is stored under (the style source's `url`).
    ///   - type: the type of the style source.
    ///   - tileSize: the style source's tile size (vector sources: 512).
    /// - Throws: `PlanningError` (document = `sourceURL`) when the TileJSON is not usable.
    public static func from(tileJSON: JSONValue, sourceURL: String, type: SourceType, tileSize: Int) throws -> TileSource {
        var source = try parseTileset(tileJSON, document: sourceURL, at: .root, type: type, tileSize: tileSize)
        if MapboxURL.isMapboxURL(sourceURL) {
            source.template = MapboxURL.canonicalizeTileURL(source.template, type: type, tileSize: tileSize)
        }
        return source
    }

    /// The tileset of a style source that lists its `tiles` inline. No canonicalisation applies.
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

    static func parseTileset(_ json: JSONValue, document: String, at pointer: JSONPointer, type: SourceType,
                             tileSize: Int) throws -> TileSource {
        func fail(_ p: JSONPointer, _ message: String) -> PlanningError {
            PlanningError(document: document, pointer: p.description, message: message)
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
        guard let first = templates.first?.stringValue else {
            throw fail(pointer.appending("tiles"), "expected at least one URL template, found an empty array")
        }
        let scheme: Scheme = object["scheme"]?.stringValue == "tms" ? .tms : .xyz

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
        return TileSource(template: first, scheme: scheme, minZoom: minZoom, maxZoom: maxZoom, tileSize: tileSize,
                          type: type)
    }

    // MARK: - Zoom levels

    /// The zoom level of this tileset whose tiles cover region zoom `zoom` (MapLibre's
    /// `util::coveringZoomLevel`): z + log2(512 / tileSize), rounded for raster (and video)
    /// sources and floored for all others, raster-dem included.
    public func coveringZoomLevel(_ zoom: Double) -> Int {
        let z = zoom + log2(512.0 / Double(tileSize))
        return Int(type == .raster || type == .video ? z.rounded() : z.rounded(.down))
    }

    /// The tile zoom levels fetched for a region zoom range: the covering levels of the region's
    /// bounds, clamped to the tileset's own range; nil when that is empty.
    ///
    /// A 256-pixel raster source shifts the range up by one: region 0…15 fetches z1…16.
    public func zoomRange(regionMin: Int, regionMax: Int) -> ClosedRange<Int>? {
        let low = max(coveringZoomLevel(Double(regionMin)), minZoom, 0)
        let high = min(coveringZoomLevel(Double(regionMax)), maxZoom)
        return low <= high ? low...high : nil
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
