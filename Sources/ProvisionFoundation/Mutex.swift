import Foundation

/// A value that threads share, reached only through a lock: the one hand-audited
/// `@unchecked Sendable` type of the library.
///
/// Why it is sound: `value` is private and read or written only inside `withLock` or `read`,
/// with `condition` held, so no two threads ever touch it at once, and the lock orders every
/// access after the previous one. A non-`Sendable` value may be kept inside too: it comes in as
/// `sending` (the compiler checks that the caller keeps no reference to it) and the closure gets
/// it as `inout sending`, so as with `Synchronization.Mutex` (macOS 15, where this package
/// supports macOS 13) it cannot be stashed elsewhere. Do not hand a reference to a non-`Sendable`
/// value out of the closure.
///
/// Why `NSCondition` and not `NSLock`: the same pthread mutex, plus a condition variable, so a
/// thread can wait for the value to change (`withLock(when:)`, as in a bounded queue). Every
/// `withLock` wakes the waiters when there are any, so a waiter never misses a change; when no
/// one waits that costs nothing. `read` only looks, so it wakes no one: use it for reads that a
/// busy thread makes often while another waits (a waiter woken for nothing costs two context
/// switches).
public final class Mutex<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value
    private var waiters = 0

    /// Holds `value`, which the caller gives up.
    public init(_ value: sending Value) {
        self.value = value
    }

    /// Runs `body` with the value, the lock held, and returns what it returns.
    public func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        condition.lock()
        defer { unlock() }
        return try body(&value)
    }

    /// Runs `body` with a copy of the value, the lock held, without waking waiters: for reads.
    public func read<Result>(_ body: (Value) throws -> sending Result) rethrows -> sending Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(value)
    }

    /// Waits, the lock released, until `isReady` holds for the value, then runs `body` as
    /// `withLock(_:)` does. `isReady` is checked with the lock held, after every change.
    public func withLock<Result>(when isReady: (Value) -> Bool,
                                 _ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        condition.lock()
        defer { unlock() }
        while !isReady(value) {
            waiters += 1
            condition.wait()
            waiters -= 1
        }
        return try body(&value)
    }

    /// Waits, the lock released, until `isReady` holds for the value or `clock` reaches
    /// `deadline` (monotonic nanoseconds), then runs `body`, which checks `isReady` again to know
    /// which came first.
    public func withLock<Result>(when isReady: (Value) -> Bool, deadline: UInt64, clock: any MonotonicClock,
                                 _ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        condition.lock()
        defer { unlock() }
        while !isReady(value), clock.now < deadline {
            waiters += 1
            clock.wait(condition, until: deadline)
            waiters -= 1
        }
        return try body(&value)
    }

    private func unlock() {
        if waiters > 0 { condition.broadcast() }
        condition.unlock()
    }
}
