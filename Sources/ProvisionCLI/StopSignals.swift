import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the first SIGINT or SIGTERM into a graceful stop: no new download starts, the batches
/// in flight are committed, the report and lock are written, and the process exits 130 or 143.
/// A second signal ends the process at once (the store is still consistent: every write is a
/// transaction).
final class StopSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var received: Int32?
    private var sources: [DispatchSourceSignal] = []

    /// Starts listening; call once per process.
    init(onStop: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.lock.lock()
                let first = self.received == nil
                if first { self.received = number }
                self.lock.unlock()
                if first {
                    onStop(number)
                } else {
                    signal(number, SIG_DFL)
                    raise(number)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal that asked for a stop, if any.
    var receivedSignal: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Whether a stop was asked for.
    var isStopping: Bool { receivedSignal != nil }
}
