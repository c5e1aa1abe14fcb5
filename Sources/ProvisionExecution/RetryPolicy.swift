import Foundation
import ProvisionModel

/// How often and after how long a transiently failed request is tried again.
///
/// Why full jitter: many tiles of one server fail together (a 503 burst, a dropped
/// connection pool); delaying each retry by a uniformly random fraction of an exponentially
/// growing cap spreads them out instead of sending them back in one wave. A server that says
/// when to come back (`Retry-After` on 429 or 503) is believed, up to `maxRetryAfter`.
public struct RetryPolicy: Sendable {
    /// Total attempts per request, the first one included (at least 1).
    public var maxAttempts: Int
    /// The delay cap of the first retry, in seconds; it doubles with each further retry.
    public var baseDelay: TimeInterval
    /// The largest backoff delay cap, in seconds.
    public var maxDelay: TimeInterval
    /// The longest `Retry-After` honoured, in seconds; a longer one is shortened to this.
    public var maxRetryAfter: TimeInterval
    /// A uniform random number in 0..<1 (injectable for tests). The delays are waited for on
    /// the fetch loop's clock (`HTTPFetcher.Configuration.clock`).
    public var random: @Sendable () -> Double

    /// The default `maxRetryAfter`: two minutes.
    public static let defaultMaxRetryAfter: TimeInterval = 120

    /// Creates a policy; `retries` is the number of attempts after the first.
    public init(retries: Int, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
                maxRetryAfter: TimeInterval = RetryPolicy.defaultMaxRetryAfter,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.maxAttempts = max(1, retries + 1)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxRetryAfter = max(0, maxRetryAfter)
        self.random = random
    }

    /// A policy with the job file's retry count and default delays.
    public init(settings: DownloadSettings) {
        self.init(retries: settings.retries)
    }

    /// A policy that never retries.
    public static let none = RetryPolicy(retries: 0)

    /// Whether a request that failed with `failure` on attempt `attempt` (1-based) is tried again.
    public func shouldRetry(_ failure: FetchFailure, attempt: Int) -> Bool {
        failure.isTransient && attempt < maxAttempts
    }

    /// The delay before the retry that follows attempt `attempt` (1-based): uniform in
    /// 0…min(maxDelay, baseDelay × 2^(attempt-1)) (full jitter), and at least `retryAfter`
    /// when the server gave one, capped at `maxRetryAfter`.
    public func delay(afterAttempt attempt: Int, retryAfter: TimeInterval? = nil) -> TimeInterval {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let cap = min(maxDelay, baseDelay * pow(2, exponent))
        let jittered = cap * min(max(random(), 0), 1)
        if let retryAfter, retryAfter.isFinite { return max(jittered, min(max(0, retryAfter), maxRetryAfter)) }
        return jittered
    }

    /// Reads a `Retry-After` value: delay-seconds (`120`) or an HTTP date, relative to `now`
    /// (Unix seconds). A date in the past gives 0; anything unreadable gives nil.
    public static func retryAfter(_ value: String, now: Int64) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return TimeInterval(text)
        }
        guard text.contains(where: \.isLetter), let date = HTTPCacheFields.httpDate(text) else { return nil }
        return TimeInterval(max(0, date - now))
    }
}
