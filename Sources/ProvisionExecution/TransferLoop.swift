import CCurl
import Foundation
import ProvisionFoundation
import ProvisionModel

/// One of the fetcher's transfer loops: a libcurl multi handle with its transfers. While a
/// `FetchLoop` runs, the first loop is driven by it on the calling thread, each other one on a
/// thread of its own.
///
/// Why several: receiving a response costs the thread that drives it the TLS decryption, the
/// HTTP/2 framing and the header parsing. With one thread for every transfer, that thread was the
/// limit against a fast origin while the other core had little to do. Each loop keeps its own
/// connections: an HTTP/1.x host's are shared out among the loops, an HTTP/2 host's one
/// connection stays on one loop. The `FetchLoop` still decides what starts, where and when, so
/// the per-host cap, the rate limit and the memory bound hold over all the loops together.
///
/// A transfer belongs to the loop that created it for its whole life; libcurl's callbacks reach
/// it through an unretained pointer, so the loop must outlive every transfer on it.
final class TransferLoop {
    /// A finished transfer: the request it carried, what it answered, the loop it ran on, and
    /// whether its answer came over HTTP/1.x (one request per connection at a time), HTTP/2 or
    /// later (multiplexed), or before any answer (nil).
    struct Finished: Sendable {
        var pending: FetchLoop.Pending
        var outcome: CurlTransfer.Outcome
        var loop: Int
        var multiplexed: Bool? = nil
    }

    /// What the `FetchLoop` hands over: transfers to start, and whether it is done with the loop.
    struct Inbox {
        var starts: [FetchLoop.Pending] = []
        var closing = false
    }

    /// The loop's place among the fetcher's loops.
    let index: Int
    let multi: UnsafeMutableRawPointer
    /// Filled by the `FetchLoop`'s thread, emptied by this loop's.
    let inbox = Mutex(Inbox())
    /// The connections the loop may hold to one host: its share of `perHost`, so that the loops
    /// together never open more than `perHost` to an HTTP/1.x host.
    let hostConnections: Int
    private let options: CurlTransfer.Options
    private let now: @Sendable () -> Int64
    private let buildTime: Int64?
    private var idle: [CurlTransfer] = []
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Transfers the loop has finished since it was made (read only when no `FetchLoop` runs).
    private(set) var carried = 0

