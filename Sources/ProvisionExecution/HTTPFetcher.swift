import CCurl
import Foundation
import ProvisionFoundation
import ProvisionModel

/// Something that counts the retries it has made, for download statistics.
public protocol RetryCounting: AnyObject {
    /// Retries made since creation (attempts after the first, over all requests).
    var retryCount: Int { get }
}

/// The HTTP transport: libcurl's multi interface, driven by the calling thread and
/// `transferLoops - 1` threads of its own.
///
/// Why the multi interface directly: a few threads drive every transfer with poll loops,
/// connections and TLS sessions are reused across requests, and there is no per-request
/// thread or task. The calling thread schedules (`FetchLoop`), and each transfer loop
/// (`TransferLoop`) moves its share of the transfers, so receiving (TLS, HTTP/2, headers) uses
/// more than one core. In-flight transfers never exceed `concurrency`; requests are pulled from
/// the caller's iterator only when a slot is free, so the work list is never materialised.
/// A transiently failed request waits out its backoff delay in a side list while the other
/// transfers continue, then re-enters the in-flight set.
///
/// Flow control and failure handling (see `FetchLoop`): at most `perHost` transfers per host, so
/// a slow host never holds every slot; an optional token bucket (`requestsPerSecond`) on every
/// start, retries included; `Retry-After` honoured on 429/503; a 401/403 to a request carrying a key or token stops
/// the run (no new request is pulled, waiting ones are reported `.abandoned`); every failure message is redacted
/// (`URLSecrets.redact`). Under `missingTiles: .skip` a tile 404 is delivered as `FetchedBody.missingTile`;
/// a tile 204 is an empty tile whatever `missingTiles` says (MapLibre's "no content"), and a 204
/// for any other kind a failure. Redirects are followed across hosts up to `maxRedirects`; results
/// carry the request as made, so the store keeps the URL the style names, never the final one.
/// HTTPS uses HTTP/2 when the server offers it (ALPN), multiplexed; certificates are checked
/// against `trust` (CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR), and an untrusted one is a
/// `FetchFailure.tls` that is not retried.
public final class HTTPFetcher: Fetcher, RetryCounting {
    /// How the fetcher behaves.
    public struct Configuration: Sendable {
        /// Transfers in flight at once.
        public var concurrency: Int
        /// Transfers in flight at once to one host (`host:port` of the transport URL).
        public var perHost: Int
        /// Threads that move the transfers, each with its own connections (at most `concurrency`
        /// and `perHost`: each loop holds a share of a host's connections).
        public var transferLoops: Int
        /// Transfer starts per second, retries included; nil for no limit.
        public var requestsPerSecond: Double?
        /// Seconds one attempt may take in total.
        public var timeout: TimeInterval
        /// Seconds an attempt may go without receiving a byte.
        public var stallTimeout: TimeInterval
        /// The largest response body accepted, in bytes (after content decoding).
        public var maxResponseBytes: Int
        /// Redirects followed per request.
        public var maxRedirects: Int
        /// The User-Agent header.
        public var userAgent: String
        /// What a 404 for a tile means: a failure, or an empty tile (`FetchedBody.missingTile`).
        public var missingTiles: MissingTilePolicy
        /// Whether a fatal failure (a refused key, `FetchFailure.isFatal`) stops the run: no new
        /// request is pulled, waiting ones are reported `.abandoned`, in-flight ones finish.
        public var stopOnFatal: Bool
        /// When and how often transient failures are retried.
        public var retry: RetryPolicy
        /// Maps a canonical URL to the URL actually fetched; nil keeps the canonical URL.
        public var rewrite: @Sendable (String) -> String?
        /// Whether a URL actually fetched carries a key or token: a 401/403 to it is
        /// `FetchFailure.refused` (fatal), to any other `FetchFailure.status` (that URL fails).
        /// By default, a secret query parameter or a user-info password (what `URLSecrets.redact` hides).
        public var carriesCredential: @Sendable (String) -> Bool = { URLSecrets().redact($0) != $0 }
        /// The wall clock in Unix seconds: what a `Retry-After` date counts from (and the build
        /// time when `buildTime` is nil).
        public var now: @Sendable () -> Int64
        /// The time of the build (Unix seconds) that a response's freshness lifetime counts from
        /// (`HTTPCacheFields`), so that a stored `expires` never depends on when a response came.
        public var buildTime: Int64?
        /// The CA certificates HTTPS origins are checked against.
        public var trust: TLSTrust
        /// The job's secrets: every failure message is redacted with them (`URLSecrets.redact`).
        public var secrets: URLSecrets
        /// Where the fetch loop reads the time and waits for it: retry delays and the rate limit.
        public var clock: any MonotonicClock

