import Foundation
import ProvisionModel

/// How often and after how long a transiently failed request is tried again.
///
/// Why full jitter: many tiles of one server fail together (a 503 burst, a dropped
/// connection pool); delaying each retry by a uniformly random fraction of an exponentially
/// growing cap spreads them out instead of sending them back in one wave.
public struct RetryPolicy: Sendable {
    /// Total attempts per request, the first one included (at least 1).
    public var maxAttempts: Int
    /// The delay cap of the first retry, in seconds; it doubles with each further retry.
    public var baseDelay: TimeInterval
    /// The largest delay cap, in seconds.
    public var maxDelay: TimeInterval
    /// A uniform random number in 0..<1 (injectable for tests).
    public var random: @Sendable () -> Double
    /// Blocks the calling thread for a number of seconds; used only when nothing else is in flight.
    public var sleep: @Sendable (TimeInterval) -> Void

    /// Creates a policy; `retries` is the number of attempts after the first.
    public init(retries: Int, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                sleep: @escaping @Sendable (TimeInterval) -> Void = { seconds in
                    if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
                }) {
        self.maxAttempts = max(1, retries + 1)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.random = random
        self.sleep = sleep
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
    /// 0…min(maxDelay, baseDelay × 2^(attempt-1)), and at least `retryAfter` (capped at `maxDelay`).
    public func delay(afterAttempt attempt: Int, retryAfter: TimeInterval? = nil) -> TimeInterval {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let cap = min(maxDelay, baseDelay * pow(2, exponent))
        let jittered = cap * min(max(random(), 0), 1)
        if let retryAfter { return max(jittered, min(retryAfter, maxDelay)) }
        return jittered
    }
}
