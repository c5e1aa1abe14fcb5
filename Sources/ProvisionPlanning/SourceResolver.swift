import ProvisionFoundation
import ProvisionModel

/// Resolves one entry of a style's `sources`, as MapLibre Native's style parser reads it.
///
/// A source the parser skips (it logs a warning and goes on without it) is skipped here too,
/// with the reason: one that is not an object, has no string `type` or an unknown one (video
/// included: MapLibre Native has no video sources), a tiled source with neither `url` nor
/// `tiles` (MapTiler's attribution-only source), a GeoJSON source without `data`, an image
/// source without `url` or `coordinates`. A source the parser keeps but whose content no
/// download can fetch (a `url` that is not a string or not an absolute http(s)/`mapbox://` URL,
/// malformed `tiles`, a bad `tileSize`) is an error naming its JSON pointer.
enum SourceResolver {
    /// The source the download uses (nil when skipped) and how the plan shows it.
    struct Outcome {
        var source: SourceRef?
        var summary: StyleSourceSummary
    }

    /// Resolves source `name` (`value`, at `pointer` in the style stored under `styleURL`).
    static func resolve(name: String, value: JSONValue, styleURL: String, pointer: JSONPointer) throws -> Outcome {
        func fail(_ p: JSONPointer, _ message: String) -> PlanningError {
            PlanningError(document: styleURL, pointer: p.description, message: message)
        }
        func skip(_ type: String, _ reason: String) -> Outcome {
            Outcome(source: nil, summary: StyleSourceSummary(name: name, type: type, fetch: .skipped(reason)))
        }
        func checked(_ url: String, at p: JSONPointer) throws -> String {
            if let problem = StyleURL.problem(in: url) { throw fail(p, problem) }
            return url
        }
        guard let object = value.objectValue else {
            return skip("?", "it is \(value.typeDescription), not a source object")
        }
        guard let typeValue = object["type"] else { return skip("?", "it has no \"type\"") }
        guard let typeName = typeValue.stringValue else {
            return skip("?", "its \"type\" is \(typeValue.typeDescription), not a string")
        }
        guard let type = SourceType(rawValue: typeName) else {
            return skip(typeName, "MapLibre knows no source type \(StyleURL.quoted(typeName)) "
                        + "(vector, raster, raster-dem, geojson, image)")
        }
        let used = StyleSourceSummary(name: name, type: typeName, fetch: .tiles)

        switch type {
        case .vector, .raster, .rasterDEM:
            var tileSize = 512
            if type != .vector, let sizeValue = object["tileSize"] {
                guard let size = sizeValue.doubleValue, size >= 1, size <= 65535 else {
                    throw fail(pointer.appending("tileSize"), "expected a tile size in pixels, found \(sizeValue.serialized())")
                }
                tileSize = Int(size)
            }
            if let urlValue = object["url"] {
                guard let url = urlValue.stringValue else {
                    throw fail(pointer.appending("url"), "expected a TileJSON URL string, found \(urlValue.typeDescription)")
                }
                let source = SourceRef(name: name, type: type, tileJSONURL: try checked(url, at: pointer.appending("url")),
                                       tileSize: tileSize)
                return Outcome(source: source, summary: used)
            }
            guard let tiles = object["tiles"] else {
                return skip(typeName, "it has neither \"url\" nor \"tiles\", so it names no tiles")
            }
            let tileset = try TileSource.parseTileset(value, document: styleURL, at: pointer, type: type, tileSize: tileSize)
            _ = try checked(tileset.template, at: pointer.appending("tiles").appending(0))
            var summary = used
            summary.templateCount = tiles.arrayValue?.count ?? 1
            return Outcome(source: SourceRef(name: name, type: type, tileset: tileset, tileSize: tileSize), summary: summary)
        case .geojson:
            guard let data = object["data"] else { return skip(typeName, "it has no \"data\"") }
            switch data {
            case .string(let url):
                let dataURL = try checked(url, at: pointer.appending("data"))
                return Outcome(source: SourceRef(name: name, type: type, dataURL: dataURL),
                               summary: StyleSourceSummary(name: name, type: typeName, fetch: .resource(dataURL)))
            case .object:
                return Outcome(source: SourceRef(name: name, type: type),
                               summary: StyleSourceSummary(name: name, type: typeName, fetch: .nothing))
            default:
                throw fail(pointer.appending("data"), "expected a GeoJSON URL or object, found \(data.typeDescription)")
            }
        case .image:
            guard let urlValue = object["url"] else { return skip(typeName, "it has no \"url\"") }
            guard let url = urlValue.stringValue else {
                throw fail(pointer.appending("url"), "expected an image URL string, found \(urlValue.typeDescription)")
            }
            guard object["coordinates"] != nil else { return skip(typeName, "it has no \"coordinates\"") }
            if url.isEmpty {
                // MapLibre's offline download fetches no image for an empty url.
                return Outcome(source: SourceRef(name: name, type: type),
                               summary: StyleSourceSummary(name: name, type: typeName, fetch: .nothing))
            }
            let imageURL = try checked(url, at: pointer.appending("url"))
            return Outcome(source: SourceRef(name: name, type: type, dataURL: imageURL),
                           summary: StyleSourceSummary(name: name, type: typeName, fetch: .resource(imageURL)))
        case .video:
            return skip(typeName, "MapLibre Native has no video sources, so nothing is downloaded for it")
        }
    }
}