        /// One transfer loop per core, up to four: receiving uses every core of a small machine,
        /// and connections are not split more finely than a host's few needs.
        public static var defaultTransferLoops: Int { min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

        /// The default User-Agent.
        public static let defaultUserAgent = "provision/0.1 (+https://github.com/provision-maps/provision)"

        /// Creates a configuration from the job file's download settings; an explicit argument
        /// overrides the setting of the same meaning.
        public init(settings: DownloadSettings = DownloadSettings(),
                    stallTimeout: TimeInterval? = nil,
                    maxResponseBytes: Int? = nil,
                    maxRedirects: Int = 5,
                    userAgent: String? = nil,
                    retry: RetryPolicy? = nil,
                    rewrite: @escaping @Sendable (String) -> String? = { _ in nil },
                    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                    buildTime: Int64? = nil,
                    trust: TLSTrust = TLSTrust(environment: ProcessInfo.processInfo.environment),
                    secrets: URLSecrets = URLSecrets(),
                    clock: any MonotonicClock = SystemClock()) {
            self.concurrency = max(1, settings.concurrency)
            self.perHost = max(1, settings.perHost)
            self.transferLoops = Configuration.defaultTransferLoops
            self.requestsPerSecond = settings.requestsPerSecond.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            self.timeout = settings.timeoutSeconds > 0 ? settings.timeoutSeconds : 30
            let stall = stallTimeout ?? settings.stallSeconds
            self.stallTimeout = min(stall > 0 ? stall : 15, self.timeout)
            self.maxResponseBytes = max(1, maxResponseBytes ?? settings.maxResponseBytes)
            self.maxRedirects = maxRedirects
            self.userAgent = userAgent ?? settings.userAgent ?? Configuration.defaultUserAgent
            self.missingTiles = settings.missingTiles
            self.stopOnFatal = true
            self.retry = retry ?? RetryPolicy(settings: settings)
            self.rewrite = rewrite
            self.now = now
            self.buildTime = buildTime
            self.trust = trust
            self.secrets = secrets
            self.clock = clock
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The checks every body passes before it is delivered.
    public let verifier: Verifier

    /// The transfer loops, with their connections kept from one `fetchAll` to the next.
    let loops: [TransferLoop]
    /// Serialises `fetchAll` calls.
    private let lock = NSLock()
    private let retries = Mutex(0)

    private static let globalInit: CURLcode = provision_curl_global_init_all()

    /// Creates a fetcher; throws `FetchFailure.transport` when libcurl cannot be initialised.
    public init(configuration: Configuration = Configuration(), verifier: Verifier? = nil) throws {
        guard Self.globalInit == CURLE_OK else { throw FetchFailure.transport("libcurl could not be initialised") }
        let count = max(1, min(configuration.transferLoops, configuration.concurrency, configuration.perHost))
        let loops = (0..<count).compactMap { index in
            // perHost split as evenly as it goes: the shares add up to perHost.
            let share = configuration.perHost / count + (index < configuration.perHost % count ? 1 : 0)
            return TransferLoop(index: index, configuration: configuration, hostConnections: share)
        }
        guard loops.count == count else { throw FetchFailure.transport("libcurl could not make a multi handle") }
        self.loops = loops
        self.configuration = configuration
        self.verifier = verifier ?? Verifier(maxInflatedBytes: configuration.maxResponseBytes)
    }

    /// Retries made since creation.
    public var retryCount: Int {
        retries.read { $0 }
    }

    func countRetry() {
        retries.withLock { $0 += 1 }
    }

    /// Fetches every request from the URL `configuration.rewrite` maps its canonical URL to.
    public func fetchAll<I: IteratorProtocol>(
        _ requests: inout I,
        onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
    ) where I.Element == FetchRequest {
        let rewrite = configuration.rewrite
        fetchAll(&requests, transportURL: { rewrite($0.url) ?? $0.url }, onResult: onResult)
    }

    /// Fetches every request from the URL `transportURL` gives for it; results carry the
    /// original request. Calls from several threads are serialised.
    public func fetchAll<I: IteratorProtocol>(
        _ requests: inout I,
        transportURL: (FetchRequest) -> String,
        onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
    ) where I.Element == FetchRequest {
        withoutActuallyEscaping(transportURL) { transportURL in
            var source = PlainTransportSource(base: requests, transportURL: transportURL)
            fetchAll(&source, onResult: onResult)
            requests = source.base
        }
    }

    /// Fetches every request `source` gives, as it gives them; results carry the request. Calls
    /// from several threads are serialised.
    func fetchAll<S: TransportSource>(_ source: inout S,
                                      onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        withoutActuallyEscaping(onResult) { onResult in
            var loop = FetchLoop(fetcher: self, onResult: onResult)
            loop.run(&source)
        }
    }
}

extension HTTPFetcher {
    /// The `host:port` of a URL, lower-cased, with the scheme's default port when none is given:
    /// the key of the per-host cap.
    public static func hostKey(_ url: String) -> String {
        asciiHostKey(url) ?? unicodeHostKey(url)
    }

    /// `hostKey` of a URL whose scheme and authority are ASCII, as every transport URL is,
    /// read byte by byte (it runs once per request on the transfer loop); nil otherwise.
    static func asciiHostKey(_ url: String) -> String? {
        var url = url
        url.makeContiguousUTF8()
        return url.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var index = 0
            while index + 2 < bytes.count, !(bytes[index] == 0x3A && bytes[index + 1] == 0x2F && bytes[index + 2] == 0x2F) {
                guard bytes[index] < 0x80 else { return nil }
                index += 1
            }
            guard index + 2 < bytes.count else { return nil }
            let isHTTPS = index == 5 && zip(bytes[0..<5], "https".utf8).allSatisfy { $0 | 0x20 == $1 }
            var start = index + 3
            var end = start
            while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 {
                guard bytes[end] < 0x80 else { return nil }
                if bytes[end] == 0x40 { start = end + 1 }
                end += 1
            }
            var key = [UInt8]()
            key.reserveCapacity(end - start + 4)
            var hasPort = false
            var inBrackets = false
            for byte in bytes[start..<end] {
                if byte == 0x5B { inBrackets = true } else if byte == 0x5D { inBrackets = false }
                if byte == 0x3A, !inBrackets { hasPort = true }
                key.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            }
            if !hasPort { key.append(contentsOf: (isHTTPS ? ":443" : ":80").utf8) }
            return String(decoding: key, as: UTF8.self)
        } ?? nil
    }

    /// `hostKey` of any URL, through Foundation's string search.
    static func unicodeHostKey(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "" }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        var authority = rest[..<(rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let text = authority.lowercased()
        let hasPort = text.hasPrefix("[") ? text.contains("]:") : text.contains(":")
        if hasPort { return text }
        return text + (scheme == "https" ? ":443" : ":80")
    }
}
