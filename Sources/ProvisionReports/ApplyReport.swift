import Foundation
import ProvisionFoundation
import ProvisionModel

/// The JSON report of `provision apply` (Jobs/schema/report.schema.json) and its text summary.
public struct ApplyReport: Equatable, Sendable {
    /// Bumped on every change to the JSON shape (2: `downloads.planned`, `plannedResources`,
    /// `plannedTiles`, `notAttempted`; 3: `footprint`; 4: `searchPacks`).
    public static let schemaVersion = 4

    public var plan: PlanDocument
    public var outcome: ApplyOutcomeSummary
    public var planSeconds: Double
    public var lock: LockDocument
    /// The store the apply left: per region its marginal and shared bytes, per style pack its
    /// resources; nil when the store could not be read afterwards.
    public var footprint: Footprint?
    /// Where the JSON report is written (`--report`'s path), for the text that points at it; nil
    /// when none is written.
    public var reportPath: String?

    public init(plan: PlanDocument, outcome: ApplyOutcome, planSeconds: Double, lock: LockDocument, footprint: Footprint?) {
        self.plan = plan
        self.outcome = ApplyOutcomeSummary(outcome)
        self.planSeconds = planSeconds
        self.lock = lock
        self.footprint = footprint
    }

    /// `complete`, `partial` (some download failed or was refused), or `stopped` (a signal
    /// stopped the run before every download started: exit 130 or 143).
    public var status: String { outcome.stopped ? "stopped" : outcome.isComplete ? "complete" : "partial" }

    /// Why downloading stopped before every download started: a signal, an origin that refused
    /// the credential or an archive that changed; nil when it did not.
    public var stoppedEarly: String? {
        if let message = outcome.stopMessage { return message }
        guard outcome.stopped else { return nil }
        let signal = outcome.stopSignal ?? "a signal"
        return "stopped by \(signal): no download started after it, the ones in flight were committed"
            + (outcome.notAttempted > 0 ? " and \(plural(outcome.notAttempted, "planned download")) were not attempted" : "")
            + "; run apply again to resume"
    }

    /// The JSON document.
    public var json: JSONValue {
        var document: JSONValue = [
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
                "stoppedEarly": stoppedEarly.map { .string($0) } ?? .null,
            ],
            "failures": .array(outcome.failures.map { ["url": .string($0.url), "reason": .string($0.reason)] }),
            "failureCounts": .object(JSONObject(outcome.failureCounts.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            "regions": .array(lock.regions.map { region in
                var entry: JSONValue = [
                    "key": .string(region.key), "id": .string(region.regionID),
                    "stylePack": region.stylePack.map { .string($0) } ?? .null, "rowId": .int(Int(region.rowID)),
                    "tiles": .int(region.expectedTiles.reduce(0) { $0 + $1.count }), "complete": .bool(region.isComplete),
                ]
                if lock.shard != nil, case .object(var object) = entry {
                    object["shardTiles"] = .int(shardTiles(of: region.key) ?? 0)
                    entry = .object(object)
                }
                return entry
            }),
            "removed": ["regions": .int(outcome.removedRegions), "tiles": .int(outcome.prunedTiles),
                        "resources": .int(outcome.prunedResources)],
            "durations": ["planSeconds": .double(rounded(planSeconds)), "applySeconds": .double(rounded(outcome.seconds))],
            "footprint": footprint?.json ?? .null,
            "searchPacks": searchPacksJSON,
        ]
        // Only a shard's store has it: which share of the job the store holds.
        if let shard = lock.shard, case .object(var object) = document {
            object["shard"] = ["index": .int(shard.shard.index), "count": .int(shard.shard.count),
                               "firstTile": .int(shard.tiles.lowerBound), "endTile": .int(shard.tiles.upperBound),
                               "totalTiles": .int(shard.totalTiles)]
            document = .object(object)
        }
        return document
    }

    /// For a shard's store: the tiles of the shard's share that row `key` holds (what the
    /// shard's plan counts for it).
    func shardTiles(of key: String) -> Int? {
        guard lock.shard != nil, let region = plan.regions.first(where: { $0.key == key }) else { return nil }
        return region.tiles.add + region.tiles.keep
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
        if let shard = lock.shard {
            out += "Shard \(shard.shard): a partial store holding tiles \(grouped(shard.tiles.lowerBound))–"
                + "\(grouped(max(shard.tiles.lowerBound, shard.tiles.upperBound - 1))) of the job's \(grouped(shard.totalTiles)) "
                + "(\(plural(shard.tiles.count, "tile"))); 'provision merge' joins the \(shard.shard.count) shards' stores.\n"
            if let packs = shard.searchPacks?.packs, !packs.isEmpty {
                out += "Search \(packs.count == 1 ? "pack" : "packs") \(listed(packs.map(\.pack.id))): not built by a shard, which "
                    + "holds only its share of the tiles; 'provision merge' builds \(packs.count == 1 ? "it" : "them") once.\n"
            }
        }
        let storedTiles = Dictionary((footprint?.regions ?? []).flatMap(\.rows).map { ($0.key, $0.entry.total.tiles) },
                                     uniquingKeysWith: { a, _ in a })
        for region in lock.regions {
            let tiles = region.expectedTiles.reduce(0) { $0 + $1.count }
            if let held = shardTiles(of: region.key) {
                let share = "\(grouped(held)) of its \(plural(tiles, "tile")) (shard \(lock.shard?.shard.description ?? "")'s share)"
                out += "  \(region.isComplete ? "✓" : "✗") \(region.key): \(share)\(region.isComplete ? "" : " (incomplete)")\n"
            } else if region.isComplete && tiles == 0 {
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
        out += searchPacksText
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
                let why = o.stopMessage == nil ? o.stopSignal.map { "stopped by \($0)" } ?? "stopped"
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
        let holds = listed <= 0 ? "counts them by reason" : listed == more ? "lists them"
            : "lists \(grouped(listed)) of them and counts all by reason"
        return out + "  … and \(grouped(more)) more: \(Self.reportPointer(reportPath)) \(holds)\n"
    }

    /// How a message names the JSON report that holds what it leaves out: the file `--report`
    /// wrote, else how to get one (so no message points at a report that does not exist).
    public static func reportPointer(_ path: String?) -> String {
        path.map { "the JSON report \($0)" } ?? "the JSON report ('apply --report FILE' writes it)"
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
    /// Whether a signal stopped the run (`ApplyOutcome.stopped`), and which.
    public var stopped: Bool
    public var stopSignal: String?
    /// Whether the early stop was an origin archive changing under the run (see `ApplyOutcome`).
    public var stopIsTemporary: Bool
    public var revalidated: Int
    public var refreshed: Int
    /// What each search pack built read and skipped (`ApplyOutcome.searchPacks`).
    public var searchPacks: [SearchPackFindings]

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
        stopped = o.stopped
        stopSignal = o.stopSignal
        stopIsTemporary = o.stopIsTemporary
        revalidated = o.revalidated
        refreshed = o.refreshed
        searchPacks = o.searchPacks
    }
}
