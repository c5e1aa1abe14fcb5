import CCurl
import Foundation

/// The HTTP caching fields MapLibre's offline database keeps, read from response headers.
public struct HTTPCacheFields: Equatable, Sendable {
    /// The ETag header verbatim.
    public var etag: String?
    /// Last-Modified, Unix seconds.
    public var modified: Int64?
    /// When the response expires, Unix seconds: `now + max-age` when Cache-Control has one, else Expires.
    public var expires: Int64?

    /// Creates the fields from their values.
    public init(etag: String? = nil, modified: Int64? = nil, expires: Int64? = nil) {
        self.etag = etag
        self.modified = modified
        self.expires = expires
    }

    /// Reads the fields from raw header values; `now` (Unix seconds) anchors a relative max-age.
    public init(etag: String?, lastModified: String?, cacheControl: String?, expires: String?, now: Int64,
                date: String? = nil) {
        self.etag = etag.flatMap { $0.isEmpty ? nil : $0 }
        self.modified = lastModified.flatMap(Self.httpDate)
        if let maxAge = cacheControl.flatMap(Self.maxAge) {
            // Relative to the response's own Date header when it has one: a time from upstream,
            // not from this machine's clock.
            self.expires = (date.flatMap(Self.httpDate) ?? now) + maxAge
        } else {
            self.expires = expires.flatMap(Self.httpDate)
        }
    }

    /// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime) into Unix seconds with libcurl's parser.
    public static func httpDate(_ text: String) -> Int64? {
        let seconds = curl_getdate(text, nil)
        return seconds < 0 ? nil : Int64(seconds)
    }

    /// The `max-age` directive of a Cache-Control value, in seconds (`s-maxage` is for shared caches).
    public static func maxAge(_ cacheControl: String) -> Int64? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1)
            guard parts.count == 2,
                  parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "max-age" else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if let seconds = Int64(value), seconds >= 0 { return seconds }
        }
        return nil
    }
}
