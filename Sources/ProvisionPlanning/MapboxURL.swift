import ProvisionModel

/// The `mapbox://` rules: canonical forms that are stored, and the network URLs they map to.
///
/// Why two forms: MapLibre Native (and Mapbox GL Native) store `mapbox://` URLs exactly as the
/// style names them, without a token, and only rewrite them to `api.mapbox.com` with an
/// `access_token` when a request goes out. Keys in the store therefore never hold a secret, and
/// a device looks resources up under the same `mapbox://` URL.
public enum MapboxURL {
    /// The default API base.
    public static let apiBaseURL = "https://api.mapbox.com"

    /// Whether `url` uses the `mapbox://` scheme.
    public static func isMapboxURL(_ url: String) -> Bool { url.hasPrefix("mapbox://") }

    /// The network URL of a canonical URL, for use at fetch time only.
    ///
    /// Non-`mapbox://` URLs come back unchanged. `mapbox://` URLs map by their first path
    /// segment, with `access_token=<token>` right after the `?` and any query of their own after
    /// it: `styles/U/S` → `/styles/v1/U/S`; `sprites/U/S[@2x].ext` → `/styles/v1/U/S/sprite[@2x].ext`;
    /// `fonts/…` → `/fonts/v1/…`; `tiles/…` → `/v4/…`; anything else is a tileset id list whose
    /// TileJSON is `/v4/<ids>.json?access_token=…&secure`.
    /// - Returns: nil for a `mapbox://` URL when there is no (non-empty) token or the URL names nothing.
    public static func networkURL(for canonical: String, accessToken: String?, baseURL: String = apiBaseURL) -> String? {
        guard isMapboxURL(canonical) else { return canonical }
        guard let token = accessToken, !token.isEmpty else { return nil }
        let url = URLSegments(canonical)
        let domain = url.text(url.domain)
        guard !domain.isEmpty else { return nil }
        let path = url.text(url.path)
        let tokenQuery = "?" + URLSecrets.tokenParameter + "=" + token
        var result: String
        switch domain {
        case "styles":
            guard path.count > 1 else { return nil }
            result = baseURL + "/styles/v1" + path + tokenQuery
        case "sprites":
            let parts = url.pathParts()
            guard parts.filename.count > 0 else { return nil }
            result = baseURL + "/styles/v1" + url.text(parts.directory) + url.text(parts.filename) + "/sprite"
                + url.text(parts.extension) + tokenQuery
        case "fonts":
            guard path.count > 1 else { return nil }
            result = baseURL + "/fonts/v1" + path + tokenQuery
        case "tiles":
            guard path.count > 1 else { return nil }
            result = baseURL + "/v4" + path + tokenQuery
        default:
            result = baseURL + "/v4/" + domain + ".json" + tokenQuery + "&secure"
        }
        if url.query.count > 1 {
            result += "&" + url.text(url.query.start + 1..<url.query.end)
        }
        return result
    }

    /// The canonical (stored) form of a tile URL template from a TileJSON loaded from a
    /// `mapbox://` source URL (MapLibre's `canonicalizeTileURL`).
    ///
    /// The path must start with `/v4/` and end in a file name with an extension; any host is
    /// accepted. The result is `mapbox://tiles/<path after /v4/>`; raster and raster-dem templates
    /// get `@2x` before the extension when their tile size is 512 and `{ratio}` otherwise. The
    /// query is kept without its `access_token` parameter. Anything else comes back unchanged.
    /// The extension is kept as is (MapLibre's Linux-only PNG→WebP rewrite does not apply to the
    /// Android and Apple devices the store is built for).
    public static func canonicalizeTileURL(_ template: String, type: SourceType, tileSize: Int) -> String {
        let url = URLSegments(template)
        let bytes = url.bytes
        let version = Array("/v4/".utf8)
        let parts = url.pathParts()
        guard url.path.start + version.count <= bytes.count,
            Array(bytes[url.path.start..<(url.path.start + version.count)]) == version,
            parts.filename.count > 0, parts.extension.count > 1,
            parts.directory.count >= version.count
        else { return template }

        var result = "mapbox://tiles/"
        result += url.text((parts.directory.start + version.count)..<parts.directory.end)
        result += url.text(parts.filename)
        if type == .raster || type == .rasterDEM {
            result += tileSize == 512 ? "@2x" : "{ratio}"
        }
        result += url.text(parts.extension)

        if url.query.count > 1 {
            // Parameters run from after each `?`/`&` to the next `&` (or the end of the string).
            var kept: [String] = []
            var index = url.query.start + 1
            while true {
                let ampersand = bytes[index...].firstIndex(of: UInt8(ascii: "&"))
                let parameter = url.text(index..<(ampersand ?? bytes.count))
                if !parameter.hasPrefix(URLSecrets.tokenParameter + "=") { kept.append(parameter) }
                guard let ampersand else { break }
                index = ampersand + 1
            }
            if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
        }
        return result
    }
}
