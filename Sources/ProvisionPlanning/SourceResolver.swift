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
        // Before its type is known, a skipped source shows the type "?".
        let skip = { (reason: String) in
            Outcome(source: nil, summary: StyleSourceSummary(name: name, type: "?", fetch: .skipped(reason)))
        }
        guard let object = value.objectValue else { return skip("it is \(value.typeDescription), not a source object") }
        guard let typeValue = object["type"] else { return skip("it has no \"type\"") }
        guard let typeName = typeValue.stringValue else {
            return skip("its \"type\" is \(typeValue.typeDescription), not a string")
        }
        let entry = Entry(name: name, typeName: typeName, value: value, object: object, styleURL: styleURL, pointer: pointer)
        guard let type = SourceType(rawValue: typeName) else {
            return entry.skip("MapLibre knows no source type \(StyleURL.quoted(typeName)) (vector, raster, raster-dem, geojson, image)")
        }
        switch type {
        case .vector, .raster, .rasterDEM: return try entry.tiled(type)
        case .geojson: return try entry.geojson()
        case .image: return try entry.image()
        case .video: return entry.skip("MapLibre Native has no video sources, so nothing is downloaded for it")
        }
    }

    /// A source object with a string `type`: what each type's reading needs to resolve it, skip it
    /// or name what is wrong.
    private struct Entry {
        let name: String
        let typeName: String
        let value: JSONValue
        let object: JSONObject
        let styleURL: String
        let pointer: JSONPointer

        /// A tiled source (vector, raster, raster-dem): from its TileJSON `url`, else from `tiles`.
        func tiled(_ type: SourceType) throws -> Outcome {
            var tileSize = 512
            if type != .vector, let sizeValue = object["tileSize"] {
                guard let size = sizeValue.doubleValue, size >= 1, size <= 65535 else {
                    throw fail("tileSize", "expected a tile size in pixels, found \(sizeValue.serialized())")
                }
                tileSize = Int(size)
            }
            if let urlValue = object["url"] {
                guard let url = urlValue.stringValue else {
                    throw fail("url", "expected a TileJSON URL string, found \(urlValue.typeDescription)")
                }
                let source = SourceRef(name: name, type: type, tileJSONURL: try checked(url, at: pointer.appending("url")),
                                       tileSize: tileSize)
                return Outcome(source: source, summary: summary(.tiles))
            }
            guard let tiles = object["tiles"] else { return skip("it has neither \"url\" nor \"tiles\", so it names no tiles") }
            let tileset = try TileSource.parseTileset(value, document: styleURL, at: pointer, type: type, tileSize: tileSize)
            _ = try checked(tileset.template, at: pointer.appending("tiles").appending(0))
            var summary = summary(.tiles)
            summary.templateCount = tiles.arrayValue?.count ?? 1
            return Outcome(source: SourceRef(name: name, type: type, tileset: tileset, tileSize: tileSize), summary: summary)
        }

        /// A GeoJSON source: its `data` URL is fetched; inline data needs nothing.
        func geojson() throws -> Outcome {
            guard let data = object["data"] else { return skip("it has no \"data\"") }
            switch data {
            case .string(let url):
                let dataURL = try checked(url, at: pointer.appending("data"))
                return Outcome(source: SourceRef(name: name, type: .geojson, dataURL: dataURL), summary: summary(.resource(dataURL)))
            case .object:
                return Outcome(source: SourceRef(name: name, type: .geojson), summary: summary(.nothing))
            default:
                throw fail("data", "expected a GeoJSON URL or object, found \(data.typeDescription)")
            }
        }

        /// An image source: its `url` is fetched once it also has `coordinates`.
        func image() throws -> Outcome {
            guard let urlValue = object["url"] else { return skip("it has no \"url\"") }
            guard let url = urlValue.stringValue else {
                throw fail("url", "expected an image URL string, found \(urlValue.typeDescription)")
            }
            guard object["coordinates"] != nil else { return skip("it has no \"coordinates\"") }
            if url.isEmpty {
                // MapLibre's offline download fetches no image for an empty url.
                return Outcome(source: SourceRef(name: name, type: .image), summary: summary(.nothing))
            }
            let imageURL = try checked(url, at: pointer.appending("url"))
            return Outcome(source: SourceRef(name: name, type: .image, dataURL: imageURL), summary: summary(.resource(imageURL)))
        }

        /// The source left out, as MapLibre's parser leaves it out, and why.
        func skip(_ reason: String) -> Outcome { Outcome(source: nil, summary: summary(.skipped(reason))) }

        /// How the plan shows the source.
        func summary(_ fetch: StyleSourceSummary.Fetch) -> StyleSourceSummary {
            StyleSourceSummary(name: name, type: typeName, fetch: fetch)
        }

        /// The error of the source's member `key`.
        func fail(_ key: String, _ message: String) -> PlanningError {
            PlanningError(document: styleURL, pointer: pointer.appending(key).description, message: message)
        }

        /// `url`, which is at `p`, when a download can fetch it.
        func checked(_ url: String, at p: JSONPointer) throws -> String {
            if let problem = StyleURL.problem(in: url) {
                throw PlanningError(document: styleURL, pointer: p.description, message: problem)
            }
            return url
        }
    }
}
