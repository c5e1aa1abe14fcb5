import CCurl
import Foundation
import ProvisionModel

/// Something that counts the retries it has made, for download statistics.
public protocol RetryCounting: AnyObject {
    /// Retries made since creation (attempts after the first, over all requests).
    var retryCount: Int { get }
}

/// The HTTP transport: libcurl's multi interface driven on the calling thread.
///
/// Why the multi interface directly: one thread drives every transfer with a poll loop,
/// connections and TLS sessions are reused across requests, and there is no per-request
/// thread or task. In-flight transfers never exceed `concurrency`; requests are pulled from
/// the caller's iterator only when a slot is free, so the work list is never materialised.
/// A transiently failed request waits out its backoff delay in a side list while the other
/// transfers continue, then re-enters the in-flight set.
public final class HTTPFetcher: Fetcher, RetryCounting {
    /// How the fetcher behaves.
    public struct Configuration: Sendable {
        /// Transfers in flight at once.
        public var concurrency: Int
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
        /// When and how often transient failures are retried.
        public var retry: RetryPolicy
        /// Maps a canonical URL to the URL actually fetched; nil keeps the canonical URL.
        public var rewrite: @Sendable (String) -> String?
        /// The wall clock in Unix seconds, used to turn a relative max-age into an expiry.
        public var now: @Sendable () -> Int64

        /// The default User-Agent.
        public static let defaultUserAgent = "provision/0.1 (+https://github.com/provision-maps/provision)"

        /// Creates a configuration from the job file's download settings.
        public init(settings: DownloadSettings = DownloadSettings(),
                    stallTimeout: TimeInterval = 15,
                    maxResponseBytes: Int = 64 << 20,
                    maxRedirects: Int = 5,
                    userAgent: String = Configuration.defaultUserAgent,
                    retry: RetryPolicy? = nil,
                    rewrite: @escaping @Sendable (String) -> String? = { _ in nil },
                    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
            self.concurrency = max(1, settings.concurrency)
            self.timeout = settings.timeoutSeconds > 0 ? settings.timeoutSeconds : 30
            self.stallTimeout = min(stallTimeout, self.timeout)
            self.maxResponseBytes = maxResponseBytes
            self.maxRedirects = maxRedirects
            self.userAgent = userAgent
            self.retry = retry ?? RetryPolicy(settings: settings)
            self.rewrite = rewrite
            self.now = now
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The checks every body passes before it is delivered.
    public let verifier: Verifier

    private let multi: UnsafeMutableRawPointer
    private var idle: [CurlTransfer] = []
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Serialises `fetchAll` calls.
    private let lock = NSLock()
    private let countLock = NSLock()
    private var retries = 0

    private static let globalInit: CURLcode = provision_curl_global_init_all()

    /// Creates a fetcher; throws `FetchFailure.transport` when libcurl cannot be initialised.
    public init(configuration: Configuration = Configuration(), verifier: Verifier? = nil) throws {
        guard Self.globalInit == CURLE_OK, let multi = curl_multi_init() else {
            throw FetchFailure.transport("libcurl could not be initialised")
        }
        self.multi = multi
        self.configuration = configuration
        self.verifier = verifier ?? Verifier(maxInflatedBytes: configuration.maxResponseBytes)
        provision_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.concurrency * 2)
    }

    deinit {
        for transfer in active.values { curl_multi_remove_handle(multi, transfer.handle) }
        active.removeAll()
        idle.removeAll()
        curl_multi_cleanup(multi)
    }

    /// Retries made since creation.
    public var retryCount: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return retries
    }

    private func countRetry() {
        countLock.lock()
        retries += 1
        countLock.unlock()
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
        lock.lock()
        defer { lock.unlock() }
        withoutActuallyEscaping(transportURL) { transportURL in
            withoutActuallyEscaping(onResult) { onResult in
                var loop = Loop(fetcher: self, transportURL: transportURL, onResult: onResult)
                loop.run(&requests)
            }
        }
    }

    /// A request waiting out its retry delay.
    fileprivate struct Delayed {
        var request: FetchRequest
        var attempt: Int
        var due: UInt64
    }

    /// The state of one `fetchAll` call.
    private struct Loop {
        let fetcher: HTTPFetcher
        let transportURL: (FetchRequest) -> String
        let onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
        var delayed: [Delayed] = []
        var exhausted = false

