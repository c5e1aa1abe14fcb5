import Dispatch
import Foundation

/// Transforms items on every core, a batch at a time, and hands the results to `consume` in the
/// order the items came, on the caller's thread, while the caller goes on adding items: batch k is
/// transformed while the results of batch k - 1 are consumed and batch k + 1 is read.
///
/// Why: an export reads rows and writes an archive in order on one thread (SQLite's), and between
/// the two each tile is inflated, hashed and rewrapped. That middle step is most of the CPU and
/// depends on nothing but its row, so it spreads over the cores while the ordered reading and
/// writing stay on one thread and the output stays the same bytes.
///
/// At most two batches are held: the one being transformed and the one being gathered.
public final class ParallelBatches<Input: Sendable, Output: Sendable> {
    private let batchSize: Int
    private let workers: Int
    private let transform: @Sendable (Input) -> Output
    private let consume: (Output) throws -> Void
    private var gathering: [Input] = []
    private var inFlight: (group: DispatchGroup, results: Mutex<[[Output]]>, workers: Int)?

    /// Transforms added items with `transform` on `workers` threads (all cores by default), in
    /// batches of `batchSize`, and gives each result to `consume` in order.
    public init(batchSize: Int = 256, workers: Int = ProcessInfo.processInfo.activeProcessorCount,
                transform: @escaping @Sendable (Input) -> Output, consume: @escaping (Output) throws -> Void) {
        self.batchSize = max(batchSize, 1)
        self.workers = max(workers, 1)
        self.transform = transform
        self.consume = consume
        gathering.reserveCapacity(self.batchSize)
    }

    /// Adds one item; may consume the results of earlier ones.
    ///
    /// - Throws: what `consume` throws (the items after it are not consumed).
    public func add(_ item: Input) throws {
        gathering.append(item)
        if gathering.count >= batchSize { try dispatch() }
    }

    /// Consumes the results of every item added.
    ///
    /// - Throws: what `consume` throws.
    public func finish() throws {
        if !gathering.isEmpty { try dispatch() }
        try drain()
    }

    /// Starts the gathered batch, then consumes the one before it.
    private func dispatch() throws {
        let batch = gathering
        gathering = []
        gathering.reserveCapacity(batchSize)
        let workers = min(self.workers, batch.count)
        // Worker w transforms items w, w + workers, ...; its results go in slot w, in that order.
        let results = Mutex([[Output]](repeating: [], count: workers))
        let group = DispatchGroup()
        let transform = self.transform
        DispatchQueue.global(qos: .userInitiated).async(group: group) {
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let made = stride(from: worker, to: batch.count, by: workers).map { transform(batch[$0]) }
                results.withLock { $0[worker] = made }
            }
        }
        try drain()
        inFlight = (group, results, workers)
    }

    /// Waits for the batch in flight and consumes its results in the order of its items.
    private func drain() throws {
        guard let (group, results, workers) = inFlight else { return }
        inFlight = nil
        group.wait()
        let made = results.withLock { slots in
            let taken = slots
            slots = []
            return taken
        }
        let count = made.reduce(0) { $0 + $1.count }
        for index in 0..<count { try consume(made[index % workers][index / workers]) }
    }
}
