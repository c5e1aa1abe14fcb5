import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel

/// Checks that a response body is plausible for its kind and returns the payload to store.
///
/// Why: the store must never hold an HTML error page served with 200, a truncated tile or a
/// JSON error where a PNG belongs (invariant 4). The checks read every structure a MapLibre
/// decoder relies on without decoding pixels or geometry: PNG chunks, CRCs and inflated size
/// (`PNGCheck`), the JPEG marker chain (`JPEGCheck`), the WebP container (`WebPCheck`), every
/// field of a vector tile (`VectorTileCheck`) or glyph range (`GlyphCheck`), a JSON parse.
public struct Verifier: Sendable {
    /// The most bytes a gzip-wrapped body may inflate to.
    public var maxInflatedBytes: Int

    /// Creates a verifier that refuses gzip bodies inflating beyond `maxInflatedBytes`.
    public init(maxInflatedBytes: Int = 64 << 20) {
        self.maxInflatedBytes = maxInflatedBytes
    }

    /// Verifies `data` as a body of `kind` served with the `Content-Type` header `contentType`:
    /// a body the server declares as HTML is refused whatever its bytes (an empty or plain-text
    /// error page would otherwise pass as an empty tile or glyph range). `url`, the URL asked
    /// for, tells a glyph range which range it must be.
    public func verify(_ data: Data, kind: ResourceKind, contentType: String?, url: String? = nil) -> Result<Data, FetchFailure> {
        if let contentType, let media = Self.htmlMediaType(contentType) {
            return .failure(.invalidBody("HTML page (served as \(media)) instead of \(kind.name)"))
        }
        return verify(data, kind: kind, url: url)
    }

    /// `verify(data, kind:contentType:)` as the body to store: the payload, with its zlib form
    /// when `data` was one gzip layer around it (rewrapped, not recompressed).
    public func verifiedBody(_ data: Data, kind: ResourceKind, contentType: String? = nil,
                             url: String? = nil) -> Result<FetchedBody, FetchFailure> {
        verify(data, kind: kind, contentType: contentType, url: url).map { payload in
            var body = FetchedBody(data: payload)
            if Gzip.isGzip(data) && !Gzip.isGzip(payload) { body.zlibData = Gzip.zlibStream(fromGzip: data, payload: payload) }
            return body
        }
    }

    /// The media type of a Content-Type header value when it is an HTML one, else nil.
    static func htmlMediaType(_ contentType: String) -> String? {
        let media = contentType.split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return media == "text/html" || media == "application/xhtml+xml" ? media : nil
    }

    /// Verifies `data` as a body of `kind`; on success returns the payload (gunzipped when it was gzip-wrapped).
    ///
    /// A JSON document that arrived whole but cannot be used (not JSON, past a parse cap, a
    /// byte-order mark, not an object, the wrong shape) fails as `.unusableDocument`; every other
    /// refusal (an HTML page, a damaged image, tile or glyph range) as `.invalidBody`. `url`, when
    /// given, is the URL the body was asked for (a glyph range must be the range it names).
    public func verify(_ data: Data, kind: ResourceKind, url: String? = nil) -> Result<Data, FetchFailure> {
        var payload = data
        // Up to two layers: a gzip tile sent with Content-Encoding: gzip arrives wrapped twice.
        for _ in 0..<2 where Gzip.isGzip(payload) {
            do {
                payload = try Gzip.inflate(payload, limit: maxInflatedBytes)
            } catch {
                return .failure(.invalidBody(error.description))
            }
        }
        guard let failure = Self.failure(of: payload, kind: kind, url: url) else { return .success(payload) }
        if Self.looksLikeHTML(payload) {
            switch failure {
            case .invalidBody(let problem), .unusableDocument(let problem):
                return .failure(.invalidBody("HTML page instead of \(kind.name) (\(problem))"))
            default:
                return .failure(failure)
            }
        }
        return .failure(failure)
    }

