import Dispatch
import Foundation
import ProvisionFoundation
import ProvisionModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the first SIGINT or SIGTERM into a graceful stop: no new download starts, the batches
/// in flight are committed, the report and lock are written, and the process exits 130 or 143.
/// A second signal ends the process at once (the store is still consistent: every write is a
/// transaction).
final class StopSignals: Sendable {
    private let received = Mutex<Int32?>(nil)
    /// The signal sources (behind the lock: sources are not Sendable).
    private let sources = Mutex<[DispatchSourceSignal]>([])

    /// Starts listening; call once per process.
    init(onStop: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            sources.withLock { [received] sources in
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let first = received.withLock { value in
                        defer { if value == nil { value = number } }
                        return value == nil
                    }
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
    }

    /// The signal that asked for a stop, if any.
    var receivedSignal: Int32? { received.read { $0 } }

    /// Whether a stop was asked for.
    var isStopping: Bool { receivedSignal != nil }

    /// `SIGINT`, `SIGTERM`: how reports and messages name a signal.
    static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        default: return "signal \(number)"
        }
    }
}
