import CCurl
import Foundation
import ProvisionFoundation
import ProvisionModel

/// The state of one `HTTPFetcher.fetchAll` call: the scheduler in front of the fetcher's
/// transfer loops (`TransferLoop`), run on the calling thread.
///
/// A request is started only when a transfer slot is free, its host is under `perHost` and the
/// rate limiter has a token. A request whose host is full waits in `waiting` while requests to
/// other hosts are pulled and started, so a slow host never holds more than `perHost` slots.
/// Retries wait in the same list until their backoff delay has passed, and take a token like any
/// other start. `waiting` is bounded, so the work list is never materialised. A source may have
/// nothing to give for now (`TransportPull.later`: a tile waiting for its archive directory);
/// it is asked again once an answer has been handled.
///
/// The transfers move on the fetcher's transfer loops, each a libcurl multi handle: the first is
/// driven here, on the calling thread, the others on threads of their own. A started request
/// goes to the loop with the fewest in flight, except that every transfer to a host not known to
/// answer over HTTP/1.x goes to one loop, so that an HTTP/2 host gets one connection (RFC 9113
/// §9.1) carrying every stream. The threaded loops send finished transfers back through a
/// `TransferMailbox`, which wakes this thread's poll. Bodies are checked on the
/// `VerificationStage`'s thread while the loops go on reading. No transfer starts while the
/// bodies in flight and those awaiting their check number twice `concurrency`, so that many
/// bodies at most are held in memory at once.
struct FetchLoop {
    /// A pulled request that is not in flight: a new one whose host is full, or a retry.
    struct Pending: Sendable {
        /// The request with its transport URL (and range), computed once per request.
        var transport: TransportRequest
        var host: String
        var attempt: Int
        /// Monotonic nanoseconds before which it may not start.
        var due: UInt64

        var request: FetchRequest { transport.request }
    }

    let fetcher: HTTPFetcher
    let onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
    private let configuration: HTTPFetcher.Configuration
    private var waiting: [Pending] = []
    private var hostActive: [String: Int] = [:]
    private var limiter: RateLimiter?
    private var exhausted = false
    /// Whether the source answered `.later` since the last answers were handled.
    private var deferred = false
    /// Why the run stopped early (a fatal failure), once it has.
    private var stopReason: String?
    private let waitingCap: Int
    private let clock: any MonotonicClock
    /// Checks bodies beside the loop; `verifying` of them have no verdict yet.
    private let verification: VerificationStage
    private var verifying = 0
    /// The transfer loops this run uses, what each has in flight, and what it is yet to be handed.
    private let loops: [TransferLoop]
    private var inFlight: [Int]
    private var inFlightTotal = 0
    private var starts: [[Pending]]
    /// The loop of each host that has not answered over HTTP/1.x (yet): its transfers stay there.
    private var pinned: [String: Int] = [:]
    /// Hosts that answered over HTTP/1.x: their transfers go to the loop with the fewest in
    /// flight among those under their share of the host's connections.
    private var spread: Set<String> = []
    /// Each host's transfers in flight on each loop, and a host's count before its first.
    private var hostOnLoop: [String: [Int]] = [:]
    private let noneOnLoop: [Int]
    /// Where the threaded loops leave finished transfers.
    private let mailbox: TransferMailbox

