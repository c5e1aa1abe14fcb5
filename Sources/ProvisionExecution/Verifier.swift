import Foundation
import ProvisionModel

/// Checks that a response body is plausible for its kind and returns the payload to store.
///
/// Why: the store must never hold an HTML error page served with 200, a truncated tile or a
/// JSON error where a PNG belongs (invariant 4). The checks are cheap structural ones —
/// signatures, a protobuf walk, a JSON parse — not a full decode.
public struct Verifier: Sendable {
    /// The most bytes a gzip-wrapped body may inflate to.
    public var maxInflatedBytes: Int

    /// Creates a verifier that refuses gzip bodies inflating beyond `maxInflatedBytes`.
    public init(maxInflatedBytes: Int = 64 << 20) {
        self.maxInflatedBytes = maxInflatedBytes
    }

    /// Verifies `data` as a body of `kind` served with the `Content-Type` header `contentType`:
    /// a body the server declares as HTML is refused whatever its bytes (an empty or plain-text
    /// error page would otherwise pass as an empty tile or glyph range).
    public func verify(_ data: Data, kind: ResourceKind, contentType: String?) -> Result<Data, FetchFailure> {
        if let contentType, let media = Self.htmlMediaType(contentType) {
            return .failure(.invalidBody("HTML page (served as \(media)) instead of \(kind.name)"))
        }
        return verify(data, kind: kind)
    }

    /// `verify(data, kind:contentType:)` as the body to store: the payload, with its zlib form
    /// when `data` was one gzip layer around it (rewrapped, not recompressed).
    public func verifiedBody(_ data: Data, kind: ResourceKind, contentType: String? = nil) -> Result<FetchedBody, FetchFailure> {
        verify(data, kind: kind, contentType: contentType).map { payload in
            var body = FetchedBody(data: payload)
            if Gzip.isGzip(data) && !Gzip.isGzip(payload) { body.zlibData = ZlibRewrap.zlib(fromGzip: data, payload: payload) }
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
    public func verify(_ data: Data, kind: ResourceKind) -> Result<Data, FetchFailure> {
        var payload = data
        // Up to two layers: a gzip tile sent with Content-Encoding: gzip arrives wrapped twice.
        for _ in 0..<2 where Gzip.isGzip(payload) {
            do {
                payload = try Gzip.inflate(payload, limit: maxInflatedBytes)
            } catch {
                return .failure(.invalidBody(error.description))
            }
        }
        if let problem = Self.problem(with: payload, kind: kind) {
            if Self.looksLikeHTML(payload) {
                return .failure(.invalidBody("HTML page instead of \(kind.name) (\(problem))"))
            }
            return .failure(.invalidBody(problem))
        }
        return .success(payload)
    }

    /// Why `payload` is not a plausible body of `kind`, or nil when it is.
    static func problem(with payload: Data, kind: ResourceKind) -> String? {
        switch kind {
        case .tile:
            if payload.isEmpty || ImageFormat(payload) != nil { return nil }
            return vectorTileProblem(payload)
        case .style:
            return jsonProblem(payload) { object in
                guard object["version"]?.doubleValue != nil else { return "style has no numeric \"version\"" }
                guard object["sources"]?.objectValue != nil else { return "style has no \"sources\" object" }
                return nil
            }
        case .source:
            return jsonProblem(payload) { object in
                if let type = object["type"]?.stringValue, geoJSONTypes.contains(type) { return nil }
                guard let tiles = object["tiles"]?.arrayValue, !tiles.isEmpty,
                      tiles.allSatisfy({ $0.stringValue != nil }) else {
                    return "TileJSON has no \"tiles\" array of URLs"
                }
                return nil
            }
        case .spriteJSON:
            return jsonProblem(payload) { _ in nil }
        case .spriteImage, .image:
            return ImageFormat(payload) == nil ? "not a PNG, JPEG or WebP image" : nil
        case .glyphs:
            return payload.isEmpty ? nil : glyphProblem(payload)
        case .unknown:
            return looksLikeHTML(payload) ? "HTML page" : nil
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

    private static func jsonProblem(_ data: Data, check: (JSONObject) -> String?) -> String? {
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            return "not JSON (\(error.description))"
        }
        guard let object = value.objectValue else { return "JSON \(value.typeDescription), expected an object" }
        return check(object)
    }

    /// Mapbox Vector Tile 2.1: a Tile is repeated `layers = 3`; each Layer has `name = 1` and `version = 15`.
    static func vectorTileProblem(_ data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            var tile = ProtobufReader(bytes)
            var layerCount = 0
            do {
                while let field = try tile.nextField() {
                    guard field.number == 3, field.wireType == 2, let layerBytes = field.payload else {
                        return "not a vector tile: top-level field \(field.number) (wire type \(field.wireType))"
                    }
                    layerCount += 1
                    var layer = ProtobufReader(bytes, range: layerBytes)
                    var hasName = false
                    var hasVersion = false
                    while let member = try layer.nextField() {
                        if member.number == 1 && member.wireType == 2 { hasName = true }
                        if member.number == 15 && member.wireType == 0 { hasVersion = true }
                    }
                    guard hasName, hasVersion else {
                        return "not a vector tile: layer \(layerCount) has no \(hasName ? "version" : "name")"
                    }
                }
            } catch {
                return "not a vector tile: \(error)"
            }
            return nil
        }
    }

    /// Glyph PBF: repeated `stacks = 1`, each a well-formed message.
    static func glyphProblem(_ data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            var glyphs = ProtobufReader(bytes)
            do {
                while let field = try glyphs.nextField() {
                    guard field.number == 1, field.wireType == 2, let stackBytes = field.payload else {
                        return "not a glyph PBF: top-level field \(field.number) (wire type \(field.wireType))"
                    }
                    var stack = ProtobufReader(bytes, range: stackBytes)
                    while try stack.nextField() != nil {}
                }
            } catch {
                return "not a glyph PBF: \(error)"
            }
            return nil
        }
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
