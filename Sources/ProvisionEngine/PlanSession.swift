import Foundation
import ProvisionFoundation
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore
import TileMath

/// What a run takes from its environment, read once by the command line.
public struct RunContext: Sendable {
    /// The process environment: access tokens and `${VAR}` keys, curl's CA variables, proxies.
    public var environment: [String: String]
    /// The clock (Unix seconds): `PROVISION_NOW` in tests, else the wall clock.
    public var now: Int64
    /// `SOURCE_DATE_EPOCH`, when set.
    public var sourceDateEpoch: Int64?
    /// How long a finished download may wait in memory before it is committed
    /// (`PROVISION_FLUSH_WINDOW_MS`; end-to-end tests set 0 so a kill finds every finished tile
    /// committed without waiting for time to pass).
    public var flushWindow: Double

    public init(environment: [String: String], now: Int64, sourceDateEpoch: Int64? = nil, flushWindow: Double = 0.1) {
        self.environment = environment
        self.now = now
        self.sourceDateEpoch = sourceDateEpoch
        self.flushWindow = flushWindow
    }
}

/// The shared front half of `plan`, `apply` and `audit --manifest`: the job, its store, its
/// origins, and the plan resolved from its documents.
public final class PlanSession {
    /// The job, its URLs in canonical form (secret query parameters dropped).
    public let input: JobInput
    /// The keys the requests carry.
    public let credentials: Credentials
    /// The store.
    public let store: StorePath
    /// Where bytes come from: the job's origins, else the network.
    public let fetcher: OriginRouter
    /// The store's lock, if it has one this version reads.
    public let lock: LockDocument?
    /// Why a lock file that is there could not be used, if so.
    public let lockProblem: String?
    /// The time of this build (`StorePath.buildTime`), also the "now" HTTP expiry times are
    /// computed from, so that nothing in the store depends on when it was built.
    public let epoch: Int64
    let context: RunContext
    let archives: [MBTilesArchive]
    /// The routing packs' tile extracts opened so far, by pack id: a remote one's index is read
    /// once, by the plan, and its version pinned for the apply's tile reads.
    var tileExtracts: [String: TileExtractSource] = [:]

    /// Resolves credentials (usage error when a key is missing), the store path (a file there is
    /// refused), the build time, and opens the job's origins.
    public init(input: JobInput, storeOption: String?, context: RunContext) throws(ProvisionError) {
        let credentials: Credentials
        do {
            credentials = try Credentials.resolve(job: input.job, environment: context.environment)
        } catch {
            throw ProvisionError(.usage, error.description)
        }
        self.credentials = credentials
        var input = input
        input.job = credentials.canonical(input.job)
        self.input = input
        self.context = context
        let store = StorePath(option: storeOption, job: input.job)
        do {
            try store.checkIsDirectoryOrAbsent()
        } catch {
            throw ProvisionError(.cannotWriteStore, describe(error), cause: error)
        }
        self.store = store
        (lock, lockProblem) = Self.readLock(store)
        let epoch = store.buildTime(sourceDateEpoch: context.sourceDateEpoch, clock: context.now, lockEpoch: lock?.epoch,
                                    lockIsIncomplete: lock?.hasIncompleteRegions ?? false)
        self.epoch = epoch
        var opened: [MBTilesArchive] = []
        do {
            let routes = try OriginRouter.routes(for: input.job.origins) { url in
                let archive = try MBTilesArchive(url: url)
                opened.append(archive)
                return archive
            }
            var configuration = HTTPFetcher.Configuration(
                settings: input.job.download, rewrite: { url in credentials.requestURL(url) },
                buildTime: epoch, trust: TLSTrust(environment: context.environment), secrets: credentials.secrets)
            configuration.carriesCredential = { url in credentials.secrets.leaks(in: url) || credentials.secrets.redact(url) != url }
            let http = try HTTPFetcher(configuration: configuration)
            fetcher = OriginRouter(routes: routes, http: http, secrets: credentials.secrets)
            try fetcher.openRemoteArchives()
        } catch {
            if ProvisionError.storeFailure(error) != nil {
                throw ProvisionError(.missingInput, "cannot open an origin archive: \(describe(error))", cause: error)
            }
            throw ProvisionError(store: error, context: "cannot set up downloads", kind: .failure)
        }
        archives = opened
    }