    init(fetcher: HTTPFetcher, onResult: @escaping (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void) {
        self.fetcher = fetcher
        self.onResult = onResult
        self.configuration = fetcher.configuration
        self.limiter = configuration.requestsPerSecond.map { RateLimiter(rate: $0) }
        self.waitingCap = max(64, 4 * configuration.concurrency)
        self.clock = configuration.clock
        self.loops = Array(fetcher.loops.prefix(configuration.concurrency))
        self.inFlight = Array(repeating: 0, count: loops.count)
        self.starts = Array(repeating: [], count: loops.count)
        self.noneOnLoop = Array(repeating: 0, count: loops.count)
        // curl_multi_wakeup may be called from any thread; the stage and the threaded loops are
        // closed before the multi handle can go away (`run` closes them on return).
        nonisolated(unsafe) let multi = loops[0].multi
        self.mailbox = TransferMailbox { curl_multi_wakeup(multi) }
        self.verification = VerificationStage(verifier: fetcher.verifier) { curl_multi_wakeup(multi) }
    }

    mutating func run<S: TransportSource>(_ requests: inout S) {
        let local = loops[0]
        let threaded = loops.dropFirst()
        let mailbox = self.mailbox
        let threads = threaded.map { $0.start(posting: mailbox) }
        defer {
            verification.close()
            for (loop, stopped) in zip(threaded, threads) { loop.close(stopped) }
        }
        var finished: [TransferLoop.Finished] = []
        while true {
            deliver(verification.takeVerdicts())
            // Transfers finish in bursts (streams of one connection, or connections started
            // together, stay in step): the burst's bodies go to the verification thread at once,
            // and the freed slots are refilled and the new requests sent straight away, so the
            // server has work while the bodies are checked.
            receive(finished + mailbox.take())
            finished = []
            let now = clock.now
            startWaiting(now: now)
            pull(&requests, now: now)
            if stopReason != nil { abandonWaiting() }
            handOver(failures: &finished)
            if inFlightTotal == 0 {
                if verifying > 0 {
                    deliver(verification.waitForVerdicts())
                    continue
                }
                // A source that has nothing now, with nothing in flight, being checked or waiting
                // that could bring more, has nothing ever (every answer was handled before this pull).
                if waiting.isEmpty && (exhausted || stopReason != nil || deferred) { return }
                idle(now: now)
                continue
            }
            local.perform(into: &finished)
            if finished.isEmpty {
                local.poll(milliseconds: pollTimeout(now: clock.now))
                local.perform(into: &finished)
            }
        }
    }

    /// Frees the slots of finished transfers, reports their answers (or schedules retries) and
    /// sends their bodies to be checked.
    private mutating func receive(_ finished: [TransferLoop.Finished]) {
        guard !finished.isEmpty else { return }
        var bodies: [VerificationStage.Job] = []
        for transfer in finished {
            inFlight[transfer.loop] -= 1
            inFlightTotal -= 1
            hostActive[transfer.pending.host, default: 1] -= 1
            hostOnLoop[transfer.pending.host]?[transfer.loop] -= 1
            if transfer.multiplexed == false, spread.insert(transfer.pending.host).inserted {
                pinned[transfer.pending.host] = nil
            }
            if let job = handle(transfer.pending, transfer.outcome) { bodies.append(job) }
        }
        verifying += bodies.count
        verification.submit(bodies)
        // An answer may have brought the source more (a directory its tiles waited for).
        deferred = false
    }

    // MARK: - Scheduling

    private func hasHostRoom(_ host: String) -> Bool {
        hostActive[host, default: 0] < configuration.perHost
    }

    /// Whether a transfer may start: a slot is free, and the bodies held (in flight or awaiting
    /// their check) are fewer than twice `concurrency`.
    private var hasSlot: Bool {
        inFlightTotal < configuration.concurrency && inFlightTotal + verifying < 2 * configuration.concurrency
    }

    /// Starts waiting requests that are due and whose host has room, oldest first.
    private mutating func startWaiting(now: UInt64) {
        var index = 0
        while index < waiting.count, hasSlot {
            let pending = waiting[index]
            guard pending.due <= now, hasHostRoom(pending.host) else {
                index += 1
                continue
            }
            if limiter?.take(now: now) == false { return }
            waiting.remove(at: index)
            start(pending)
        }
    }

    /// Pulls new requests while a slot and a token are free; parks those whose host is full.
    private mutating func pull<S: TransportSource>(_ requests: inout S, now: UInt64) {
        while stopReason == nil, !exhausted, hasSlot, waiting.count < waitingCap {
            if limiter?.isAvailable(now: now) == false { return }
            let transport: TransportRequest
            switch requests.pull() {
            case .request(let next):
                transport = next
                deferred = false
            case .later:
                deferred = true
                return
            case .done:
                exhausted = true
                return
            }
            let pending = Pending(transport: transport, host: HTTPFetcher.hostKey(transport.url), attempt: 1, due: 0)
            if hasHostRoom(pending.host) {
                _ = limiter?.take(now: now)
                start(pending)
            } else {
                waiting.append(pending)
            }
        }
    }

    /// Nothing is in flight: sleeps until the earliest retry is due or a token is available.
    private mutating func idle(now: UInt64) {
        if let due = waiting.map(\.due).min(), due > now {
            clock.sleep(until: due)
            return
        }
        if let wait = limiter?.wait(now: now), wait > 0 {
            clock.sleep(until: now + wait)
        }
    }

    /// How long the loop may wait for a transfer: at most 1 s, and no later than the next retry or token.
    /// Requests already due but held by their host's cap wait for a transfer to finish, which
    /// wakes the poll anyway.
    private mutating func pollTimeout(now: UInt64) -> Int32 {
        var timeout: UInt64 = 1000
        if let due = waiting.lazy.map(\.due).filter({ $0 > now }).min() {
            timeout = min(timeout, (due - now) / 1_000_000)
        }
        if stopReason == nil, !waiting.isEmpty || !exhausted, let wait = limiter?.wait(now: now), wait > 0 {
            timeout = min(timeout, wait / 1_000_000)
        }
        return Int32(clamping: max(1, timeout))
    }

    /// Reports every waiting request as abandoned (after a fatal failure).
    private mutating func abandonWaiting() {
        guard let stopReason, !waiting.isEmpty else { return }
        let abandoned = waiting
        waiting.removeAll()
        for pending in abandoned { onResult(pending.request, .failure(.abandoned(stopReason))) }
    }

    // MARK: - Transfers

    /// Counts a transfer in flight and queues it for its loop: the host's own while it is not
    /// known to answer over HTTP/1.x, else the one with the fewest in flight of those under their
    /// share of the host (one always is: the host has fewer than `perHost` in flight, the sum of
    /// the shares).
    private mutating func start(_ pending: Pending) {
        let host = pending.host
        let none = noneOnLoop  // shared storage, not a new array: the start of every transfer comes here
        var target = 0
        if let loop = pinned[host] {
            target = loop
        } else if spread.contains(host) {
            let onLoop = hostOnLoop[host, default: none]
            var best: Int?
            for index in loops.indices where onLoop[index] < loops[index].hostConnections {
                if best.map({ inFlight[index] < inFlight[$0] }) ?? true { best = index }
            }
            target = best ?? 0
        } else {
            for index in inFlight.indices where inFlight[index] < inFlight[target] { target = index }
            pinned[host] = target
        }
        hostOnLoop[host, default: none][target] += 1
        inFlight[target] += 1
        inFlightTotal += 1
        hostActive[host, default: 0] += 1
        starts[target].append(pending)
    }

    /// Hands the transfers started this turn to their loops: the first loop's are added to its
    /// multi handle here (those that cannot start join `failures`), the others' go over with one
    /// wake-up per loop.
    private mutating func handOver(failures: inout [TransferLoop.Finished]) {
        for pending in starts[0] { loops[0].begin(pending, failures: &failures) }
        starts[0].removeAll(keepingCapacity: true)
        for index in starts.indices.dropFirst() where !starts[index].isEmpty {
            loops[index].submit(starts[index])
            starts[index].removeAll(keepingCapacity: true)
        }
    }

    /// Reports an answer (or schedules a retry); a body to check is returned instead. Raw bodies
    /// (archive directories) are reported at once: the source may be waiting for them.
    private mutating func handle(_ pending: Pending, _ outcome: CurlTransfer.Outcome) -> VerificationStage.Job? {
        let kind = pending.request.kind
        switch outcome {
        case .body(let data, _, _) where pending.transport.isRaw:
            finish(pending, .success(FetchedBody(data: data)), retryAfter: nil)
        case .body(let data, let headers, let contentType):
            return VerificationStage.Job(pending: pending, data: data, headers: headers, contentType: contentType)
        case .notModified(let fields):
            var body = FetchedBody(data: Data(), etag: fields.etag ?? pending.request.etag, modified: fields.modified,
                                   expires: fields.expires)
            body.isNotModified = true
            body.revalidation = fields.revalidation
            finish(pending, .success(body), retryAfter: nil)
        case .noContent(let fields) where kind == .tile:
            var body = FetchedBody(data: Data(), etag: fields.etag, modified: fields.modified, expires: fields.expires)
            body.revalidation = fields.revalidation
            finish(pending, .success(body), retryAfter: nil)
        case .noContent:
            finish(pending, .failure(.invalidBody("HTTP 204 No Content: a \(kind.name) must have a body")), retryAfter: nil)
        case .failure(.notFound, _) where kind == .tile && configuration.missingTiles == .skip:
            finish(pending, .success(.missingTile), retryAfter: nil)
        case .failure(let failure, let retryAfter):
            finish(pending, .failure(failure), retryAfter: retryAfter)
        }
        return nil
    }

    /// Reports checked bodies (or schedules their retries).
    private mutating func deliver(_ verdicts: [VerificationStage.Verdict]) {
        guard !verdicts.isEmpty else { return }
        verifying -= verdicts.count
        for verdict in verdicts { finish(verdict.pending, verdict.result, retryAfter: nil) }
        // As any answer, a checked one may have brought the source more.
        deferred = false
    }

    /// Schedules a retry, or reports the result (stopping the run after a fatal failure).
    private mutating func finish(_ pending: Pending, _ result: Result<FetchedBody, FetchFailure>,
                                 retryAfter: TimeInterval?) {
        guard case .failure(var failure) = result else {
            onResult(pending.request, result)
            return
        }
        // A 401/403 is a refused credential only when the request carried one.
        if case .status(let code) = failure, code == 401 || code == 403,
           configuration.carriesCredential(pending.transport.url) {
            failure = .refused(code)
        }
        let policy = configuration.retry
        if stopReason == nil, policy.shouldRetry(failure, attempt: pending.attempt) {
            let delay = policy.delay(afterAttempt: pending.attempt, retryAfter: retryAfter)
            var retry = pending
            retry.attempt += 1
            retry.due = clock.now + SystemClock.nanoseconds(delay)
            waiting.append(retry)
            fetcher.countRetry()
            return
        }
        if failure.isFatal, configuration.stopOnFatal, stopReason == nil {
            stopReason = configuration.secrets.redact("the run stopped after \(pending.request.url) failed: \(failure)")
        }
        onResult(pending.request, .failure(configuration.secrets.redacted(failure)))
    }
}
