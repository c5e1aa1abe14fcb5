import Foundation
import ProvisionFoundation
import ProvisionModel

/// A clock that moves only when told to, for tests: `advance(by:)` moves it and wakes every
/// thread waiting for it; `sleep(until:)` (a loop with nothing else to do) moves it to the
/// deadline at once and records how long it was asked to wait. `waitForWaiter()` tells a test
/// when the thread it woke has done its work and waits again.
public final class ManualClock: MonotonicClock {
    private struct State {
        var now: UInt64
        /// How many times the clock was moved.
        var moves = 0
        /// `moves` when each thread now waiting began to wait.
        var waiterMoves: [Int] = []
        var sleeps: [UInt64] = []
        /// The conditions threads wait on, with how many threads wait on each.
        var waiting: [ObjectIdentifier: (condition: NSCondition, count: Int)] = [:]
    }

    private let state: Mutex<State>

    /// A clock reading `start` nanoseconds.
    public init(start: UInt64 = 1_000_000_000) {
        state = Mutex(State(now: start))
    }

    /// The current reading, in nanoseconds.
    public var now: UInt64 { state.read { $0.now } }

    /// Every wait `sleep(until:)` was asked for, in nanoseconds, in order.
    public var sleeps: [UInt64] { state.read { $0.sleeps } }

    /// Moves the clock `seconds` on and wakes the threads waiting for it.
    public func advance(by seconds: Double) {
        advance(to: now + Self.nanoseconds(seconds))
    }

    /// Records the wait and moves the clock to `deadline`.
    public func sleep(until deadline: UInt64) {
        let now = self.now
        state.withLock { $0.sleeps.append(deadline > now ? deadline - now : 0) }
        advance(to: deadline)
    }

    /// Waits on `condition` until it is signalled or the clock is moved.
    public func wait(_ condition: NSCondition, until deadline: UInt64) {
        let key = ObjectIdentifier(condition)
        let (due, entered) = state.withLock { state in
            state.waiting[key, default: (condition, 0)].count += 1
            state.waiterMoves.append(state.moves)
            return (state.now >= deadline, state.moves)
        }
        // The caller holds `condition`, so an `advance` cannot broadcast before this waits.
        if !due { condition.wait() }
        state.withLock { state in
            if let index = state.waiterMoves.firstIndex(of: entered) { state.waiterMoves.remove(at: index) }
            let left = (state.waiting[key]?.count ?? 1) - 1
            state.waiting[key] = left > 0 ? (condition, left) : nil
        }
    }

    /// Blocks until a thread waits on the clock that began to wait since it was last moved: the
    /// thread woken by the last move (the writer, say) has done what it does and is idle again.
    public func waitForWaiter() {
        state.withLock(when: { $0.waiterMoves.contains($0.moves) }) { _ in }
    }

    private func advance(to reading: UInt64) {
        let waiting = state.withLock { state in
            state.now = max(state.now, reading)
            state.moves += 1
            return state.waiting.values.map(\.condition)
        }
        for condition in waiting {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }
}
