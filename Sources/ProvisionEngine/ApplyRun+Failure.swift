import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports

extension ApplyRun {
    /// How an apply that ran to its end failed: the error its command reports, and the stderr
    /// lines under it; nil when it completed.
    public struct Failure: Sendable {
        public var error: ProvisionError
        /// The failed URLs and why (the first ten), under a partial apply's error.
        public var lines: [String] = []
    }

    /// The one place an apply's outcome becomes its exit status, first match wins: stopped by a
    /// signal (`signal`, its number and name: SIGINT 130, SIGTERM 143), an origin's temporary stop
    /// (75), an upstream stop (69), downloads left or failed (75).
    ///
    /// - Parameter reportPath: where the JSON report is (`--report`'s file, "on stdout"), named
    ///   by the failure lines; nil when none is written.
    /// - Parameter refusedPacks: the style packs whose origin refused the credentials (named by
    ///   an upstream stop).
    public static func failure(_ outcome: ApplyOutcome, refusedPacks: [String] = [], signal: (number: Int32, name: String)?,
                               reportPath: String?) -> Failure? {
        if let signal {
            // The stream ends with an error event like any other failure; the report says `stopped`.
            let left = outcome.notAttempted > 0 ? ", \(plural(outcome.notAttempted, "planned download")) not attempted" : ""
            return Failure(error: ProvisionError(signal.number == SIGTERM ? .terminated : .interrupted,
                                                 "stopped by \(signal.name) after committing what arrived\(left); "
                                                 + "run apply again to resume"))
        }
        if let stop = outcome.stopMessage, outcome.stopIsTemporary {
            return Failure(error: ProvisionError(.partial, "\(stop); what was verified before is kept: run apply again to "
                                                 + "read the archive anew"),
                           lines: Self.failureLines(outcome, report: reportPath))
        }
        if let stop = outcome.stopMessage {
            let names = refusedPacks.map { "'\($0)'" }.joined(separator: ", ")
            let subject = refusedPacks.isEmpty ? "" : " (\(refusedPacks.count == 1 ? "style pack" : "style packs") \(names))"
            return Failure(error: ProvisionError(.upstreamUnavailable, "\(stop)\(subject); what was verified before is kept"))
        }
        if !outcome.isComplete {
            let message = outcome.failed > 0 ? "\(plural(outcome.failed, "download")) failed; run apply again to retry them"
                : "the apply stopped before every download; run apply again"
            return Failure(error: ProvisionError(.partial, message), lines: Self.failureLines(outcome, report: reportPath))
        }
        return nil
    }

    /// The stderr lines of a partial apply: which URLs failed and why (the first ten), so a CI
    /// log shows them without the report; says how many more the JSON report holds, naming the
    /// report `report` (`--report`'s file, "on stdout"), or how to get one when none is written.
    static func failureLines(_ outcome: ApplyOutcome, report: String?) -> [String] {
        let shown = outcome.failures.prefix(10)
        var lines = shown.map { "\($0.url): \($0.reason)" }
        if outcome.failed > shown.count {
            let more = outcome.failed - shown.count
            let listed = outcome.failures.count - shown.count
            lines.append(listed > 0 ? "… and \(grouped(more)) more (\(ApplyReport.reportPointer(report)) lists \(grouped(listed)) of them)"
                : "… and \(grouped(more)) more")
        }
        return lines
    }
}

extension ApplyRun.Result {
    /// How this apply failed (`ApplyRun.failure`); nil when it completed.
    public func failure(signal: (number: Int32, name: String)?, reportPath: String?) -> ApplyRun.Failure? {
        ApplyRun.failure(outcome, refusedPacks: refusedPacks, signal: signal, reportPath: reportPath)
    }
}
