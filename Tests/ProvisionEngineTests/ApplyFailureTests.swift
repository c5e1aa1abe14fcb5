import Foundation
import ProvisionEngine
import ProvisionModel
import ProvisionStore
import XCTest

/// The one place an apply's outcome becomes its exit status and message (`ApplyRun.failure`),
/// case by case, in the order it decides; and what an error keeps of its cause.
final class ApplyFailureTests: XCTestCase {
    private static func outcome(planned: Int = 4, downloaded: Int = 4, failed: Int = 0, stop: String? = nil,
                                temporary: Bool = false, stopped: Bool = false) -> ApplyOutcome {
        var outcome = ApplyOutcome()
        outcome.plannedTiles = planned
        outcome.attempted = downloaded + failed
        outcome.requested = downloaded + failed
        outcome.downloaded = downloaded
        outcome.failed = failed
        outcome.failures = (0..<failed).map { ApplyOutcome.Failure(url: "https://tiles.test/\($0).pbf", reason: "HTTP 500") }
        outcome.stopMessage = stop
        outcome.stopIsTemporary = temporary
        outcome.stopped = stopped
        return outcome
    }

    func testEveryOutcomeHasOneStatusAndMessage() {
        let stop = "https://tiles.test/ refused the key"
        let cases: [(String, ApplyOutcome, [String], (number: Int32, name: String)?, ExitCode?, String?)] = [
            ("complete", Self.outcome(), [], nil, nil, nil),
            ("SIGINT", Self.outcome(downloaded: 1), [], (SIGINT, "SIGINT"), .interrupted,
             "stopped by SIGINT after committing what arrived, 3 planned downloads not attempted; run apply again to resume"),
            ("SIGTERM, nothing left", Self.outcome(), [], (SIGTERM, "SIGTERM"), .terminated,
             "stopped by SIGTERM after committing what arrived; run apply again to resume"),
            ("a signal wins over a stop", Self.outcome(stop: stop), [], (SIGTERM, "SIGTERM"), .terminated,
             "stopped by SIGTERM after committing what arrived; run apply again to resume"),
            ("temporary stop", Self.outcome(downloaded: 2, stop: "the archive changed", temporary: true), [], nil, .partial,
             "the archive changed; what was verified before is kept: run apply again to read the archive anew"),
            ("upstream stop", Self.outcome(downloaded: 0, stop: stop), ["streets"], nil, .upstreamUnavailable,
             "\(stop) (style pack 'streets'); what was verified before is kept"),
            ("upstream stop, two packs", Self.outcome(downloaded: 0, stop: stop), ["a", "b"], nil, .upstreamUnavailable,
             "\(stop) (style packs 'a', 'b'); what was verified before is kept"),
            ("failed downloads", Self.outcome(downloaded: 2, failed: 2), [], nil, .partial,
             "2 downloads failed; run apply again to retry them"),
            ("downloads left", Self.outcome(downloaded: 2, stopped: true), [], nil, .partial,
             "the apply stopped before every download; run apply again"),
        ]
        for (name, outcome, packs, signal, status, message) in cases {
            let failure = ApplyRun.failure(outcome, refusedPacks: packs, signal: signal, reportPath: nil)
            XCTAssertEqual(failure?.error.kind, status, name)
            XCTAssertEqual(failure?.error.message, message, name)
            XCTAssertEqual(failure?.error.kind.rawValue, status?.rawValue, name)
        }
        XCTAssertEqual([ExitCode.interrupted, .terminated, .partial, .upstreamUnavailable].map(\.rawValue), [130, 143, 75, 69])
    }

    func testPartialAppliesListTheFailedURLs() {
        let failure = ApplyRun.failure(Self.outcome(planned: 14, downloaded: 2, failed: 12), signal: nil, reportPath: "r.json")
        XCTAssertEqual(failure?.lines.count, 11)
        XCTAssertEqual(failure?.lines.first, "https://tiles.test/0.pbf: HTTP 500")
        XCTAssertTrue(failure?.lines.last?.hasPrefix("… and 2 more (") == true, "\(failure?.lines ?? [])")
        let upstream = ApplyRun.failure(Self.outcome(stop: "refused"), signal: nil, reportPath: nil)
        XCTAssertEqual(upstream?.lines, [], "an upstream stop lists no URL")
    }

    func testAnErrorKeepsItsCauseChainWithSecretsHidden() {
        let store = StoreError(.io, "cannot read https://u:pw-SECRET@tiles.test/a?key=K-SECRET&v=2", path: "/s/offline.db")
        let inner = ProvisionError(.failure, "inner", cause: store)
        let outer = ProvisionError(.cannotWriteStore, "outer", cause: inner)
        let lines = outer.causeLines()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(lines.first, "inner")
        XCTAssertTrue(lines.count == 2 && lines[1].contains("/s/offline.db"), "\(lines)")
        for line in lines { XCTAssertFalse(line.contains("SECRET"), line) }
        XCTAssertTrue(outer.cause is ProvisionError, "the cause is kept as a value")
        XCTAssertEqual(ProvisionError(.usage, "no cause").causeLines(), [])
    }
}