    /// Why `payload` is not a usable body of `kind`, or nil when it is.
    static func failure(of payload: Data, kind: ResourceKind, url: String? = nil) -> FetchFailure? {
        switch kind {
        case .style:
            return jsonProblem(payload) { object in
                guard object["version"]?.doubleValue != nil else { return "style has no numeric \"version\"" }
                guard object["sources"]?.objectValue != nil else { return "style has no \"sources\" object" }
                return nil
            }.map(FetchFailure.unusableDocument)
        case .source:
            return jsonProblem(payload) { object in
                if let type = object["type"]?.stringValue, geoJSONTypes.contains(type) { return nil }
                guard let tiles = object["tiles"]?.arrayValue, !tiles.isEmpty,
                      tiles.allSatisfy({ $0.stringValue != nil }) else {
                    return "TileJSON has no \"tiles\" array of URLs"
                }
                return nil
            }.map(FetchFailure.unusableDocument)
        case .spriteJSON:
            return jsonProblem(payload) { _ in nil }.map(FetchFailure.unusableDocument)
        default:
            return problem(with: payload, kind: kind, url: url).map(FetchFailure.invalidBody)
        }
    }

    /// Why `payload` is not a usable binary body of `kind`, or nil when it is.
    static func problem(with payload: Data, kind: ResourceKind, url: String? = nil) -> String? {
        switch kind {
        case .tile:
            if payload.isEmpty { return nil }
            return ImageFormat(payload) != nil ? imageProblem(payload) : VectorTileCheck.problem(payload)
        case .spriteImage, .image:
            return imageProblem(payload)
        case .glyphs:
            return payload.isEmpty ? nil : GlyphCheck.problem(payload, expected: url.flatMap(GlyphCheck.requestedRange(in:)))
        case .unknown, .style, .source, .spriteJSON:
            return looksLikeHTML(payload) ? "HTML page" : nil
        }
    }

    /// Why `payload` is not a PNG, JPEG or WebP image a decoder can read, or nil.
    static func imageProblem(_ payload: Data) -> String? {
        switch ImageFormat(payload) {
        case .png: return PNGCheck.problem(payload)
        case .jpeg: return JPEGCheck.problem(payload)
        case .webp: return WebPCheck.problem(payload)
        case nil: return "not a PNG, JPEG or WebP image"
        }
    }

    private static let geoJSONTypes: Set<String> = [
        "FeatureCollection", "Feature", "Point", "MultiPoint", "LineString", "MultiLineString",
        "Polygon", "MultiPolygon", "GeometryCollection",
    ]

    /// Whether the first non-whitespace byte is `<`.
    static func looksLikeHTML(_ data: Data) -> Bool {
        for byte in data.prefix(1024) {
            switch byte {
            case 0x20, 0x09, 0x0a, 0x0d: continue
            case 0xef, 0xbb, 0xbf: continue  // a UTF-8 byte-order mark
            default: return byte == UInt8(ascii: "<")
            }
        }
        return false
    }

    /// Why a JSON document is unusable: MapLibre's parser reads UTF-8 without a byte-order mark,
    /// within `JSONValue.ParseLimits.standard`, and wants an object of the right shape.
    private static func jsonProblem(_ data: Data, check: (JSONObject) -> String?) -> String? {
        if data.starts(with: [0xEF, 0xBB, 0xBF]) {
            return "starts with a UTF-8 byte-order mark, which MapLibre's JSON parser does not accept"
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            return error.exceedsCap ? "JSON past a parse cap (\(error.description))" : "not JSON (\(error.description))"
        }
        guard let object = value.objectValue else { return "JSON \(value.typeDescription), expected an object" }
        return check(object)
    }
}

/// A raster image format recognised by its signature.
public enum ImageFormat: String, Sendable {
    case png, jpeg, webp

    /// Recognises PNG, JPEG and WebP by their leading bytes; nil for anything else.
    public init?(_ data: Data) {
        let head = [UInt8](data.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) {
            self = .png
        } else if head.starts(with: [0xff, 0xd8, 0xff]) {
            self = .jpeg
        } else if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            self = .webp
        } else {
            return nil
        }
    }
}
