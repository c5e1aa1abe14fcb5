import Foundation

/// Where the executor's loops read the time and wait for it to pass: the fetch loop (retry
/// backoff, the rate limit), the writer's idle flush and the assembler's spill window.
///
/// Why a protocol: tests that need time to pass advance a manual clock instead of sleeping, so
/// they take no longer than the work and never depend on how busy the machine is.
public protocol MonotonicClock: Sendable {
    /// Monotonic nanoseconds since an arbitrary start.
    var now: UInt64 { get }
    /// Blocks the calling thread until `now` reaches `deadline`.
    func sleep(until deadline: UInt64)
    /// Waits on `condition`, which the caller has locked, until it is signalled or `now`
    /// reaches `deadline`; may return early (the caller re-checks what it waits for).
    func wait(_ condition: NSCondition, until deadline: UInt64)
}

/// The clock of the running process: `DispatchTime.uptimeNanoseconds`.
public struct SystemClock: MonotonicClock {
    /// The system clock.
    public init() {}

    /// Monotonic nanoseconds since boot.
    public var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Sleeps until `deadline`.
    public func sleep(until deadline: UInt64) {
        let now = self.now
        guard deadline > now else { return }
        Thread.sleep(forTimeInterval: Double(deadline - now) / 1e9)
    }

    /// Waits on `condition` until signalled or until `deadline`.
    public func wait(_ condition: NSCondition, until deadline: UInt64) {
        let now = self.now
        guard deadline > now else { return }
        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
    }
}

extension MonotonicClock {
    /// `seconds` as clock nanoseconds (0 for a negative or not finite value, at most a day).
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds, 86_400) * 1e9)
    }
}
