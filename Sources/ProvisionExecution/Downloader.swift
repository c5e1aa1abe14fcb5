import Foundation
import ProvisionFoundation
import ProvisionModel

/// Downloads a work list through a `Fetcher` and hands verified items to a sink in batches
/// on a separate writer thread.
///
/// Why a writer thread with a bounded queue: the store commits one transaction per batch, which
/// is slow next to the network loop; batching amortises it, the separate thread lets downloads
/// continue during a commit, and the bound on queued batches makes the network loop wait when
/// the writer falls behind, so memory never grows with the number of tiles.
public final class Downloader {
    /// Batching and queueing limits.
    public struct Configuration: Sendable {
        /// A batch is handed over when it holds this many items…
        public var batchItems: Int
        /// …or this many payload bytes, whichever comes first.
        public var batchBytes: Int
        /// Batches that may wait for the writer before the network loop blocks.
        public var queueCapacity: Int
        /// How many failures `DownloadStats.failures` keeps.
        public var maxRecordedFailures: Int
        /// Whether a fatal failure (HTTP 401/403) stops pulling requests (`DownloadStats.stoppedBy`).
        public var stopOnFatal: Bool
        /// The flush window, in seconds: the longest a finished download waits in memory before it is
        /// committed. The writer, idle this long, commits whatever has arrived (and the apply's
        /// assembler spills what waits this long), so a kill loses little finished work, and what
        /// was committed is never fetched again. At 0 every result is handed to the writer as soon
        /// as the queue has room, and the assembler spills at once.
        public var flushWindow: Double
        /// Where the writer reads the time (its idle flush, the assembler's spill window).
        public var clock: any MonotonicClock

        /// Creates limits; the defaults suit the offline database writer.
        public init(batchItems: Int = 256, batchBytes: Int = 2 << 20, queueCapacity: Int = 4,
                    maxRecordedFailures: Int = 100, stopOnFatal: Bool = true, flushWindow: Double = 0.1,
                    clock: any MonotonicClock = SystemClock()) {
            self.batchItems = max(1, batchItems)
            self.batchBytes = max(1, batchBytes)
            self.queueCapacity = max(1, queueCapacity)
            self.maxRecordedFailures = max(0, maxRecordedFailures)
            self.stopOnFatal = stopOnFatal
            self.flushWindow = flushWindow.isFinite ? max(0, flushWindow) : 0.1
            self.clock = clock
        }
    }

    private let fetcher: Fetcher
    private let configuration: Configuration
    private let sink: @Sendable ([FetchedItem]) throws -> Void

    /// Called on the downloading thread after every result.
    public var onProgress: ((DownloadProgress) -> Void)?
    /// Called on the downloading thread for every request that failed after its retries.
    public var onFailure: ((FetchRequest, FetchFailure) -> Void)?

    /// Creates a downloader; `sink` runs on the writer thread, one batch at a time, in order, and
    /// also with an empty batch each time the writer has been idle for `flushWindow`.
    public init(fetcher: Fetcher, configuration: Configuration = Configuration(),
                sink: @escaping @Sendable ([FetchedItem]) throws -> Void) {
        self.fetcher = fetcher
        self.configuration = configuration
        self.sink = sink
    }

    /// Downloads every request of a sequence.
    public func run<S: Sequence>(_ requests: S) throws -> DownloadStats where S.Element == FetchRequest {
        var iterator = requests.makeIterator()
        return try run(&iterator)
    }

    /// Downloads every request the iterator yields; rethrows the sink's first error, after which
    /// no further request is started and no further batch is written. After a fatal failure
    /// (HTTP 401/403) no further request is pulled: what was already pulled finishes, and the
    /// statistics name the failure in `stoppedBy`. URLs in the statistics are redacted.
    public func run<I: IteratorProtocol>(_ requests: inout I) throws -> DownloadStats where I.Element == FetchRequest {
        let started = configuration.clock.now
        let retriesBefore = (fetcher as? RetryCounting)?.retryCount ?? 0
        let queue = BoundedQueue<[FetchedItem]>(capacity: configuration.queueCapacity)
        let pending = Mutex(PendingBatch())
        let writer = Writer(queue: queue, pending: pending, configuration: configuration, sink: sink)
        writer.start()

        var stats = DownloadStats()
        let pulled = PullCounter()
        var stoppable = StoppingIterator(base: requests, queue: queue, pulled: pulled)
        let configuration = self.configuration

        fetcher.fetchAll(&stoppable) { request, result in
            switch result {
            case .success(let body):
                stats.succeeded += 1
                if body.isMissing { stats.missingTiles += 1 }
                stats.bytes += Int64(body.data.count)
                let item = FetchedItem(request: request, body: body)
                if let full = pending.withLock({ $0.append(item, items: configuration.batchItems,
                                                             bytes: configuration.batchBytes) }) {
                    queue.push(full)
                } else if configuration.flushWindow == 0, queue.hasRoom, let partial = pending.withLock({ $0.take() }) {
                    queue.push(partial)  // only this thread pushes: there is still room
                }
            case .failure(let failure):
                // The fetcher redacted the job's secrets (`Fetcher`); this hides what any URL's look like.
                let failure = URLSecrets().redacted(failure)
                let record = DownloadStats.Failure(url: URLSecrets().redact(request.url), kind: request.kind,
                                                   failure: failure)
                stats.failed += 1
                stats.failureCounts[DownloadStats.reason(of: failure), default: 0] += 1
                if stats.failures.count < configuration.maxRecordedFailures {
                    stats.failures.append(record)
                }
                if failure.isFatal, configuration.stopOnFatal, stats.stoppedBy == nil {
                    stats.stoppedBy = record
                    pulled.stopped = true
                }
                onFailure?(request, failure)
            }
            stats.requested = pulled.count
            onProgress?(DownloadProgress(requested: pulled.count, completed: stats.succeeded + stats.failed,
                                         succeeded: stats.succeeded, failed: stats.failed, bytes: stats.bytes))
        }
        requests = stoppable.base
        if let rest = pending.withLock({ $0.take() }) { queue.push(rest) }
        queue.finish()
        writer.wait()
        if let error = writer.failure.withLock({ $0 }) { throw error }

        stats.requested = pulled.count
        stats.retries = ((fetcher as? RetryCounting)?.retryCount ?? 0) - retriesBefore
        stats.duration = Double(configuration.clock.now &- started) / 1e9
        stats.peakQueuedBatches = queue.peak
        return stats
    }
}

