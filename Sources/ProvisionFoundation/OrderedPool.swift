import Foundation

/// Applies a function to inputs on worker threads, in batches, and hands the outputs back on the
/// calling thread in the order the inputs came.
///
/// Why: bodies from local origins (MBTiles archives, directories) are read faster than one core
/// can verify them (inflate, check every vector tile field, rewrap as zlib), and the store writer
/// needs a core of its own; verifying on the other cores keeps both busy. An export likewise
/// reads and writes rows on one thread and makes each archive tile (inflate, hash, rewrap) on
/// the others. Why in order: results then reach the downloader exactly as they would one at a
/// time (the same failures recorded first, tiles nearly in key order for the next file), only
/// sooner. Why batches: a hand-over costs a lock and a wake-up, which a few dozen tiles share.
///
/// The caller's side (`add`, `deliverReady`, `drain`) is used by one thread; at most `capacity`
/// batches are in the pool at once, so memory stays bounded: `add` delivers the oldest batch
/// (waiting for it) when the pool is full.
public final class OrderedPool<Input: Sendable, Output: Sendable> {
    /// The state the workers share with the caller.
    private struct State: Sendable {
        /// Batches waiting for a worker, oldest first, with their sequence numbers.
        var queued: [(sequence: Int, inputs: [Input])] = []
        var queuedHead = 0
        /// Finished batches by sequence number.
        var done: [Int: [Output]] = [:]
        var closed = false
    }

    private let shared = Mutex(State())
    private let transform: @Sendable (Input) -> Output
    private let workerCount: Int
    private let batchSize: Int
    private let capacity: Int
    private let name: String
    private var workers: [Thread] = []
    private let stopped = DispatchGroup()
    /// The batch being filled.
    private var pending: [Input] = []
    /// Sequence numbers of the next batch to submit and of the next to deliver.
    private var submitted = 0
    private var delivered = 0

    /// A pool of `workers` threads named `name.N` (started on the first batch) applying
    /// `transform`, taking `batchSize` inputs at a time, holding at most `capacity` batches.
    public init(workers: Int, batchSize: Int = 32, capacity: Int? = nil, name: String = "provision.verify",
                transform: @escaping @Sendable (Input) -> Output) {
        self.name = name
        workerCount = max(1, workers)
        self.batchSize = max(1, batchSize)
        self.capacity = max(2, capacity ?? 4 * max(1, workers))
        self.transform = transform
    }

    deinit {
        close()
    }

    /// Whether no input is waiting or being worked on.
    public var isIdle: Bool { pending.isEmpty && submitted == delivered }

    /// Adds an input; when its batch is full it goes to the workers, and when the pool is full
    /// the oldest batch is delivered first (waiting for it).
    public func add(_ input: Input, deliver: (Output) -> Void) {
        pending.append(input)
        guard pending.count >= batchSize else { return }
        while submitted - delivered >= capacity { deliverNext(waiting: true, deliver) }
        submit()
    }

    /// Delivers the finished batches at the head of the order, without waiting.
    public func deliverReady(_ deliver: (Output) -> Void) {
        while delivered < submitted, deliverNext(waiting: false, deliver) {}
    }

    /// Submits what is pending and delivers everything, waiting for the workers.
    public func drain(_ deliver: (Output) -> Void) {
        if !pending.isEmpty { submit() }
        while delivered < submitted { deliverNext(waiting: true, deliver) }
    }

    /// Stops the workers (after the batches they hold) and waits for them to end.
    public func close() {
        guard !workers.isEmpty else { return }
        shared.withLock { $0.closed = true }
        stopped.wait()
        workers = []
    }

    private func submit() {
        if workers.isEmpty { startWorkers() }
        let batch = (sequence: submitted, inputs: pending)
        pending = []
        pending.reserveCapacity(batchSize)
        submitted += 1
        shared.withLock { $0.queued.append(batch) }
    }

    /// Delivers the next batch in order if it is done (or, `waiting`, once it is); false when
    /// it was not done and `waiting` is false.
    @discardableResult
    private func deliverNext(waiting: Bool, _ deliver: (Output) -> Void) -> Bool {
        let sequence = delivered
        let outputs: [Output]?
        if waiting {
            outputs = shared.withLock(when: { $0.done[sequence] != nil }) { $0.done.removeValue(forKey: sequence) }
        } else {
            outputs = shared.withLock { $0.done.removeValue(forKey: sequence) }
        }
        guard let outputs else { return false }
        delivered += 1
        for output in outputs { deliver(output) }
        return true
    }

    private func startWorkers() {
        let shared = self.shared, transform = self.transform, stopped = self.stopped, name = self.name
        for index in 0..<workerCount {
            stopped.enter()
            let thread = Thread {
                defer { stopped.leave() }
                while true {
                    let next: (sequence: Int, inputs: [Input])? = shared.withLock(when: {
                        $0.queuedHead < $0.queued.count || $0.closed
                    }) { state in
                        guard state.queuedHead < state.queued.count else { return nil }
                        let batch = state.queued[state.queuedHead]
                        state.queuedHead += 1
                        if state.queuedHead == state.queued.count {
                            state.queued.removeAll(keepingCapacity: true)
                            state.queuedHead = 0
                        }
                        return batch
                    }
                    guard let next else { return }
                    let outputs = next.inputs.map(transform)
                    shared.withLock { $0.done[next.sequence] = outputs }
                }
            }
            thread.name = "\(name).\(index)"
            thread.start()
            workers.append(thread)
        }
    }
}
