import Foundation
import ProvisionModel

/// The JSON report of `provision apply` (Jobs/schema/report.schema.json) and its text summary.
public struct ApplyReport: Equatable, Sendable {
    /// Bumped on every change to the JSON shape.
    public static let schemaVersion = 1

    public var plan: PlanDocument
    public var outcome: ApplyOutcomeSummary
    public var planSeconds: Double
    public var lock: LockDocument

    public init(plan: PlanDocument, outcome: ApplyOutcome, planSeconds: Double, lock: LockDocument) {
        self.plan = plan
        self.outcome = ApplyOutcomeSummary(outcome)
        self.planSeconds = planSeconds
        self.lock = lock
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
        ]
    }

    /// The text summary printed after an apply.
    public var text: String {
        var out = "Apply \(status): \(outcome.downloaded) of \(outcome.requested) downloads verified and written "
        out += "(\(ByteFormat.string(outcome.bytes))) in \(String(format: "%.1f", outcome.seconds)) s"
        out += outcome.retries > 0 ? ", \(outcome.retries) retries.\n" : ".\n"
        if outcome.revalidated + outcome.refreshed > 0 {
            out += "Revalidated expired content: \(outcome.revalidated) unchanged (304, kept as stored), \(outcome.refreshed) replaced.\n"
        }
        if outcome.removedRegions > 0 || outcome.prunedTiles > 0 || outcome.prunedResources > 0 {
            out += "Removed \(outcome.removedRegions) regions, \(outcome.prunedTiles) tiles and \(outcome.prunedResources) resources no region uses.\n"
        }
        for region in lock.regions {
            let tiles = region.expectedTiles.reduce(0) { $0 + $1.count }
            out += "  \(region.isComplete ? "✓" : "✗") \(region.key): \(tiles) tiles\(region.isComplete ? "" : " (incomplete)")\n"
        }
        if outcome.failed > 0 {
            out += "\(outcome.failed) downloads failed:\n"
            for failure in outcome.failures.prefix(10) { out += "  \(failure.url): \(failure.reason)\n" }
            if outcome.failed > 10 { out += "  … and \(outcome.failed - 10) more (see the JSON report)\n" }
        }
        out += "Store: \(plan.store): \(lock.tileCount) tiles, \(lock.resourceCount) resources, "
        out += "\(ByteFormat.string(lock.byteCount)), \(lock.contentDigest.prefix(23))…\n"
        return out
    }

    private func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }
}

/// The parts of an `ApplyOutcome` a report shows.
public struct ApplyOutcomeSummary: Equatable, Sendable {
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
    public var revalidated: Int
    public var refreshed: Int

    public init(_ o: ApplyOutcome) {
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
        revalidated = o.revalidated
        refreshed = o.refreshed
    }
}
