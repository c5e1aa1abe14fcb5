import CCurl
import Foundation
import ProvisionModel

/// The HTTP caching fields MapLibre's offline database keeps, read from response headers.
///
/// Freshness follows RFC 9111: every Cache-Control field line of a response is one list, and
/// when its directives conflict the most restrictive wins (§4.2.1): `no-store` or an unqualified
/// `no-cache` make the response stale on arrival whatever `max-age` says; of several `max-age`
/// the smallest counts; a `max-age` that is not a number makes the response stale. `Expires` is
/// used only without `max-age`, and an invalid one ("0", garbage) means already expired.
///
/// Why the expiry counts from the build time, not from the response's `Date` or its arrival: a
/// bundle must be the same bytes whenever it is built from the same upstream bytes and
/// `SOURCE_DATE_EPOCH` (DESIGN invariant 1), and a host's `Date` (with the `Expires` it derives
/// from it, as nginx and CDNs do) moves with every request. So the response only says how long
/// it stays fresh: `max-age` as a duration, or `Expires` − `Date`; the expiry is the build time
/// plus that lifetime. `Expires` without a valid `Date` is taken as the absolute time it names
/// (never before the build time). `Age` is ignored: it counts how long a CDN held the response,
/// which differs from one request to the next. `s-maxage` is for shared caches and a device is a
/// private one. "Stale on arrival" is stored as an expiry equal to the build time, so that a
/// device revalidates the body as soon as it is online, and uses it offline (must_revalidate = 0).
public struct HTTPCacheFields: Equatable, Sendable {
    /// The ETag header verbatim.
    public var etag: String?
    /// Last-Modified, Unix seconds.
    public var modified: Int64?
    /// When the response expires, Unix seconds; nil when it carries no freshness information.
    public var expires: Int64?
    /// The revalidation directives the response was served with, and what MapLibre would store.
    public var revalidation: ServedRevalidation

    /// The largest delta-seconds a cache need represent (RFC 9111 §1.2.2).
    static let maxDeltaSeconds: Int64 = 2_147_483_648

    /// Creates the fields from their values.
    public init(etag: String? = nil, modified: Int64? = nil, expires: Int64? = nil, revalidation: ServedRevalidation = []) {
        self.etag = etag
        self.modified = modified
        self.expires = expires
        self.revalidation = revalidation
    }

    /// Reads the fields from raw header values: `cacheControl` holds every Cache-Control field
    /// line in the order received; `buildTime` (Unix seconds) is the time freshness counts from.
    public init(etag: String?, lastModified: String?, cacheControl: [String], expires: String?, buildTime: Int64,
                date: String? = nil) {
        self.init(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires,
                  buildTime: buildTime, date: date, parseDate: Self.httpDate)
    }

    /// The fields from raw header values, with the HTTP dates parsed by `parseDate` (which must
    /// agree with `httpDate`; a cache of recent dates, say).
    init(etag: String?, lastModified: String?, cacheControl: [String], expires: String?, buildTime: Int64,
         date: String?, parseDate: (String) -> Int64?) {
        self.etag = etag.flatMap { $0.isEmpty ? nil : $0 }
        self.modified = lastModified.flatMap(parseDate)
        let directives = CacheDirectives(cacheControl)
        if directives.noStore || directives.noCache {
            self.expires = buildTime
        } else if let maxAge = directives.maxAge {
            self.expires = buildTime + maxAge
        } else if let expires {
            self.expires = Self.expiry(expires: expires, date: date, buildTime: buildTime, parseDate: parseDate)
        } else {
            self.expires = nil
        }
        var revalidation: ServedRevalidation = []
        if directives.noCache { revalidation.insert(.noCache) }
        if directives.noStore { revalidation.insert(.noStore) }
        if directives.mustRevalidate { revalidation.insert(.mustRevalidate) }
        if let last = cacheControl.last, Self.mapLibreMustRevalidate(last) { revalidation.insert(.mapLibreMustRevalidate) }
        self.revalidation = revalidation
    }

