import CCurl
import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel

/// One reusable libcurl easy handle with the state of the transfer it currently carries.
///
/// The handle is configured once when created; each use sets only the URL and clears the body.
/// libcurl's callbacks reach this object through an unretained pointer, so the pool that owns
/// it must outlive every transfer on it.
final class CurlTransfer {
    /// The libcurl easy handle.
    let handle: UnsafeMutableRawPointer
    /// The request being fetched, with its attempt number (1-based).
    var transport: TransportRequest?
    var attempt = 0
    /// The request being fetched.
    var request: FetchRequest? { transport?.request }
    /// The `host:port` the transfer counts against for the per-host cap.
    var host = ""
    /// The URL actually fetched (the transport URL; may hold secrets, never printed).
    var url = ""
    /// The bytes received so far.
    var body = Data()
    /// Set by the write callback when the body would exceed `maxBytes` (or the range asked for).
    var overflowed = false
    /// The most body bytes this attempt accepts: `maxBytes`, or the length of the range asked for.
    var bodyLimit = 0
    /// The If-None-Match / If-Modified-Since headers of the current request, if any.
    private var conditionalHeaders: UnsafeMutablePointer<curl_slist>?
    let maxBytes: Int
    let maxRedirects: Int
    let trust: TLSTrust
    let secrets: URLSecrets
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Settings every handle shares.
    struct Options {
        var timeout: TimeInterval
        var stallTimeout: TimeInterval
        var maxRedirects: Int
        var maxBytes: Int
        var userAgent: String
        var trust: TLSTrust
        /// The job's secrets, hidden in every message that quotes a URL.
        var secrets: URLSecrets
    }

