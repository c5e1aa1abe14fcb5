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
        /// …or when its first item has waited this long (seconds), so a kill loses at most about
        /// this much finished work: what was committed is never fetched again.
        public var batchSeconds: Double

        /// Creates limits; the defaults suit the offline database writer.
        public init(batchItems: Int = 256, batchBytes: Int = 8 << 20, queueCapacity: Int = 4,
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

    /// Creates a downloader; `sink` runs on the writer thread, one batch at a time, in order.
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
        let writer = Writer(queue: queue, sink: sink)
        writer.start()

        var stats = DownloadStats()
        var batch: [FetchedItem] = []
        var batchBytes = 0
        var batchStarted: UInt64 = 0
        let batchNanoseconds = UInt64(configuration.batchSeconds * 1e9)
        let pulled = PullCounter()
        var stoppable = StoppingIterator(base: requests, queue: queue, pulled: pulled)
        let configuration = self.configuration

        fetcher.fetchAll(&stoppable) { request, result in
            switch result {
            case .success(let body):
                stats.succeeded += 1
                if body.isMissing { stats.missingTiles += 1 }
                stats.bytes += Int64(body.data.count)
                let now = DispatchTime.now().uptimeNanoseconds
                if batch.isEmpty { batchStarted = now }
                batch.append(FetchedItem(request: request, body: body))
                batchBytes += body.data.count
                if batch.count >= configuration.batchItems || batchBytes >= configuration.batchBytes
                    || now - batchStarted >= batchNanoseconds {
                    queue.push(batch)
                    batch = []
                    batchBytes = 0
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
        if !batch.isEmpty { queue.push(batch) }
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

/// The writer thread: pops batches and hands them to the sink until the queue is drained or the sink throws.
private final class Writer: @unchecked Sendable {
    private let queue: BoundedQueue<[FetchedItem]>
    private let sink: ([FetchedItem]) throws -> Void
    private let done = DispatchSemaphore(value: 0)
    /// The sink's error; read only after `wait()`.
    private(set) var error: Error?

    init(queue: BoundedQueue<[FetchedItem]>, sink: @escaping ([FetchedItem]) throws -> Void) {
        self.queue = queue
        self.sink = sink
    }

    func start() {
        let thread = Thread { [self] in
            defer { done.signal() }
            while let batch = queue.pop() {
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