    /// The expiry an `Expires` header gives without `max-age`: the build time plus `Expires` −
    /// `Date` (0 when negative, at most 2^31 s); without a valid `Date`, the time `Expires` names,
    /// but never before the build time; an invalid `Expires`, the build time (already expired).
    static func expiry(expires: String, date: String?, buildTime: Int64, parseDate: (String) -> Int64?) -> Int64 {
        guard let until = parseDate(expires) else { return buildTime }
        guard let served = date.flatMap(parseDate) else { return max(buildTime, until) }
        return buildTime + min(max(0, until - served), maxDeltaSeconds)
    }

    /// The last few HTTP dates parsed, with their values: the `Date` of responses a moment apart
    /// and the `Last-Modified` of files published together repeat, and libcurl's parser is slow
    /// next to a string comparison. Not thread-safe: one per thread.
    struct RecentDates {
        private var entries: [(text: String, seconds: Int64?)] = []
        private var next = 0

        /// `HTTPCacheFields.httpDate(text)`, from memory when `text` was parsed lately.
        mutating func parse(_ text: String) -> Int64? {
            if let hit = entries.first(where: { $0.text == text }) { return hit.seconds }
            let seconds = HTTPCacheFields.httpDate(text)
            if entries.count < 4 {
                entries.append((text, seconds))
            } else {
                entries[next] = (text, seconds)
                next = (next + 1) % entries.count
            }
            return seconds
        }
    }

    /// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime) into Unix seconds with libcurl's parser.
    public static func httpDate(_ text: String) -> Int64? {
        let seconds = curl_getdate(text, nil)
        return seconds < 0 ? nil : Int64(seconds)
    }

    /// The freshness lifetime the `max-age` directives of Cache-Control field lines give, in
    /// seconds: the smallest, 0 when one is not a number, nil when there is none
    /// (`s-maxage` is for shared caches).
    public static func maxAge(_ cacheControl: String...) -> Int64? {
        CacheDirectives(cacheControl).maxAge
    }

    /// Whether MapLibre Native's Cache-Control parser sets `mustRevalidate` for one field line: a
    /// directive spelled exactly `must-revalidate` (its grammar is case-sensitive).
    static func mapLibreMustRevalidate(_ line: String) -> Bool {
        CacheDirectives.split(line).contains { $0.name == "must-revalidate" && $0.value == nil }
    }
}

/// The directives of a response's Cache-Control field lines, combined as RFC 9111 says.
struct CacheDirectives {
    /// One directive as written: its name (case kept) and its value, unquoted, if any.
    struct Directive: Equatable {
        var name: String
        var value: String?
    }

    var noCache = false
    var noStore = false
    var mustRevalidate = false
    /// The smallest `max-age`, 0 when any is invalid.
    var maxAge: Int64?

    init(_ lines: [String]) {
        for directive in lines.flatMap(Self.split) {
            switch directive.name.lowercased() {
            // A qualified no-cache="Set-Cookie" restricts those header fields only, not the content.
            case "no-cache" where directive.value == nil: noCache = true
            case "no-store": noStore = true
            case "must-revalidate": mustRevalidate = true
            case "max-age":
                let seconds = directive.value.flatMap(Self.deltaSeconds) ?? 0
                maxAge = min(maxAge ?? seconds, seconds)
            default: continue
            }
        }
    }

    /// A delta-seconds value (digits only), capped at 2^31 as RFC 9111 §1.2.2 allows.
    static func deltaSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return min(Int64(text.prefix(11)) ?? HTTPCacheFields.maxDeltaSeconds, HTTPCacheFields.maxDeltaSeconds)
    }

    /// Splits one field line into directives at the commas outside quoted strings.
    static func split(_ line: String) -> [Directive] {
        var directives: [Directive] = []
        var current = ""
        var quoted = false
        var escaped = false
        func flush() {
            let text = current.trimmingCharacters(in: .whitespaces)
            current = ""
            guard !text.isEmpty else { return }
            guard let equals = text.firstIndex(of: "=") else {
                directives.append(Directive(name: text, value: nil))
                return
            }
            let name = text[..<equals].trimmingCharacters(in: .whitespaces)
            var value = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
            }
            directives.append(Directive(name: name, value: value))
        }
        for character in line {
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                flush()
                continue
            }
            current.append(character)
        }
        flush()
        return directives
    }
}