    init?(options: Options) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.maxBytes = options.maxBytes
        self.maxRedirects = options.maxRedirects
        self.trust = options.trust
        self.secrets = options.secrets
        self.errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        configure(options)
    }

    deinit {
        curl_easy_cleanup(handle)
        if let conditionalHeaders { curl_slist_free_all(conditionalHeaders) }
        errorBuffer.deallocate()
    }

    private func configure(_ options: Options) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        provision_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        provision_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        provision_curl_easy_setopt_long(handle, CURLOPT_MAXREDIRS, options.maxRedirects)
        provision_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        provision_curl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // "" = every encoding this libcurl can decode; the body we receive is decoded.
        // Ask for gzip and keep the body as it came: a gzip tile is rewrapped into the zlib form
        // the offline database stores, instead of being inflated here and deflated again.
        provision_curl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "gzip")
        provision_curl_easy_setopt_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0)
        provision_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
        provision_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(options.timeout * 1000)))
        // A stall: under 1 byte/s for stallTimeout seconds.
        provision_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        provision_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(options.stallTimeout.rounded(.up))))
        provision_curl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(options.maxBytes))
        // HTTP/2 when TLS negotiates it (ALPN), HTTP/1.1 otherwise; a new transfer waits for a
        // connection being set up to the same host, so that streams share it (see HTTPFetcher).
        provision_curl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        provision_curl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        // libcurl reads no CA variable from the environment; the curl tool's choice is set here.
        if let file = options.trust.caFile { provision_curl_easy_setopt_string(handle, CURLOPT_CAINFO, file) }
        if let directory = options.trust.caDirectory {
            provision_curl_easy_setopt_string(handle, CURLOPT_CAPATH, directory)
            provision_curl_easy_setopt_string(handle, CURLOPT_PROXY_CAPATH, directory)
        }
        provision_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        provision_curl_easy_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, curlWriteBody)
        provision_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me)
    }

    /// Prepares the handle for a new attempt at `transport`.
    func prepare(_ transport: TransportRequest, attempt: Int) {
        let request = transport.request
        self.transport = transport
        self.attempt = attempt
        self.url = transport.url
        body = Data()
        overflowed = false
        errorBuffer[0] = 0
        provision_curl_easy_setopt_string(handle, CURLOPT_URL, url)
        // A range is asked for as stored (no Accept-Encoding: a range of a gzip encoding is a range
        // of other bytes), and at most its length is accepted, so a server that ignores the Range
        // header and sends the whole archive is cut off after that many bytes.
        if let range = transport.range {
            provision_curl_easy_setopt_string(handle, CURLOPT_RANGE, "\(range.offset)-\(range.last)")
            provision_curl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, nil)
            bodyLimit = Int(clamping: min(UInt64(maxBytes), range.count))
        } else {
            provision_curl_easy_setopt_string(handle, CURLOPT_RANGE, nil)
            provision_curl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "gzip")
            bodyLimit = maxBytes
        }
        // Revalidation headers; a reused handle must not keep the previous request's.
        if let conditionalHeaders { curl_slist_free_all(conditionalHeaders) }
        conditionalHeaders = nil
        if let etag = request.etag { conditionalHeaders = curl_slist_append(conditionalHeaders, "If-None-Match: \(etag)") }
        if let since = request.modifiedSince {
            conditionalHeaders = curl_slist_append(conditionalHeaders, "If-Modified-Since: \(Self.httpDate(since))")
        }
        provision_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, conditionalHeaders)
    }

    /// Makes room in `body` for the whole response when the server declared its length (within
    /// `bodyLimit`), so a body is written once instead of copied each time it outgrows its buffer.
    func reserveDeclaredLength(atLeast length: Int) {
        var declared: curl_off_t = -1
        provision_curl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared)
        body.reserveCapacity(declared > length && declared <= bodyLimit ? Int(declared) : length)
    }

    /// IMF-fixdate of Unix seconds, as HTTP headers want it.
    static func httpDate(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// What the finished transfer amounts to: a raw body with cache fields, or a failure
    /// with an optional Retry-After in seconds.
    enum Outcome: Sendable {
        /// A 2xx body with its cache headers and declared Content-Type.
        case body(Data, CacheHeaders, contentType: String?)
        case failure(FetchFailure, retryAfter: TimeInterval?)
        /// A 304 to a conditional request, with the new cache fields.
        case notModified(HTTPCacheFields)
        /// A 204: MapLibre's "no content" (an empty tile; no use for any other kind).
        case noContent(HTTPCacheFields)
    }

    /// The headers the cache fields of a response come from, as received: parsing them (dates
    /// above all) is left to whoever needs `fields`, the verification thread for a body.
    struct CacheHeaders: Sendable {
        var etag: String?
        var lastModified: String?
        var cacheControl: [String]
        var expires: String?
        var date: String?
        /// The build time the response's freshness lifetime counts from.
        var buildTime: Int64

        /// The cache fields these headers give.
        var fields: HTTPCacheFields {
            HTTPCacheFields(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires,
                            buildTime: buildTime, date: date)
        }

        /// `fields`, parsing the dates through `dates`.
        func fields(dates: inout HTTPCacheFields.RecentDates) -> HTTPCacheFields {
            HTTPCacheFields(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires,
                            buildTime: buildTime, date: date, parseDate: { dates.parse($0) })
        }
    }

    /// Interprets libcurl's result code, the status and the headers of the finished transfer:
    /// `now` (the wall clock) is what a Retry-After date counts from, `buildTime` what the
    /// response's freshness lifetime counts from.
    func outcome(_ code: CURLcode, now: Int64, buildTime: Int64) -> Outcome {
        if let range = transport?.range, overflowed || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(rangeOverflow(range), retryAfter: nil)
        }
        if overflowed || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(.invalidBody("response larger than \(grouped(maxBytes)) bytes"), retryAfter: nil)
        }
        if code == CURLE_BAD_CONTENT_ENCODING {
            // The declared Content-Encoding is unknown or the body does not decode with it:
            // the same bytes will come back on a retry.
            let encoding = header("Content-Encoding") ?? "?"
            return .failure(.invalidBody("cannot decode the declared Content-Encoding \"\(encoding)\""), retryAfter: nil)
        }
        if let failure = tlsFailure(code) { return .failure(failure, retryAfter: nil) }
        if code == CURLE_TOO_MANY_REDIRECTS {
            let start = request.map { secrets.redact($0.url) } ?? "the request"
            return .failure(.redirects("more than \(maxRedirects) redirects from \(start) (a redirect loop?), "
                                       + "the last to \(secrets.redact(effectiveURL))"), retryAfter: nil)
        }
        guard code == CURLE_OK else {
            return .failure(.transport(curlMessage(code)), retryAfter: nil)
        }
        var status = 0
        provision_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard (200..<300).contains(status) || (status == 304 && request?.isConditional == true) else {
            if status == 404, let archive = transport?.archive, archive.size != nil {
                // The archive answered before: it is gone now, not the tile missing.
                return .failure(.changed("\(archive.noun) \(archive.displayURL) answers HTTP 404 now, after it was read"),
                                retryAfter: nil)
            }
            if status == 404 { return .failure(.notFound, retryAfter: nil) }
            var retryAfter: TimeInterval?
            if status == 429 || status == 503 {
                retryAfter = header("Retry-After").flatMap { RetryPolicy.retryAfter($0, now: now) }
            }
            return .failure(.status(status), retryAfter: retryAfter)
        }
        let contentEncoding = header("Content-Encoding")
        if let encoding = contentEncoding?.trimmingCharacters(in: .whitespaces).lowercased(), !encoding.isEmpty,
           encoding != "identity" {
            guard encoding == "gzip" || encoding == "x-gzip" else {
                return .failure(.invalidBody("unsupported Content-Encoding \"\(encoding)\" (only gzip is accepted)"), retryAfter: nil)
            }
            if !Gzip.isGzip(body) {
                return .failure(.invalidBody("the body does not match its declared Content-Encoding \"\(encoding)\""),
                                retryAfter: nil)
            }
        }
        // Content-Length counts the bytes on the wire, as does SIZE_DOWNLOAD.
        var expected: curl_off_t = -1
        provision_curl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected)
        var received: curl_off_t = -1
        provision_curl_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &received)
        if expected >= 0 && received >= 0 && expected != received {
            return .failure(.transport("truncated body: received \(grouped(received)) of \(grouped(expected)) bytes"), retryAfter: nil)
        }
        if expected >= 0 && contentEncoding == nil && Int64(expected) != Int64(body.count) {
            return .failure(.transport("truncated body: received \(grouped(body.count)) of \(grouped(expected)) bytes"), retryAfter: nil)
        }
        let headers = CacheHeaders(etag: header("ETag"), lastModified: header("Last-Modified"),
                                   cacheControl: headerLines("Cache-Control"), expires: header("Expires"),
                                   date: header("Date"), buildTime: buildTime)
        if status == 304 { return .notModified(headers.fields) }
        if let range = transport?.range { return rangeOutcome(range, status: status, headers: headers) }
        if status == 204 { return .noContent(headers.fields) }
        return .body(body, headers, contentType: header("Content-Type"))
    }

    /// A range answer: 206 with a `Content-Range` for exactly the bytes asked for (fewer only where
    /// the object ends), from the archive version pinned by the first answer.
    private func rangeOutcome(_ range: ByteRange, status: Int, headers: CacheHeaders) -> Outcome {
        let target = secrets.redact(url)
        guard status == 206 else {
            return .failure(.unsupported("\(target) answered a range request with HTTP \(status) instead of 206 Partial "
                                         + "Content: the server does not serve byte ranges"), retryAfter: nil)
        }
        guard let text = header("Content-Range"), let served = Self.contentRange(text) else {
            return .failure(.invalidBody("\(target) answered \(range) with a missing or unreadable Content-Range "
                                         + "\"\(header("Content-Range") ?? "")\""), retryAfter: nil)
        }
        if let archive = transport?.archive,
           let changed = archive.check(etag: header("ETag"), lastModified: header("Last-Modified"), size: served.size) {
            return .failure(changed, retryAfter: nil)
        }
        let wholeEnd = min(range.last, served.size &- 1)
        guard served.first == range.offset, served.last == wholeEnd, UInt64(body.count) == wholeEnd &- range.offset &+ 1 else {
            return .failure(.transport("\(target) answered \(range) with bytes \(served.first)-\(served.last)/\(served.size) "
                                       + "and \(grouped(body.count)) bytes of body"), retryAfter: nil)
        }
        return .body(body, headers, contentType: header("Content-Type"))
    }

    /// Why a range answer ran past the length asked for: a server that ignores `Range`, or one
    /// that sends more than it says.
    private func rangeOverflow(_ range: ByteRange) -> FetchFailure {
        var status = 0
        provision_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let target = secrets.redact(url)
        if status == 200 {
            return .unsupported("\(target) answered a range request with HTTP 200 and the whole object: the server "
                                + "does not serve byte ranges")
        }
        return .invalidBody("\(target) sent more than the \(grouped(Int(clamping: range.count))) bytes of \(range) (HTTP \(status))")
    }

    /// `bytes FIRST-LAST/SIZE` of a `Content-Range` header; nil for any other form (`*` sizes too).
    static func contentRange(_ text: String) -> (first: UInt64, last: UInt64, size: UInt64)? {
        let value = text.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let size = UInt64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = UInt64(bounds[0]), let last = UInt64(bounds[1]),
              first <= last, last < size else { return nil }
        return (first, last, size)
    }

    /// libcurl's name for `code` with the detail of its error buffer.
    private func curlMessage(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        let summary = String(cString: curl_easy_strerror(code))
        return detail.isEmpty ? summary : "\(summary): \(detail)"
    }

    /// A certificate the CA store does not vouch for, or a CA file that cannot be used: the same
    /// answer on every attempt, so a failure that names the host and the way out.
    private func tlsFailure(_ code: CURLcode) -> FetchFailure? {
        guard code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_ISSUER_ERROR
                || code == CURLE_SSL_CACERT_BADFILE else { return nil }
        let host = HTTPFetcher.hostKey(effectiveURL)
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            let detail = String(cString: errorBuffer)
            var text = "the certificate of \(host) is not trusted (\(detail.isEmpty ? curlMessage(code) : detail)); "
            if let file = trust.caFile {
                text += "the CA certificates come from \(file) (\(trust.caFileVariable ?? "CURL_CA_BUNDLE")): add the issuing CA to it"
            } else {
                text += "behind a corporate proxy that inspects HTTPS, set CURL_CA_BUNDLE to a PEM file of its CA certificate"
            }
            return .tls(text)
        case CURLE_SSL_CACERT_BADFILE:
            let source = trust.caFile.map { "\($0) (\(trust.caFileVariable ?? "CURL_CA_BUNDLE"))" } ?? "the system CA store"
            return .tls("cannot load the CA certificates of \(source) to check \(host) (\(curlMessage(code))); "
                        + "set CURL_CA_BUNDLE to a readable PEM file of CA certificates")
        default:
            return nil
        }
    }

    /// The URL of the last request of the transfer (after redirects); the transport URL when unknown.
    private var effectiveURL: String {
        var pointer: UnsafeMutableRawPointer?
        provision_curl_easy_getinfo_pointer(handle, CURLINFO_EFFECTIVE_URL, &pointer)
        guard let pointer else { return url }
        return String(cString: pointer.assumingMemoryBound(to: CChar.self))
    }

    private func header(_ name: String) -> String? {
        provision_curl_header_value(handle, name).map { String(cString: $0) }
    }

    /// Every field line named `name` of the last response, in the order received.
    private func headerLines(_ name: String) -> [String] {
        (0..<provision_curl_header_count(handle, name)).compactMap { index in
            provision_curl_header_value_at(handle, name, index).map { String(cString: $0) }
        }
    }
}

/// libcurl's write callback: appends to the transfer's body, or aborts past its size cap.
private let curlWriteBody: provision_curl_write_callback = { pointer, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard length > 0, let pointer else { return length }
    if transfer.body.count + length > transfer.bodyLimit {
        transfer.overflowed = true
        return 0
    }
    if transfer.body.isEmpty { transfer.reserveDeclaredLength(atLeast: length) }
    pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        transfer.body.append(bytes, count: length)
    }
    return length
}