    /// The lock of a store, if there is one this version reads, and why one that is there
    /// cannot be used.
    public static func readLock(_ store: StorePath) -> (LockDocument?, String?) {
        do {
            guard let json = try store.readLockJSON() else { return (nil, nil) }
            guard let lock = LockDocument(json: json) else { return (nil, "not a lock this version of provision reads") }
            return (lock, nil)
        } catch {
            return (nil, describe(error))
        }
    }

    /// Opens the store's database read-only for planning; nil when the store has none yet.
    public func openForReading() throws(ProvisionError) -> OfflineDatabase? {
        guard store.hasDatabase else { return nil }
        do {
            return try store.openForReading(epoch: epoch)
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
    }

    /// Resolves the job's documents (one an origin fails to deliver is `upstreamUnavailable`, 69,
    /// even when the store holds a copy: a plan that cannot reach upstream cannot say "no
    /// changes") and plans against the store; with `refresh`, also counts what has expired by the
    /// clock. With `offline`, the documents are the store's copies (none is fetched) and the plan
    /// says that drift was not checked. The store is read as the apply will find it
    /// (`PlannedStore`): with what a killed apply left taken in, and without the `hiding` rows (the
    /// damage a repair removes first). With `shard`, the plan also holds what that shard's apply
    /// does (`Plan.shard`), unless a pack's glyphs are `"used"` (which no shard can split: the
    /// caller refuses it).
    public func plan(refresh: Bool = false, offline: Bool = false, hiding: [ChunkKey] = [], shard: Shard? = nil,
                     progress: ProgressSink) throws(ProvisionError) -> (plan: Plan, seconds: Double) {
        let started = Date()
        progress.emit(.planStarted(job: input.path, jobName: input.job.name, store: store.display))
        let opened = try openForReading()
        // Best effort: closing a read-only connection.
        defer { try? opened?.close() }
        let view = try opened.map { base throws(ProvisionError) in try plannedStore(base, hiding: hiding) }
        // The store itself when the view would not differ (its reads are the planner's fast path).
        let database: StoreInventory? = view?.changesTheStore == true ? view : opened
        let fetcher = self.fetcher
        var resolver = DocumentResolver(job: input.job, credentials: credentials, fetch: { requests in
            var results: [String: Result<FetchedBody, FetchFailure>] = [:]
            var iterator = requests.makeIterator()
            fetcher.fetchAll(&iterator) { request, result in results[request.url] = result }
            return results
        }, storedCopy: { url in (try? database?.resourceData(url: url)) ?? nil })  // unreadable: no copy; the fetch's failure is told
        resolver.offline = offline
        var planInput: PlanInput
        do {
            planInput = try resolver.resolve(jobDigest: input.digest, epoch: epoch)
        } catch {
            throw ProvisionError(error)
        }
        planInput.originTileSizes = originTileSizes(planInput)
        planInput.rowsInLockFile = lock?.rowsByKey ?? [:]
        planInput.pinnedDigests = lock?.pinnedDigests ?? [:]
        planInput.notes = buildTimeNotes() + planInput.notes
        var plan: Plan
        do {
            plan = try Planner.plan(planInput, store: database)
            plan.driftChecked = !offline
            if refresh {
                // "Now" for expiry is the clock: it decides what to ask upstream, never what is stored.
                let expired = try opened?.expiredCounts(before: context.now) ?? (resources: 0, tiles: 0)
                plan.refresh = RefreshPlan(before: context.now, resources: expired.resources, tiles: expired.tiles)
            }
            if let shard, !plan.stylePacks.contains(where: { $0.glyphPolicy == .used }) {
                plan.shard = try plan.shardPlan(shard, store: database)
            }
        } catch {  // a PlanError says for itself that the job is invalid (65)
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
        plan.searchPacks = try searchPackPlans(plan)
        plan.notes += try attributionNotes(plan)
        plan.notes += SearchPackPlanning.notes(plan.searchPacks)
        if shard != nil, !plan.searchPacks.isEmpty {
            plan.notes.append(PlanNote(subject: "search packs", message: "a shard holds only its share of the tiles, so its "
                                       + "apply builds no search pack; 'provision merge' builds "
                                       + listed(plan.searchPacks.map(\.pack.file)) + " once, from the merged store"))
        }
        plan.routingPacks = try routingPackPlans(shard: shard)
        plan.notes += RoutingPackPlanning.notes(plan.routingPacks)
        if let note = patchNote(plan, store: opened) { plan.notes.append(note) }
        let seconds = Date().timeIntervalSince(started)
        progress.emit(.planFinished(hasChanges: plan.hasChanges, tilesToDownload: plan.appliedTilesToDownload, seconds: seconds))
        return (plan, seconds)
    }

    /// `database` (this store's) as the next apply will find it: see `PlannedStore`.
    func plannedStore(_ database: OfflineDatabase, hiding: [ChunkKey] = []) throws(ProvisionError) -> PlannedStore {
        do {
            return try PlannedStore(base: database, store: store, epoch: epoch, hidden: hiding)
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
    }

    /// A note for each source that declares no attribution; with `limits.requireAttribution`
    /// and no `attribution` of the job's own to credit them, such sources fail the plan (65).
    func attributionNotes(_ plan: Plan) throws(ProvisionError) -> [PlanNote] {
        let job = input.job
        let collected = plan.attribution(job: job)
        if job.limits.requireAttribution, job.attribution == nil, !collected.missing.isEmpty {
            let one = collected.missing.count == 1
            throw ProvisionError(.invalidJob, "limits.requireAttribution is set and \(listed(collected.missing.map(\.subject))) "
                                 + (one ? "declares" : "declare") + " no attribution (no \"attribution\" in "
                                 + (one ? "its" : "their") + " TileJSON or style); give the job an \"attribution\" that "
                                 + "credits " + (one ? "it" : "them") + ", or drop the requirement")
        }
        return collected.notes(jobHasAttribution: job.attribution != nil)
    }

    /// One line when the build time comes from the clock: the bytes then depend on when it ran.
    func buildTimeNotes() -> [PlanNote] {
        guard context.sourceDateEpoch == nil else { return [] }
        let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
        return [PlanNote(subject: "build time", message: "SOURCE_DATE_EPOCH is not set, so rows without an upstream "
                         + "Last-Modified are stamped with this build's time (\(time)) and two builds of the same job "
                         + "differ in those times; set it (e.g. to the commit time) for byte-identical bundles")]
    }

    /// Refuses an output (`--out`, `--report`) that would overwrite a file of the store (its
    /// database, its lock, the directory itself): a usage error, found before any work.
    public func checkOutputs(_ outputs: [(flag: String, path: String)]) throws(ProvisionError) {
        try Self.checkOutputs(outputs, store: store)
    }

    /// Refuses an output that would overwrite a file of `store`: a usage error.
    static func checkOutputs(_ outputs: [(flag: String, path: String)], store: StorePath) throws(ProvisionError) {
        let protected = [store.url, store.databaseURL, store.lockURL].map { $0.standardizedFileURL.resolvingSymlinksInPath() }
        for (flag, path) in outputs {
            let url = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
            if let hit = protected.first(where: { $0 == url }) {
                throw ProvisionError(.usage, "\(flag) \(path) would overwrite \(hit == store.url.standardizedFileURL.resolvingSymlinksInPath() ? "the store directory" : "the store's " + hit.lastPathComponent) (\(store.display)); write it elsewhere")
            }
        }
    }

    /// The plan document of `plan` against this store.
    public func document(_ plan: Plan) -> PlanDocument {
        PlanDocument(plan: plan, store: store.display, limits: input.job.limits)
    }
}
