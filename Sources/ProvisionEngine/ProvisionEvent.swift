import Foundation
import ProvisionModel
import ProvisionStore

/// One thing that happened while a command ran, as values: no JSON and no English here. The
/// command line's views render each case, a line for people and an NDJSON event for
/// `--progress json` (`Jobs/schema/events.schema.json`).
public enum ProvisionEvent: Sendable, Equatable {
    // Planning.
    /// Planning began: the job file as named, its `name`, and the store.
    case planStarted(job: String, jobName: String, store: String)
    /// Planning ended.
    case planFinished(hasChanges: Bool, tilesToDownload: Int, seconds: Double)
    /// A saved plan is applied instead of a job file.
    case planLoaded(path: String)
    /// The plan was saved to `path` (`plan --out`).
    case planSaved(path: String)

    // Taking over and repairing a store before its apply.
    /// The store's writer lock was taken from a run that was killed (`previousHolder` names it).
    case takingOver(previousHolder: ApplyLease.Holder)
    /// The tiles a killed apply had written were taken back.
    case recovered(tiles: Int)
    /// Every stored row is re-read for damage (`--repair`, `--refresh`).
    case checkingForDamage
    /// `offline.db` was damaged and rebuilt from the rows that could be read; `note` says so.
    case rebuilt(PlanNote)
    /// Every stored row is checked before reuse, since the lock does not vouch for them (`reason`).
    case checkingRows(reason: String)
    /// Damaged or invalid rows were removed; `note` is the plan's note saying so.
    case repaired(rows: Int, unusable: Int, note: PlanNote)

    // Applying.
    /// The applier began a step (`regions`, `resources`, `tiles`, `refresh`, `glyphs`, `links`,
    /// `flush`, `digest`).
    case phase(String)
    /// Download progress.
    case downloads(done: Int, total: Int, bytes: Int64, failed: Int)
    /// A download that failed for good.
    case failure(url: String, reason: String)
    /// A region row was linked: `tiles` of the `wanted` tiles.
    case region(key: String, tiles: Int, wanted: Int, complete: Bool)
    /// A signal asked for a graceful stop.
    case stopping(signal: Int32)
    /// A search pack's file was built from the stored tiles (`built`) or kept as its tiles are unchanged.
    case searchPack(id: String, file: String, built: Bool, entries: Int, tiles: Int, bytes: Int64, seconds: Double)
    /// A routing pack's extract was written from the graph tiles kept and `fetched` (`built`), or
    /// kept as it was; `tiles` it holds, `absent` cells the source has no tile of (404).
    case routingPack(id: String, file: String, built: Bool, tiles: Int, fetched: Int, absent: Int, bytes: Int64, seconds: Double)
    /// The apply ended with the report's `status`.
    case applyFinished(status: String, downloaded: Int, failed: Int)

    // Audit, validation, pictures.
    /// The lock was signed: `signature` written beside `lock` (`provision sign`, `apply --sign-key`).
    case lockSigned(lock: String, signature: String)
    /// A writer rewrote the lock (apply without `--sign-key`, merge), so the signature of its old
    /// bytes beside it was removed: `provision sign` signs the new lock.
    case signatureRemoved(lock: String, signature: String)
    /// The signature beside the lock is the trusted key's (`audit --trusted-key`), checked before the digests.
    case signatureVerified(lock: String, signature: String)
    /// The audit ended.
    case auditFinished(whole: Bool, ok: Bool, regions: Int, tiles: Int)
    /// Every job file was validated.
    case validateFinished([JobCheck])
    /// A coverage picture was written: the `kind` of map (`plan`, `audit`), `html` or `svg`.
    case coverageWritten(path: String, kind: String, format: String, zooms: [Int], cells: Int, bytes: Int)

    // Merging.
    /// The shards of `jobName` are merged into `store`.
    case mergeStarted(store: String, shards: Int, tiles: Int, jobName: String)
    /// Offline database files are merged into `store`.
    case sideLoadStarted(store: String, databases: Int, tiles: Int)
    /// A row of an offline database that was not merged, and why.
    case notMerged(url: String, database: String, reason: String)
    /// The merge ended.
    case mergeFinished(tiles: Int, resources: Int, bytes: Int64)

    // Exporting.
    /// Archives of `format` are written.
    case exportStarted(store: String, format: String, files: Int, tiles: Int)
    /// A bundle of `stylePacks` style packs and `files` tilesets is written to `out`.
    case bundleStarted(store: String, out: String, stylePacks: Int, files: Int, tiles: Int)
    /// One archive was written.
    case exportFile(path: String, source: String, tiles: Int, distinct: Int, bytes: UInt64)
    /// The export ended.
    case exportFinished(files: Int, tiles: Int, bytes: UInt64)
    /// The export lacks what the store was asked to hold (`reason`).
    case partialExport(reason: String)
}

/// What `provision validate` found in one job file.
public struct JobCheck: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case valid(regions: Int, stylePacks: Int)
        case invalid([Diagnostic])
        /// The file could not be read: where, and why.
        case unreadable(location: String, reason: String)
    }

    /// The file as named (`<stdin>` for `-`).
    public var path: String
    public var outcome: Outcome

    public init(path: String, outcome: Outcome) {
        self.path = path
        self.outcome = outcome
    }

    /// Loads and checks the job file `argument` names.
    public init(argument: String) {
        path = argument == JobLoader.standardInputArgument ? JobLoader.standardInputName : argument
        switch JobLoader.load(argument: argument) {
        case .success(let job): outcome = .valid(regions: job.regions.count, stylePacks: job.stylePacks.count)
        case .invalid(let diagnostics): outcome = .invalid(diagnostics)
        case .unreadable(let location, let reason): outcome = .unreadable(location: location, reason: reason)
        }
    }
}
