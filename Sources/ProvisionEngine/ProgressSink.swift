import Foundation
import ProvisionFoundation
import ProvisionModel

/// Where the engine tells what it is doing: the command line draws it (a bar, lines, NDJSON
/// events). Called from the command's thread and the download thread.
public protocol ProgressSink: Sendable {
    /// A named event with fields (`--progress json`) and, for the text modes, a line.
    func event(_ name: String, _ fields: JSONObject, text: String?)
    /// Download progress (the sink throttles).
    func downloads(done: Int, total: Int, bytes: Int64, failed: Int)
    /// A download that failed for good.
    func failure(url: String, reason: String)
    /// Ends a live line before other output.
    func finish()
}

extension ProgressSink {
    /// An event without a line for the text modes.
    public func event(_ name: String, _ fields: JSONObject = JSONObject()) { event(name, fields, text: nil) }

    /// A phase of the work (`phase` event).
    func phase(_ name: String, text: String? = nil) {
        event("phase", JSONObject([("phase", .string(name))]), text: text)
    }
}

/// A sink that shows nothing.
public struct SilentProgress: ProgressSink {
    public init() {}
    public func event(_ name: String, _ fields: JSONObject, text: String?) {}
    public func downloads(done: Int, total: Int, bytes: Int64, failed: Int) {}
    public func failure(url: String, reason: String) {}
    public func finish() {}
}
