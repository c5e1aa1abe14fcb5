import ProvisionModel

/// Checks on the URLs a style names (source `url`s, inline `tiles`, GeoJSON `data`, image
/// `url`s, `sprite`, `glyphs`), so that a URL no download can fetch is an error naming its
/// place in the style rather than a failed request later.
enum StyleURL {
    /// The schemes a download can fetch from.
    static let fetchableSchemes = ["http://", "https://", "mapbox://"]

    /// What is wrong with `url` as a URL to fetch, or nil when it is an absolute http(s) or
    /// `mapbox://` URL.
    ///
    /// MapLibre Native requests the URLs of a style as written: a relative URL is not resolved
    /// against the style's URL (it fails on the device too), so it is refused here.
    static func problem(in url: String) -> String? {
        if url.isEmpty { return "expected an http://, https:// or mapbox:// URL, found an empty string" }
        if fetchableSchemes.contains(where: { url.hasPrefix($0) && url.count > $0.count }) {
            if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) {
                return "expected a URL without spaces or control characters, found \(quoted(url))"
            }
            return nil
        }
        if let scheme = scheme(of: url) {
            return "expected an http://, https:// or mapbox:// URL, found a \(scheme): URL \(quoted(url)); "
                + "provision downloads only from the network"
        }
        return "expected an absolute http://, https:// or mapbox:// URL, found \(quoted(url)); MapLibre Native "
            + "does not resolve URLs in a style against the style's own URL"
    }

    /// The scheme of `url` (`file`, `asset`, `pmtiles` …) when it starts with one followed by `:`
    /// (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`).
    static func scheme(of url: String) -> String? {
        func isLetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let name = url[..<colon].unicodeScalars
        guard let first = name.first, isLetter(first) else { return nil }
        let valid = name.allSatisfy { isLetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
        return valid ? String(url[..<colon]) : nil
    }

    /// `text` in double quotes, cut to 80 characters.
    static func quoted(_ text: String) -> String {
        let text = URLSecrets().redact(text)
        let cut = text.count > 80 ? String(text.prefix(77)) + "…" : text
        return "\"\(cut)\""
    }
}
