import Foundation
import ProvisionFoundation

/// A token bucket: at most `burst` requests at once, refilled at `rate` tokens per second.
///
/// Why a bucket on request starts (retries included): a host's rate limit counts requests,
/// not successes, so a retry wave must not exceed it either. With the default burst of one,
/// starts are spaced `1 / rate` seconds apart, so any window of `t` seconds holds at most
/// `1 + t × rate` starts. Times are monotonic nanoseconds, read by the caller from its `MonotonicClock`.
public struct RateLimiter: Sendable {
    /// Tokens added per second.
    public let rate: Double
    /// The most tokens the bucket holds.
    public let burst: Double
    private var tokens: Double
    private var updated: UInt64?

    /// A full bucket; `rate` must be > 0.
    public init(rate: Double, burst: Double = 1) {
        self.rate = max(rate, 1e-6)
        self.burst = max(1, burst)
        self.tokens = self.burst
    }

    private mutating func refill(now: UInt64) {
        if let updated, now > updated {
            tokens = min(burst, tokens + Double(now - updated) / 1e9 * rate)
        }
        if updated == nil || now > (updated ?? 0) { updated = now }
    }

    /// Takes a token if one is available at `now`.
    public mutating func take(now: UInt64) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether a token is available at `now` (without taking it).
    public mutating func isAvailable(now: UInt64) -> Bool {
        refill(now: now)
        return tokens >= 1
    }

    /// Nanoseconds from `now` until a token is available (0 when one is).
    public mutating func wait(now: UInt64) -> UInt64 {
        refill(now: now)
        guard tokens < 1 else { return 0 }
        return UInt64(((1 - tokens) / rate * 1e9).rounded(.up))
    }
}
