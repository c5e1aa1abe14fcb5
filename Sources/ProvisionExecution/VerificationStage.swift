import Foundation
import ProvisionFoundation
import ProvisionModel

/// Checks response bodies on a thread of its own, beside the transfer loop.
///
/// Why: checking a vector tile reads every field of it, which costs as much CPU as receiving it
/// over TLS. Done on the loop's thread, each burst of finished transfers held every connection
/// unread while it was checked; here the loop hands the burst over and goes straight back to
/// libcurl, and picks the verdicts up on a later turn. `wake` (the multi handle's
/// `curl_multi_wakeup`) interrupts the loop's poll when a verdict is ready and the loop has not
/// been told yet. The loop bounds how many bodies wait here, so memory stays bounded whichever
/// side is slower. Jobs and verdicts have a lock each, so that the loop collecting verdicts
/// never wakes the stage's thread waiting for jobs, nor the other way round.
final class VerificationStage: Sendable {
    /// One body to check, with what its result needs: the raw cache headers are parsed here too.
    struct Job: Sendable {
        var pending: FetchLoop.Pending
        var data: Data
        var headers: CurlTransfer.CacheHeaders
        var contentType: String?
    }

    /// A checked body: the body to deliver with its cache fields, or why it was refused.
    struct Verdict: Sendable {
        var pending: FetchLoop.Pending
        var result: Result<FetchedBody, FetchFailure>
    }

    private struct Jobs {
        var queued: [Job] = []
        var closed = false
        var running = false
    }

    private let verifier: Verifier
    private let wake: @Sendable () -> Void
    private let jobs = Mutex(Jobs())
    private let verdicts = Mutex([Verdict]())
    private let finished = DispatchSemaphore(value: 0)

    /// Creates a stage checking with `verifier`; `wake` is called, from the stage's thread, when
    /// the first verdict since the last `takeVerdicts` is ready.
    init(verifier: Verifier, wake: @escaping @Sendable () -> Void) {
        self.verifier = verifier
        self.wake = wake
    }

    /// Queues bodies, oldest first; starts the thread on first use.
    func submit(_ batch: [Job]) {
        guard !batch.isEmpty else { return }
        let start = jobs.withLock { jobs -> Bool in
            jobs.queued.append(contentsOf: batch)
            defer { jobs.running = true }
            return !jobs.running
        }
        if start { startThread() }
    }

    /// The verdicts ready now, oldest first, without waiting.
    func takeVerdicts() -> [Verdict] {
        guard verdicts.read({ !$0.isEmpty }) else { return [] }
        return verdicts.withLock { verdicts in
            let ready = verdicts
            verdicts = []
            return ready
        }
    }

    /// The verdicts ready, waiting until there is at least one.
    func waitForVerdicts() -> [Verdict] {
        verdicts.withLock(when: { !$0.isEmpty }) { verdicts in
            let ready = verdicts
            verdicts = []
            return ready
        }
    }

    /// Stops the thread after the queued bodies are checked, and waits for it.
    func close() {
        let running = jobs.withLock { jobs -> Bool in
            jobs.closed = true
            return jobs.running
        }
        if running { finished.wait() }
    }

    private func startThread() {
        let thread = Thread { [self] in
            defer { finished.signal() }
            var dates = HTTPCacheFields.RecentDates()
            while let batch = nextJobs() {
                for job in batch {
                    let verdict = Verdict(pending: job.pending, result: check(job, dates: &dates))
                    let first = verdicts.withLock { verdicts -> Bool in
                        verdicts.append(verdict)
                        return verdicts.count == 1
                    }
                    if first { wake() }
                }
            }
        }
        thread.name = "provision.verify"
        thread.start()
    }

    /// Every body queued, oldest first, waiting for one; nil once closed and drained.
    private func nextJobs() -> [Job]? {
        jobs.withLock(when: { !$0.queued.isEmpty || $0.closed }) { jobs -> [Job]? in
            guard !jobs.queued.isEmpty else { return nil }
            let batch = jobs.queued
            jobs.queued = []
            return batch
        }
    }

    private func check(_ job: Job, dates: inout HTTPCacheFields.RecentDates) -> Result<FetchedBody, FetchFailure> {
        let verified = verifier.verifiedBody(job.data, kind: job.pending.request.kind, contentType: job.contentType,
                                             url: job.pending.request.url)
        guard case .success(var body) = verified else { return verified }
        let fields = job.headers.fields(dates: &dates)
        (body.etag, body.modified, body.expires) = (fields.etag, fields.modified, fields.expires)
        body.revalidation = fields.revalidation
        return .success(body)
    }
}