        mutating func run<I: IteratorProtocol>(_ requests: inout I) where I.Element == FetchRequest {
            let concurrency = fetcher.configuration.concurrency
            while true {
                let now = DispatchTime.now().uptimeNanoseconds
                startDueRetries(now: now, concurrency: concurrency)
                // Delayed retries do not hold a transfer slot, but they count toward a cap so
                // a failing server cannot make the side list grow without bound.
                while !exhausted, fetcher.active.count < concurrency,
                      fetcher.active.count + delayed.count < 2 * concurrency {
                    guard let request = requests.next() else {
                        exhausted = true
                        break
                    }
                    start(request, attempt: 1)
                }
                if fetcher.active.isEmpty {
                    guard let next = delayed.indices.min(by: { delayed[$0].due < delayed[$1].due }) else {
                        if exhausted { return }
                        continue
                    }
                    // Nothing in flight: wait for the earliest retry, then start it.
                    let waiting = delayed.remove(at: next)
                    let remaining = waiting.due > now ? waiting.due - now : 0
                    fetcher.configuration.retry.sleep(Double(remaining) / 1e9)
                    start(waiting.request, attempt: waiting.attempt)
                    continue
                }
                var running: Int32 = 0
                curl_multi_perform(fetcher.multi, &running)
                let finished = collectFinished()
                if finished == 0 {
                    var timeout: Int32 = 1000
                    if let due = delayed.map(\.due).min() {
                        let now = DispatchTime.now().uptimeNanoseconds
                        timeout = min(timeout, Int32(clamping: due > now ? (due - now) / 1_000_000 : 0))
                    }
                    curl_multi_poll(fetcher.multi, nil, 0, timeout, nil)
                }
            }
        }

        private mutating func startDueRetries(now: UInt64, concurrency: Int) {
            var index = 0
            while index < delayed.count, fetcher.active.count < concurrency {
                if delayed[index].due <= now {
                    let waiting = delayed.remove(at: index)
                    start(waiting.request, attempt: waiting.attempt)
                } else {
                    index += 1
                }
            }
        }

        private mutating func start(_ request: FetchRequest, attempt: Int) {
            let transfer: CurlTransfer
            if let reused = fetcher.idle.popLast() {
                transfer = reused
            } else {
                let options = CurlTransfer.Options(
                    timeout: fetcher.configuration.timeout, stallTimeout: fetcher.configuration.stallTimeout,
                    maxRedirects: fetcher.configuration.maxRedirects,
                    maxBytes: fetcher.configuration.maxResponseBytes, userAgent: fetcher.configuration.userAgent)
                guard let created = CurlTransfer(options: options) else {
                    finish(request, attempt: attempt, .failure(.transport("curl_easy_init failed")), retryAfter: nil)
                    return
                }
                transfer = created
            }
            transfer.prepare(request, url: transportURL(request), attempt: attempt)
            guard curl_multi_add_handle(fetcher.multi, transfer.handle) == CURLM_OK else {
                fetcher.idle.append(transfer)
                finish(request, attempt: attempt, .failure(.transport("curl_multi_add_handle failed")), retryAfter: nil)
                return
            }
            fetcher.active[transfer.handle] = transfer
        }

        /// Reads libcurl's completion messages; returns how many transfers finished.
        private mutating func collectFinished() -> Int {
            var finished = 0
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(fetcher.multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                      let transfer = fetcher.active.removeValue(forKey: handle) else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(fetcher.multi, handle)
                finished += 1
                let outcome = transfer.outcome(code, now: fetcher.configuration.now())
                let request = transfer.request
                let attempt = transfer.attempt
                transfer.request = nil
                transfer.body = Data()
                fetcher.idle.append(transfer)
                guard let request else { continue }
                switch outcome {
                case .body(let data, let fields):
                    let verified = fetcher.verifier.verify(data, kind: request.kind).map {
                        FetchedBody(data: $0, etag: fields.etag, modified: fields.modified, expires: fields.expires)
                    }
                    finish(request, attempt: attempt, verified, retryAfter: nil)
                case .failure(let failure, let retryAfter):
                    finish(request, attempt: attempt, .failure(failure), retryAfter: retryAfter)
                }
            }
            return finished
        }

        private mutating func finish(_ request: FetchRequest, attempt: Int,
                                     _ result: Result<FetchedBody, FetchFailure>, retryAfter: TimeInterval?) {
            let policy = fetcher.configuration.retry
            if case .failure(let failure) = result, policy.shouldRetry(failure, attempt: attempt) {
                let delay = policy.delay(afterAttempt: attempt, retryAfter: retryAfter)
                let due = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, delay) * 1e9)
                delayed.append(Delayed(request: request, attempt: attempt + 1, due: due))
                fetcher.countRetry()
                return
            }
            onResult(request, result)
        }
    }
}