/// Passes requests through until the writer has failed (the queue is cancelled), counting them.
private struct StoppingIterator<Base: IteratorProtocol>: IteratorProtocol where Base.Element == FetchRequest {
    var base: Base
    let queue: BoundedQueue<[FetchedItem]>
    let pulled: PullCounter

    mutating func next() -> FetchRequest? {
        guard !pulled.stopped, !queue.isCancelled, let request = base.next() else { return nil }
        pulled.count += 1
        return request
    }
}

/// How many requests were pulled, readable while the iterator is borrowed by the fetcher, and
/// whether pulling must stop (after a fatal failure).
private final class PullCounter {
    var count = 0
    var stopped = false
}

/// The batch being filled by the downloading thread. The writer takes it when it has waited
/// the flush window with nothing else to write, so a finished download is committed within that
/// time even when no further result arrives (a kill then loses at most that much finished work).
private struct PendingBatch {
    private var items: [FetchedItem] = []
    private var bytes = 0

    /// Adds an item; returns the batch when it reached `items` items or `bytes` payload bytes.
    mutating func append(_ item: FetchedItem, items limit: Int, bytes byteLimit: Int) -> [FetchedItem]? {
        items.append(item)
        bytes += item.body.data.count
        guard items.count >= limit || bytes >= byteLimit else { return nil }
        return take()
    }

    /// The items gathered so far, if any, leaving the batch empty.
    mutating func take() -> [FetchedItem]? {
        guard !items.isEmpty else { return nil }
        let batch = items
        items = []
        bytes = 0
        return batch
    }
}

/// The writer thread: pops batches and hands them to the sink until the queue is drained or the
/// sink throws; when idle for the flush window it hands over the partial batch, or an empty one.
private final class Writer: Sendable {
    private let queue: BoundedQueue<[FetchedItem]>
    private let pending: Mutex<PendingBatch>
    private let window: UInt64
    private let clock: any MonotonicClock
    private let sink: @Sendable ([FetchedItem]) throws -> Void
    private let done = DispatchSemaphore(value: 0)
    /// The sink's error; read after `wait()`.
    let failure = Mutex<(any Error)?>(nil)

    init(queue: BoundedQueue<[FetchedItem]>, pending: Mutex<PendingBatch>, configuration: Downloader.Configuration,
         sink: @escaping @Sendable ([FetchedItem]) throws -> Void) {
        self.queue = queue
        self.pending = pending
        self.window = SystemClock.nanoseconds(configuration.flushWindow)
        self.clock = configuration.clock
        self.sink = sink
    }

    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            while true {
                let batch: [FetchedItem]
                switch queue.pop(until: window == 0 ? 0 : clock.now + window, clock: clock) {
                case .element(let next): batch = next
                case .timedOut:
                    // Idle: the partial batch, or nothing (the sink may have work of its own to commit).
                    if let partial = pending.withLock({ $0.take() }) {
                        batch = partial
                    } else if window > 0 {
                        batch = []
                    } else {
                        // At a zero window the downloading thread pushes each result while the
                        // queue has room, and what it kept back was just taken: wait for more.
                        guard let next = queue.pop() else { return }
                        batch = next
                    }
                case .closed: return
                }
                do {
                    try sink(batch)
                } catch {
                    failure.withLock { $0 = error }
                    queue.cancel()
                    return
                }
            }
        }
        thread.name = "provision.writer"
        thread.start()
    }

    func wait() {
        done.wait()
    }
}
