import Foundation

/// A blocking FIFO of at most `capacity` elements between one producer and one consumer thread.
final class BoundedQueue<Element> {
    private let condition = NSCondition()
    private var elements: [Element] = []
    private var finished = false
    private var cancelled = false
    let capacity: Int
    /// The most elements the queue ever held.
    private(set) var peakCount = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `element`, blocking while the queue is full; false (element dropped) once cancelled.
    @discardableResult
    func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while elements.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled, !finished else { return false }
        elements.append(element)
        peakCount = max(peakCount, elements.count)
        condition.broadcast()
        return true
    }

    /// Removes the oldest element, blocking while empty; nil once finished and drained, or cancelled.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while elements.isEmpty && !finished && !cancelled { condition.wait() }
        guard !cancelled, !elements.isEmpty else { return nil }
        let element = elements.removeFirst()
        condition.broadcast()
        return element
    }

    /// What `pop(waitingAtMost:)` found.
    enum Popped {
        case element(Element)
        /// Nothing arrived in time; the queue is still open.
        case timedOut
        /// Finished and drained, or cancelled.
        case closed
    }

    /// Removes the oldest element, waiting at most `seconds` for one (forever when `seconds` is 0).
    func pop(waitingAtMost seconds: Double) -> Popped {
        guard seconds > 0 else { return pop().map { .element($0) } ?? .closed }
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while elements.isEmpty && !finished && !cancelled {
            if !condition.wait(until: deadline) { break }
        }
        if cancelled { return .closed }
        if elements.isEmpty { return finished ? .closed : .timedOut }
        let element = elements.removeFirst()
        condition.broadcast()
        return .element(element)
    }

    /// No more elements will be pushed; the consumer drains what is left.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Drops what is queued and wakes everyone: pushes fail and pops return nil from now on.
    func cancel() {
        condition.lock()
        cancelled = true
        elements.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// The peak element count, read under the lock.
    var peak: Int {
        condition.lock()
        defer { condition.unlock() }
        return peakCount
    }
}
