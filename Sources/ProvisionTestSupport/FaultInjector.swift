import Foundation

/// A fault the loopback server can inject at random (see `LoopbackHTTPServer.setFaultRate`).
public enum InjectedFault: String, CaseIterable, Sendable, Hashable {
    /// 503 Service Unavailable.
    case serviceUnavailable
    /// 429 Too Many Requests with `Retry-After: 0`.
    case tooManyRequests
    /// The headers and half the body, then a TCP reset.
    case resetMidBody
    /// Half the body with a `Content-Length` claiming all of it, then the connection closes.
    case truncatedBody
    /// 200 with an HTML error page.
    case html200
    /// The full response, sent in small pieces over `LoopbackHTTPServer.dripSeconds`.
    case slowDrip
    /// A TCP reset before any byte of the response (opt-in).
    case resetBeforeResponse
    /// The headers, then nothing until the client gives up (opt-in: costs a stall timeout).
    case stall

    /// The faults `setFaultRate` injects unless told otherwise: all but the opt-in ones.
    public static let standard: [InjectedFault] = [
        .serviceUnavailable, .tooManyRequests, .resetMidBody, .truncatedBody, .html200, .slowDrip,
    ]

    /// Whether a client that retries transient failures gets the real response eventually
    /// (everything but `html200`, which a verifying client refuses as a permanent failure).
    public var isRecoverable: Bool { self != .html200 }
}

/// Decides, request by request, whether to inject a fault: a seeded SplitMix64 generator,
/// so one seed gives one sequence of decisions in arrival order.
struct FaultInjector {
    let rate: Double
    let faults: [InjectedFault]
    /// Only paths starting with this are faulted (nil: every path).
    let pathPrefix: String?
    private var state: UInt64

    init(rate: Double, seed: UInt64, faults: [InjectedFault], pathPrefix: String?) {
        self.rate = min(max(rate, 0), 1)
        self.faults = faults
        self.pathPrefix = pathPrefix
        self.state = seed
    }

    private mutating func nextUInt64() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func nextUnit() -> Double {
        Double(nextUInt64() >> 11) / Double(1 << 53)
    }

    /// The fault for a request to `path`, or nil for a normal answer.
    mutating func next(path: String) -> InjectedFault? {
        guard !faults.isEmpty, rate > 0 else { return nil }
        if let pathPrefix, !path.hasPrefix(pathPrefix) { return nil }
        let roll = nextUnit()
        let pick = Int(nextUInt64() % UInt64(faults.count))
        return roll < rate ? faults[pick] : nil
    }
}
