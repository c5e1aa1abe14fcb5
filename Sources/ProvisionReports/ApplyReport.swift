import Foundation
import ProvisionModel

/// The JSON report of `provision apply` (Jobs/schema/report.schema.json) and its text summary.
public struct ApplyReport: Equatable, Sendable {
    /// Bumped on every change to the JSON shape (2: `downloads.planned`, `plannedResources`,
    /// `plannedTiles`, `notAttempted`; 3: `footprint`).
    public static let schemaVersion = 3

    public var plan: PlanDocument
    public var outcome: ApplyOutcomeSummary
    public var planSeconds: Double
    public var lock: LockDocument
    /// The store the apply left: per region its marginal and shared bytes, per style pack its
    /// resources; nil when the store could not be read afterwards.
    public var footprint: Footprint?

    public init(plan: PlanDocument, outcome: ApplyOutcome, planSeconds: Double, lock: LockDocument, footprint: Footprint?) {
        self.plan = plan
        self.outcome = ApplyOutcomeSummary(outcome)
        self.planSeconds = planSeconds
        self.lock = lock
        self.footprint = footprint
    }

    /// `complete` or `partial`.
    public var status: String { outcome.isComplete ? "complete" : "partial" }

    /// The JSON document.
    public var json: JSONValue {
        [
            "schemaVersion": .int(Self.schemaVersion),
            "kind": "apply-report",
            "status": .string(status),
            "job": ["name": .string(plan.jobName), "digest": .string(plan.jobDigest)],
            "store": [
                "path": .string(plan.store),
                "tiles": .int(lock.tileCount),
                "resources": .int(lock.resourceCount),
                "bytes": .int(Int(lock.byteCount)),
                "contentDigest": .string(lock.contentDigest),
            ],
            "plan": plan.json["summary"] ?? .null,
            "downloads": [
                "planned": .int(outcome.plannedResources + outcome.plannedTiles),
                "plannedResources": .int(outcome.plannedResources),
                "plannedTiles": .int(outcome.plannedTiles),
                "notAttempted": .int(outcome.notAttempted),
                "requested": .int(outcome.requested),
                "succeeded": .int(outcome.downloaded),
                "failed": .int(outcome.failed),
                "bytes": .int(Int(outcome.bytes)),
                "retries": .int(outcome.retries),
                "missingTiles": .int(outcome.missingTiles),
                "revalidated": .int(outcome.revalidated),
                "refreshed": .int(outcome.refreshed),
                "stoppedEarly": outcome.stopMessage.map { .string($0) } ?? .null,
            ],
            "failures": .array(outcome.failures.map { ["url": .string($0.url), "reason": .string($0.reason)] }),
            "failureCounts": .object(JSONObject(outcome.failureCounts.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            "regions": .array(lock.regions.map {
                ["key": .string($0.key), "id": .string($0.regionID), "stylePack": $0.stylePack.map { .string($0) } ?? .null,
                 "rowId": .int(Int($0.rowID)), "tiles": .int($0.expectedTiles.reduce(0) { $0 + $1.count }),
                 "complete": .bool($0.isComplete)]
            }),
            "removed": ["regions": .int(outcome.removedRegions), "tiles": .int(outcome.prunedTiles),
                        "resources": .int(outcome.prunedResources)],
            "durations": ["planSeconds": .double(rounded(planSeconds)), "applySeconds": .double(rounded(outcome.seconds))],
            "footprint": footprint?.json ?? .null,
        ]
    }

    /// The text summary printed after an apply: what was planned and what became of it, what
    /// was revalidated and removed, each region, the first failures, and the store.
    public var text: String {
        var out = "Apply \(status) in \(String(format: "%.1f", outcome.seconds)) s: \(downloadsText)\n"
        if outcome.revalidated + outcome.refreshed > 0 {
            out += "Revalidated expired content: \(grouped(outcome.revalidated)) unchanged (304, kept as stored), "
                + "\(grouped(outcome.refreshed)) replaced.\n"
        }
        if outcome.removedRegions > 0 || outcome.prunedTiles > 0 || outcome.prunedResources > 0 {
            let regions = outcome.removedRegions > 0 ? "Removed \(plural(outcome.removedRegions, "region"))" : ""
            let pruned = listedCounts([(outcome.prunedTiles, "tile"), (outcome.prunedResources, "resource")])
            out += regions.isEmpty ? "Removed \(pruned.text) no region uses.\n"
                : pruned.text.isEmpty ? regions + ".\n" : "\(regions); \(pruned.text) no region uses any more.\n"
        }
        let storedTiles = Dictionary((footprint?.regions ?? []).flatMap(\.rows).map { ($0.key, $0.entry.total.tiles) },
                                     uniquingKeysWith: { a, _ in a })
        for region in lock.regions {
            let tiles = region.expectedTiles.reduce(0) { $0 + $1.count }
            if region.isComplete && tiles == 0 {
                out += "  ! \(region.key): 0 tiles (its area and zooms give it none; the plan's note says why)\n"
            } else if region.isComplete {
                out += "  ✓ \(region.key): \(plural(tiles, "tile"))\n"
            } else if let stored = storedTiles[region.key], stored < tiles {
                out += "  ✗ \(region.key): \(grouped(min(stored, tiles))) of \(plural(tiles, "tile")) stored (incomplete)\n"
            } else {
                out += "  ✗ \(region.key): \(plural(tiles, "tile"))\(storedTiles[region.key] == nil ? " expected" : "") (incomplete)\n"
            }
        }
        out += failuresText
        if let footprint { out += FootprintRenderer.text(footprint, title: "Bytes in offline.db") }
        out += "Store: \(plan.store): \(plural(lock.tileCount, "tile")), \(plural(lock.resourceCount, "resource")), "
        out += "\(ByteFormat.string(lock.byteCount)), \(lock.contentDigest.prefix(23))…\n"
        return out
    }

    /// `1,573 downloads planned (13 resources, 1,560 tiles): 265 downloaded, 12 failed, 30 missing
    /// upstream (…), 1,236 not attempted (stopped); 2.3 MiB downloaded and verified (uncompressed),
    /// 3 retries.`
    ///
    /// The parts add up to the planned count: a tile missing upstream under `missingTiles: skip`
    /// is counted there, not as downloaded (the outcome counts it in both).
    var downloadsText: String {
        let o = outcome
        var text: String
        if o.planned == 0 {
            text = "nothing to download"
        } else {
            var parts = ["\(grouped(o.downloaded - o.missingTiles)) downloaded"]
            if o.plannedFailed > 0 { parts.append("\(grouped(o.plannedFailed)) failed") }
            if o.missingTiles > 0 {
                parts.append("\(grouped(o.missingTiles)) missing upstream (stored empty, download.missingTiles: skip)")
            }
            if o.notAttempted > 0 {
                let why = o.stopMessage == nil ? "stopped"
                    : o.stopIsTemporary ? "stopped when an origin archive changed" : "stopped when an origin refused access"
                parts.append("\(grouped(o.notAttempted)) not attempted (\(why))")
            }
            text = "\(plural(o.planned, "download")) planned (\(plural(o.plannedResources, "resource")), "
                + "\(plural(o.plannedTiles, "tile"))): " + parts.joined(separator: ", ")
        }
        // The bytes counted while downloading are the bodies as verified (inflated); the store
        // keeps them compressed, so the stored size (the `Store:` line) is smaller: say which.
        let totals = [o.bytes > 0 ? "\(ByteFormat.string(o.bytes)) downloaded and verified (uncompressed)" : "",
                      o.retries > 0 ? plural(o.retries, "retry", "retries") : ""].filter { !$0.isEmpty }.joined(separator: ", ")
        return text + (totals.isEmpty ? "." : "; \(totals).")
    }

    /// The first ten failures, grouped by reason, and how many more the JSON report lists: it
    /// holds the first `outcome.failures.count` (at most 100) and counts every one by reason.
    var failuresText: String {
        let o = outcome
        guard o.failed > 0 else { return "" }
        let reasons = o.failureCounts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            .map { "\($0.key): \(grouped($0.value))" }.joined(separator: ", ")
        // Under --refresh a failed revalidation counts too, though it was not a planned download.
        let what = o.failed == o.plannedFailed ? plural(o.failed, "download") : plural(o.failed, "request") + " (revalidations included)"
        var out = "\(what) failed (\(reasons)):\n"
        let shown = o.failures.prefix(10)
        for failure in shown { out += "  \(failure.url): \(failure.reason)\n" }
        let more = o.failed - shown.count
        guard more > 0 else { return out }
        let listed = o.failures.count - shown.count
        if listed <= 0 {
            out += "  … and \(grouped(more)) more, counted by reason in the JSON report\n"
        } else if listed == more {
            out += "  … and \(grouped(more)) more, listed in the JSON report\n"
        } else {
            out += "  … and \(grouped(more)) more: the JSON report lists \(grouped(listed)) of them and counts all by reason\n"
        }
        return out
    }

    private func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }
}

/// The parts of an `ApplyOutcome` a report shows.
public struct ApplyOutcomeSummary: Equatable, Sendable {
    /// Resources the apply set out to download (`ApplyOutcome.plannedResources`).
    public var plannedResources: Int
    /// Tiles the apply set out to download (`ApplyOutcome.plannedTiles`).
    public var plannedTiles: Int
    /// Planned downloads never started because the run was stopped.
    public var notAttempted: Int
    public var requested: Int
    public var downloaded: Int
    public var failed: Int
    public var bytes: Int64
    public var retries: Int
    public var failures: [ApplyOutcome.Failure]
    public var failureCounts: [String: Int]
    public var removedRegions: Int
    public var prunedTiles: Int
    public var prunedResources: Int
    public var seconds: Double
    public var isComplete: Bool
    public var missingTiles: Int
    public var stopMessage: String?
    /// Whether the early stop was an origin archive changing under the run (see `ApplyOutcome`).
    public var stopIsTemporary: Bool
    public var revalidated: Int
    public var refreshed: Int

    /// Resources and tiles the apply set out to download.
    public var planned: Int { plannedResources + plannedTiles }

    /// Planned downloads that were started and failed (revalidations are not planned downloads).
    public var plannedFailed: Int { max(0, planned - notAttempted - downloaded) }

    /// The parts of `outcome`.
    public init(_ o: ApplyOutcome) {
        plannedResources = o.plannedResources
        plannedTiles = o.plannedTiles
        notAttempted = o.notAttempted
        requested = o.requested
        downloaded = o.downloaded
        failed = o.failed
        bytes = o.bytesDownloaded
        retries = o.retries
        failures = o.failures
        failureCounts = o.failureCounts
        removedRegions = o.removedRegions
        prunedTiles = o.prunedTiles
        prunedResources = o.prunedResources
        seconds = o.seconds
        isComplete = o.isComplete
        missingTiles = o.missingTiles
        stopMessage = o.stopMessage
        stopIsTemporary = o.stopIsTemporary
        revalidated = o.revalidated
        refreshed = o.refreshed
    }
}
