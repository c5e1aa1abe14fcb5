import Foundation

/// What an apply did: the executor's result, rendered by reports.
public struct ApplyOutcome: Sendable {
    /// A download that failed for good.
    public struct Failure: Equatable, Sendable {
        public var url: String
        public var reason: String

        public init(url: String, reason: String) {
            self.url = url
            self.reason = reason
        }
    }

    /// Resources the apply set out to download: wanted by a region and not in the store.
    public var plannedResources = 0
    /// Tiles the apply set out to download: not in the store, or fetched again because their
    /// TileJSON changed upstream.
    public var plannedTiles = 0
    /// Of the planned downloads, those started; the rest were not attempted because the run
    /// was stopped (a signal, or an origin refusing with 401/403).
    public var attempted = 0
    /// Objects requested (tiles and resources, revalidations included).
    public var requested = 0
    /// Objects verified and written.
    public var downloaded = 0
    /// Objects that failed after retries.
    public var failed = 0
    /// Payload bytes written.
    public var bytesDownloaded: Int64 = 0
    /// Extra attempts made after transient failures.
    public var retries = 0
    /// The first failures (at most 100), for the report.
    public var failures: [Failure] = []
    /// Failures counted by reason.
    public var failureCounts: [String: Int] = [:]
    /// What each search pack built by this apply read and skipped, in job order (kept packs have none).
    public var searchPacks: [SearchPackFindings] = []
    /// Region rows by key (`region/pack`) after the apply.
    public var regionRows: [String: Int64] = [:]
    /// Keys of rows missing some wanted tile or resource.
    public var incompleteRegions: [String] = []
    /// Tile links made.
    public var linkedTiles = 0
    /// The tiles of the new file summed per set of region rows linking them, with their stored
    /// bytes (as `OfflineDatabase.contentSharing()` reads them back); nil when no file was written.
    public var tileSharing: ContentSharing?
    /// Region rows deleted.
    public var removedRegions = 0
    /// Tiles and resources deleted because no region used them any more.
    public var prunedTiles = 0
    public var prunedResources = 0
    /// Expired objects the origin confirmed unchanged (304): kept without a rewrite.
    public var revalidated = 0
    /// Expired objects the origin sent anew (200): replaced.
    public var refreshed = 0
    /// Tiles the origin did not have, stored empty under `download.missingTiles: "skip"`
    /// (counted in `downloaded` too).
    public var missingTiles = 0
    /// Why downloading stopped early (an origin refused with 401/403, or an archive changed), without secrets.
    public var stopMessage: String?
    /// The canonical URL whose refusal stopped the run, when one did.
    public var stopURL: String?
    /// Whether the early stop came from an origin that changed under the run (a PMTiles archive
    /// answering with another ETag or size): the apply is partial and the next one reads the new
    /// version, where a refusal (401/403) needs the user first.
    public var stopIsTemporary = false
    /// Whether the apply was stopped (SIGINT/SIGTERM) before every download was started.
    public var stopped = false
    /// The signal that stopped the apply (`SIGINT`, `SIGTERM`), when the command line says which.
    public var stopSignal: String?
    /// Wall-clock seconds the apply took (reports only, never the store).
    public var seconds: Double = 0
    /// The glyph resources the apply found the labels of `"glyphs": "used"` rows need, by row
    /// key (rows whose plan left them to the apply; `Plan.resolveGlyphs` adds them to a plan).
    public var glyphResources: [String: [ResourceRef]] = [:]

    public init() {}

    /// Resources and tiles the apply set out to download.
    public var planned: Int { plannedResources + plannedTiles }

    /// Planned downloads never started because the run was stopped.
    public var notAttempted: Int { max(0, planned - attempted) }

    /// Whether every wanted object is in place.
    public var isComplete: Bool { failed == 0 && incompleteRegions.isEmpty && !stopped && stopMessage == nil }

    /// Records a failure.
    public mutating func recordFailure(url: String, reason: String) {
        failed += 1
        failureCounts[reason, default: 0] += 1
        if failures.count < 100 { failures.append(Failure(url: url, reason: reason)) }
    }
}