    /// Creates a loop with the fetcher's settings and `hostConnections` connections to a host at
    /// most; nil when libcurl cannot make a multi handle.
    init?(index: Int, configuration: HTTPFetcher.Configuration, hostConnections: Int) {
        guard let multi = curl_multi_init() else { return nil }
        self.index = index
        self.multi = multi
        self.hostConnections = hostConnections
        self.options = CurlTransfer.Options(
            timeout: configuration.timeout, stallTimeout: configuration.stallTimeout,
            maxRedirects: configuration.maxRedirects, maxBytes: configuration.maxResponseBytes,
            userAgent: configuration.userAgent, trust: configuration.trust, secrets: configuration.secrets)
        self.now = configuration.now
        self.buildTime = configuration.buildTime
        provision_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.concurrency * 2)
        // The `FetchLoop` keeps the per-host count over every loop (so a host at its cap never
        // holds a slot) and each loop's share of it; libcurl's cap keeps the connections a loop
        // opens and keeps to a host within that share, and backs the count up for redirects.
        provision_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, hostConnections)
        // HTTP/2 streams share a connection: with CURLOPT_PIPEWAIT a transfer waits for the
        // host's connection to finish its handshake and then multiplexes onto it, so the
        // transfers in flight to an HTTP/2 host (all on one loop) travel on one connection.
        provision_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    }

    deinit {
        for transfer in active.values { curl_multi_remove_handle(multi, transfer.handle) }
        active.removeAll()
        idle.removeAll()
        curl_multi_cleanup(multi)
    }

    /// Hands transfers to the loop and wakes it (from the `FetchLoop`'s thread).
    func submit(_ starts: [FetchLoop.Pending]) {
        guard !starts.isEmpty else { return }
        inbox.withLock { $0.starts.append(contentsOf: starts) }
        curl_multi_wakeup(multi)
    }

    /// Starts the loop's thread, which posts finished transfers to `mailbox` until `close`.
    /// (The `FetchLoop` drives its first loop on its own thread instead, with `begin`, `perform`
    /// and `poll`.)
    func start(posting mailbox: TransferMailbox) -> DispatchSemaphore {
        inbox.withLock { $0 = Inbox() }
        let stopped = DispatchSemaphore(value: 0)
        // The loop is used only by this thread until `close` returns: the `FetchLoop` touches
        // nothing of it but the inbox (a Mutex) and `curl_multi_wakeup`, which is for any thread.
        nonisolated(unsafe) let loop = self
        let thread = Thread {
            loop.run(mailbox)
            stopped.signal()
        }
        thread.name = "provision.transfer.\(index)"
        thread.start()
        return stopped
    }

    /// Tells the thread to stop once its transfers are done (the `FetchLoop` closes a loop only
    /// when none of its transfers is in flight), and waits for it.
    func close(_ stopped: DispatchSemaphore) {
        inbox.withLock { $0.closing = true }
        curl_multi_wakeup(multi)
        stopped.wait()
    }

    private func run(_ mailbox: TransferMailbox) {
        var finished: [Finished] = []
        while true {
            let (starts, closing) = inbox.withLock { inbox in
                defer { inbox.starts.removeAll(keepingCapacity: true) }
                return (inbox.starts, inbox.closing)
            }
            for pending in starts { begin(pending, failures: &finished) }
            if closing, active.isEmpty, finished.isEmpty { return }
            perform(into: &finished)
            if !finished.isEmpty {
                mailbox.post(finished)
                finished.removeAll(keepingCapacity: true)
                continue
            }
            poll(milliseconds: 1000)
        }
    }

    /// Waits up to `milliseconds` for a socket of the loop's transfers, a timer of libcurl's, or
    /// a `curl_multi_wakeup`.
    func poll(milliseconds: Int32) {
        curl_multi_poll(multi, nil, 0, milliseconds, nil)
    }

    /// Moves the transfers on and adds what finished to `finished`.
    func perform(into finished: inout [Finished]) {
        var running: Int32 = 0
        curl_multi_perform(multi, &running)
        collect(into: &finished)
    }

    /// Adds a transfer to the multi handle; a transfer that cannot start is finished at once.
    func begin(_ pending: FetchLoop.Pending, failures: inout [Finished]) {
        func fail(_ message: String) {
            failures.append(Finished(pending: pending, outcome: .failure(.transport(message), retryAfter: nil), loop: index))
        }
        guard let transfer = idle.popLast() ?? CurlTransfer(options: options) else { return fail("curl_easy_init failed") }
        transfer.prepare(pending.transport, attempt: pending.attempt)
        transfer.host = pending.host
        guard curl_multi_add_handle(multi, transfer.handle) == CURLM_OK else {
            transfer.transport = nil
            idle.append(transfer)
            return fail("curl_multi_add_handle failed")
        }
        active[transfer.handle] = transfer
    }

    /// Reads libcurl's completion messages: what each finished transfer answered.
    private func collect(into finished: inout [Finished]) {
        var remaining: Int32 = 0
        var wallClock: Int64?
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: handle) else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, handle)
            let time = wallClock ?? now()
            wallClock = time
            let outcome = transfer.outcome(code, now: time, buildTime: buildTime ?? time)
            var version = 0
            provision_curl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
            if let transport = transfer.transport {
                let pending = FetchLoop.Pending(transport: transport, host: transfer.host, attempt: transfer.attempt,
                                                due: 0)
                finished.append(Finished(pending: pending, outcome: outcome, loop: index,
                                         multiplexed: version == 0 ? nil : version >= CURL_HTTP_VERSION_2_0))
            }
            carried += 1
            transfer.transport = nil
            transfer.body = Data()
            idle.append(transfer)
        }
    }
}

/// Where the threaded transfer loops leave finished transfers for the `FetchLoop`.
final class TransferMailbox: Sendable {
    private let finished = Mutex([TransferLoop.Finished]())
    private let wake: @Sendable () -> Void

    /// A mailbox whose posts call `wake` (which interrupts the `FetchLoop`'s poll).
    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// Leaves finished transfers (from a loop's thread) and wakes the `FetchLoop`.
    func post(_ transfers: [TransferLoop.Finished]) {
        finished.withLock { $0.append(contentsOf: transfers) }
        wake()
    }

    /// The finished transfers left so far, without waiting.
    func take() -> [TransferLoop.Finished] {
        guard finished.read({ !$0.isEmpty }) else { return [] }
        return finished.withLock { finished in
            defer { finished = [] }
            return finished
        }
    }
}
