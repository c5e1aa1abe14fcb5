import Foundation
import ProvisionFoundation
import ProvisionModel

/// Where the engine tells what it is doing: the command line renders each event in the view its
/// options chose (a bar, lines, NDJSON events). Called from the command's thread and the
/// download thread.
public protocol ProgressSink: Sendable {
    /// Something that happened (download progress included: the sink throttles it).
    func emit(_ event: ProvisionEvent)
    /// Ends a live line before other output.
    func finish()
}

/// A sink that shows nothing.
public struct SilentProgress: ProgressSink {
    public init() {}
    public func emit(_ event: ProvisionEvent) {}
    public func finish() {}
}
