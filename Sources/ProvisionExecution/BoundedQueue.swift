import Foundation
import ProvisionFoundation
import ProvisionModel

/// A blocking FIFO of at most `capacity` elements between one producer and one consumer thread.
final class BoundedQueue<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var finished = false
        var cancelled = false
        /// The most elements the queue ever held.
        var peakCount = 0
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `element`, blocking while the queue is full; false (element dropped) once cancelled.
    @discardableResult
    func push(_ element: Element) -> Bool {
        let capacity = self.capacity
        return state.withLock(when: { $0.elements.count < capacity || $0.cancelled }) { state in
            guard !state.cancelled, !state.finished else { return false }
            state.elements.append(element)
            state.peakCount = max(state.peakCount, state.elements.count)
            return true
        }
    }

    /// Whether a `push` now would not block (for the one producer, nothing else can fill it).
    var hasRoom: Bool {
        let capacity = self.capacity
        return state.read { $0.elements.count < capacity }
    }

    /// Removes the oldest element, blocking while empty; nil once finished and drained, or cancelled.
    func pop() -> Element? {
        state.withLock(when: { !$0.elements.isEmpty || $0.finished || $0.cancelled }) { state in
            guard !state.cancelled, !state.elements.isEmpty else { return nil }
            return state.elements.removeFirst()
        }
    }

    /// What `pop(until:clock:)` found.
    enum Popped {
        case element(Element)
        /// Nothing arrived in time; the queue is still open.
        case timedOut
        /// Finished and drained, or cancelled.
        case closed
    }

    /// Removes the oldest element, waiting for one until `clock` reaches `deadline`.
    func pop(until deadline: UInt64, clock: any MonotonicClock) -> Popped {
        state.withLock(when: { !$0.elements.isEmpty || $0.finished || $0.cancelled }, deadline: deadline, clock: clock) { state in
            if state.cancelled { return .closed }
            if state.elements.isEmpty { return state.finished ? .closed : .timedOut }
            return .element(state.elements.removeFirst())
        }
    }

    /// No more elements will be pushed; the consumer drains what is left.
    func finish() {
        state.withLock { $0.finished = true }
    }

    /// Drops what is queued and wakes everyone: pushes fail and pops return nil from now on.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.elements.removeAll()
        }
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool {
        state.read { $0.cancelled }
    }

    /// The peak element count.
    var peak: Int {
        state.read { $0.peakCount }
    }
}
