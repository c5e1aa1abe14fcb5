import Foundation
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
        /// …and the writer, idle this long (seconds), commits whatever has arrived, so a finished
        /// download waits at most about this long to be committed: a kill loses little finished work,
        /// and what was committed is never fetched again.
        public var batchSeconds: Double

        /// Creates limits; the defaults suit the offline database writer.
        public init(batchItems: Int = 256, batchBytes: Int = 2 << 20, queueCapacity: Int = 4,
                    maxRecordedFailures: Int = 100, stopOnFatal: Bool = true, batchSeconds: Double = 0.1) {
            self.batchItems = max(1, batchItems)
            self.batchBytes = max(1, batchBytes)
            self.queueCapacity = max(1, queueCapacity)
            self.maxRecordedFailures = max(0, maxRecordedFailures)
            self.stopOnFatal = stopOnFatal
            self.batchSeconds = max(0, batchSeconds)
        }
    }

    private let fetcher: Fetcher
    private let configuration: Configuration
    private let sink: ([FetchedItem]) throws -> Void

    /// Called on the downloading thread after every result.
    public var onProgress: ((DownloadProgress) -> Void)?
    /// Called on the downloading thread for every request that failed after its retries.
    public var onFailure: ((FetchRequest, FetchFailure) -> Void)?

    /// Creates a downloader; `sink` runs on the writer thread, one batch at a time, in order, and
    /// also with an empty batch each time the writer has been idle for `batchSeconds`.
    public init(fetcher: Fetcher, configuration: Configuration = Configuration(),
                sink: @escaping ([FetchedItem]) throws -> Void) {
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
        let started = DispatchTime.now().uptimeNanoseconds
        let retriesBefore = (fetcher as? RetryCounting)?.retryCount ?? 0
        let queue = BoundedQueue<[FetchedItem]>(capacity: configuration.queueCapacity)
        let pending = PendingBatch()
        let writer = Writer(queue: queue, pending: pending, idleSeconds: configuration.batchSeconds, sink: sink)
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
                if let full = pending.append(FetchedItem(request: request, body: body), items: configuration.batchItems,
                                             bytes: configuration.batchBytes) {
                    queue.push(full)
                }
            case .failure(let failure):
                let failure = failure.redacted
                let record = DownloadStats.Failure(url: URLRedaction.redact(request.url), kind: request.kind,
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
        if let rest = pending.take() { queue.push(rest) }
        queue.finish()
        writer.wait()
        if let error = writer.error { throw error }

        stats.requested = pulled.count
        stats.retries = ((fetcher as? RetryCounting)?.retryCount ?? 0) - retriesBefore
        stats.duration = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
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
/// `idleSeconds` with nothing else to write, so a finished download is committed within that time
/// even when no further result arrives (a kill then loses at most that much finished work).
private final class PendingBatch: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [FetchedItem] = []
    private var bytes = 0

    /// Adds an item; returns the batch when it reached `items` items or `bytes` payload bytes.
    func append(_ item: FetchedItem, items limit: Int, bytes byteLimit: Int) -> [FetchedItem]? {
        lock.lock()
        defer { lock.unlock() }
        items.append(item)
        bytes += item.body.data.count
        guard items.count >= limit || bytes >= byteLimit else { return nil }
        return takeLocked()
    }

    /// The items gathered so far, if any, leaving the batch empty.
    func take() -> [FetchedItem]? {
        lock.lock()
        defer { lock.unlock() }
        return takeLocked()
    }

    private func takeLocked() -> [FetchedItem]? {
        guard !items.isEmpty else { return nil }
        let batch = items
        items = []
        bytes = 0
        return batch
    }
}

/// The writer thread: pops batches and hands them to the sink until the queue is drained or the
/// sink throws; when idle it hands over the partial batch, or an empty one.
private final class Writer: @unchecked Sendable {
    private let queue: BoundedQueue<[FetchedItem]>
    private let pending: PendingBatch
    private let idleSeconds: Double
    private let sink: ([FetchedItem]) throws -> Void
    private let done = DispatchSemaphore(value: 0)
    /// The sink's error; read only after `wait()`.
    private(set) var error: Error?

    init(queue: BoundedQueue<[FetchedItem]>, pending: PendingBatch, idleSeconds: Double,
         sink: @escaping ([FetchedItem]) throws -> Void) {
        self.queue = queue
        self.pending = pending
        self.idleSeconds = idleSeconds
        self.sink = sink
    }

    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            while true {
                let batch: [FetchedItem]
                switch queue.pop(waitingAtMost: idleSeconds) {
                case .element(let next): batch = next
                case .timedOut:
                    // Idle: the partial batch, or nothing (the sink may have work of its own to commit).
                    batch = pending.take() ?? []
                case .closed: return
                }
                do {
                    try sink(batch)
                } catch {
                    self.error = error
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
