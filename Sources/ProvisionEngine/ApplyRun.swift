import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore

/// `provision apply`: plans (or loads a saved plan), then brings the store to it.
public struct ApplyRun {
    /// What the command line asked for.

    /// What an apply did.
    public struct Result {
        public var plan: Plan
        public var outcome: ApplyOutcome
        public var report: ApplyReport
        /// The style packs whose origin refused the credentials, when one stopped the run.
        public var refusedPacks: [String]
    }

    public var request: RunRequest
    public var context: RunContext
    public var progress: ProgressSink
    /// Polled before each new download: once true, no further download starts, the ones in
    /// flight are committed, and the apply ends as it would partially.
    public var shouldStop: @Sendable () -> Bool = { false }
    /// The name of the signal that asked for the stop (`SIGINT`, `SIGTERM`), for the report.
    public var stopSignal: @Sendable () -> String? = { nil }
    /// `--sign-key`: signs every lock the apply writes (`LockSignature`).
    public var signingKey: Ed25519.PrivateKey?

    public init(request: RunRequest, context: RunContext, progress: ProgressSink) {
        self.request = request
        self.context = context
        self.progress = progress
    }

    /// Runs the apply. An existing store is locked (and what a killed apply left recovered)
    /// before planning; a new one is created only once the plan succeeded, so a failed plan
    /// writes nothing.
    public func run() throws(ProvisionError) -> Result {
        var build: StoreBuild?
        defer { build?.release() }
        var repairNote: PlanNote?
        var unverified = false
        var shard: Shard?
        var (plan, session, planSeconds) = try obtainPlan(build: &build, repairNote: &repairNote, unverified: &unverified,
                                                          shard: &shard)
        if let repairNote { plan.notes.append(repairNote) }
        if request.repair { SearchPackPlanning.recheck(&plan.searchPacks, directory: session.store.url) }
        let held: StoreBuild
        if let build {
            held = build
        } else {
            held = try lock(session.store)
            build = held
            try recoverStore(held)
        }
        if request.repair { try RoutingPackStep.prepareRepair(&plan, session: session) }
        if shard != nil, let pack = plan.stylePacks.first(where: { $0.glyphPolicy == .used }) {
            throw ProvisionError(.usage, "--shard cannot split style pack '\(pack.id)': its \"glyphs\": \"used\" ranges come "
                                 + "from the labels of all the region's tiles, which no shard holds; use \"ideographs-local\" "
                                 + "or \"all\" for a sharded apply")
        }
        if let shard, plan.shard == nil { plan.shard = try Self.shardPlan(plan, shard: shard, session: session) }
        let (executed, lock, applied, wrote) = try execute(plan, session: session, build: held, rewrite: unverified)
        var outcome = executed
        if outcome.stopped { outcome.stopSignal = stopSignal() }
        plan = applied
        // A store the apply left as it was is the one the plan read: its footprint, when every byte
        // of it was stored, is the store's, without reading every row again.
        let planned = wrote ? nil : Footprint(plan: plan).flatMap { $0.isExact ? $0 : nil }
        let report = ApplyReport(plan: session.document(plan), outcome: outcome, planSeconds: planSeconds, lock: lock,
                                 footprint: planned ?? Self.footprint(of: session.store, lock: lock,
                                                                      tiles: wrote ? outcome.tileSharing : nil))
        progress.emit(.applyFinished(status: report.status, downloaded: outcome.downloaded, failed: outcome.failed))
        return Result(plan: plan, outcome: outcome, report: report,
                      refusedPacks: outcome.stopURL.map { plan.stylePacks(using: $0) } ?? [])
    }

    /// Downloads and writes: the applier stages into `offline.db` and streams the next file
    /// that replaces it; then the lock is written.
    /// Returns what the apply did, the lock, the plan as applied, and whether a new database was written.
    /// `rewrite`: the store's rows were not vouched for by its lock, so the database is written
    /// anew (every row stamped with this build's time) even when the plan changes nothing.
    private func execute(_ plan: Plan, session: PlanSession, build: StoreBuild, rewrite: Bool) throws(ProvisionError)
        -> (ApplyOutcome, LockDocument, Plan, wrote: Bool) {
        let database: OfflineDatabase
        do {
            database = try build.openStaging(epoch: plan.epoch)
        } catch {
            throw ProvisionError(store: error, context: "cannot open the store at \(session.store.display) for writing")
        }
        let applier = Applier(store: database, fetcher: session.fetcher,
                              configuration: .init(flushWindow: context.flushWindow))
        let share = plan.shard.map { LockDocument.ShardEntry(shard: $0.shard, tiles: $0.share.tiles, totalTiles: $0.share.totalTiles) }
        applier.shardTiles = share?.tiles
        let progress = self.progress
        applier.shouldStop = shouldStop
        // A shard's row wants the share's tiles of it, not the whole row's.
        var shardWanted: [String: Int] = [:]
        for (index, region) in plan.regions.enumerated() where plan.shard != nil {
            let counts = plan.tileTotals(of: index)
            shardWanted[region.key] = counts.add + counts.keep
        }
        applier.observer = ApplyProgress(progress: progress, shardWanted: shardWanted)
        applier.resolveGlyphs = { plan, store, all in try GlyphResolution.resolve(plan, store: store, all: all) }
        // A search pack that cannot be built fails the apply once the store and its lock are written.
        var searchFailure: ProvisionError?
        var rewroteLock = false
        var result: (ApplyOutcome, LockDocument, Plan, wrote: Bool)
        do {
            // A plan that changes nothing leaves every byte of the store as it is (a shard's store
            // lacks the other shards' tiles, so its plan always has changes: it is rebuilt).
            let writes = plan.hasDatabaseChanges || plan.refresh != nil || !plan.refetchTemplates.isEmpty || share != nil || rewrite
            let builder = writes ? try build.beginNextStore(epoch: plan.epoch) : nil
            var outcome = try applier.apply(plan, building: builder)
            var plan = plan
            plan.resolveGlyphs(outcome.glyphResources)
            progress.finish()
            if writes { progress.emit(.phase("flush")) } else if session.lock == nil { progress.emit(.phase("digest")) }
            let content = try build.finish(epoch: plan.epoch, unchanged: writes ? nil : session.lock?.content)
            // Nothing written: the store keeps the time of the build that wrote it.
            let epoch = writes ? plan.epoch : (session.lock?.epoch ?? plan.epoch)
            var lock = LockDocument(plan: plan, outcome: outcome, content: content, epoch: epoch)
            lock.shard = share
            lock.files = try BundleFiles.entries(in: build.path, recorded: writes ? nil : session.lock)
            lock.attribution = plan.attribution(job: session.input.job).entries
            (searchFailure, outcome.searchPacks) = SearchPackStep(session: session, progress: progress).run(plan, lock: &lock,
                                                                                                           buildTime: plan.epoch)
            // A routing pack that cannot be written fails the apply the same way, its previous extract kept.
            searchFailure = RoutingPackStep(session: session, progress: progress).run(plan, lock: &lock) ?? searchFailure
            rewroteLock = try build.writeLock(lock.fileBytes)
            result = (outcome, lock, plan, writes)
        } catch {
            progress.finish()
            build.abandon()
            let explained = ProvisionError.storeFailure(error)?.code == .diskFull  // its message already says what is kept
            throw ProvisionError(.cannotWriteStore,
                                 explained ? describe(error)
                                     : "apply stopped: \(describe(error)); the store keeps every batch committed before the error",
                                 cause: error)
        }
        if let signingKey {
            try LockSignature.write(signing: result.1.fileBytes, with: signingKey, in: build.path)
            progress.emit(.lockSigned(lock: build.path.lockURL.path, signature: LockSignature.url(in: build.path).path))
        } else {
            LockSignature.removeOutdated(in: build.path, rewritten: rewroteLock, progress: progress)
        }
        if let searchFailure { throw searchFailure }
        return result
    }

    /// What each region of the store the apply left takes, read while this apply still holds the
    /// store; nil when it cannot be read (the apply itself succeeded: its report is not lost for it).
    /// `tiles`, the tile part the apply summed as it wrote the file, spares reading every tile row.
    static func footprint(of store: StorePath, lock: LockDocument, tiles: ContentSharing? = nil) -> Footprint? {
        // The footprint only adds to the report of an apply that succeeded: a store that cannot be read here leaves it out.
        guard let database = try? store.openForReading(epoch: lock.epoch) else { return nil }
        defer { try? database.close() }
        guard let sharing = try? database.contentSharing(tiles: tiles), let regions = try? database.regions() else { return nil }
        return Footprint(sharing: sharing, regions: regions, lock: lock)
    }

    /// What the apply of `shard` does to the store (read after recovery, before any download).
    static func shardPlan(_ plan: Plan, shard: Shard, session: PlanSession) throws(ProvisionError) -> ShardPlan {
        let database = try session.openForReading()
        // Best effort: closing a read-only connection.
        defer { try? database?.close() }
        do {
            return try plan.shardPlan(shard, store: database)
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(session.store.display)", kind: .failure)
        }
    }

    /// The refusal of a shard without a fixed build time: each shard would stamp its rows with
    /// its own clock, and merge refuses shards built at different times.
    static func unfixedBuildTime(_ shard: Shard, applying: Bool) -> ProvisionError {
        ProvisionError(.usage, "--shard \(shard) needs a fixed build time: set SOURCE_DATE_EPOCH (Unix seconds, e.g. the "
                       + "commit time from 'git log -1 --format=%ct') to the same value for every shard and the merge; "
                       + "shards built at different clock times record different build times and 'provision merge' "
                       + "refuses them (exit 65)" + (applying ? ", or apply a plan saved by 'SOURCE_DATE_EPOCH=… "
                       + "provision plan JOB --shard \(shard) --out FILE', which carries its build time" : ""))
    }

    /// Makes this process the store's one writer (naming the holder when another apply runs).
    private func lock(_ store: StorePath) throws(ProvisionError) -> StoreBuild {
        do {
            let build = try StoreBuild(locking: store)
            if let previous = build.owner.previousHolder {
                progress.emit(.takingOver(previousHolder: previous))
            }
            return build
        } catch {
            throw ProvisionError(store: error, context: "cannot lock the store at \(store.display)")
        }
    }

    private func recoverStore(_ build: StoreBuild) throws(ProvisionError) {
        do {
            let taken = try build.recover()
            if taken > 0 { progress.emit(.recovered(tiles: taken)) }
        } catch {
            throw ProvisionError(store: error, context: "cannot recover the store at \(build.path.display)")
        }
    }

    /// Removes the damaged rows of the locked store before it is planned; a note saying what was
    /// removed, or nil when nothing was damaged.
    private func removeDamage(_ build: StoreBuild, session: PlanSession) throws(ProvisionError) -> PlanNote? {
        guard build.path.hasDatabase else { return nil }
        progress.emit(.checkingForDamage)
        let outcome: StoreRepair.Outcome
        do {
            outcome = try StoreRepair.removeDamage(in: build, epoch: session.epoch, lockChunks: session.lock?.chunks ?? [], check: Verifier.rowCheck())
        } catch {
            throw ProvisionError(store: error, context: "cannot repair the store at \(build.path.display)")
        }
        var notes: [PlanNote] = []
        if let problem = outcome.rebuiltFrom {
            let note = PlanNote(subject: "repair", message: "offline.db was damaged (SQLite: \(problem)); it was rebuilt from "
                                + "the \(plural(outcome.salvagedRows, "row")) that could still be read, and the rest is fetched again")
            progress.emit(.rebuilt(note))
            notes.append(note)
        }
        if let removed = outcome.damage.note(fixing: true) {
            progress.emit(.repaired(rows: outcome.damage.rows.count, unusable: outcome.damage.unusable.count, note: removed))
            notes.append(removed)
        }
        return notes.last
    }

    /// Checks every row of a store whose lock does not vouch for them (`StoreTrust`) by kind and
    /// removes the invalid ones, so the apply fetches them again; the note saying so.
    private func removeInvalid(_ build: StoreBuild, session: PlanSession, reason: String) throws(ProvisionError) -> PlanNote {
        progress.emit(.checkingRows(reason: reason))
        let outcome: StoreRepair.Outcome
        do {
            outcome = try StoreRepair.removeDamage(in: build, epoch: session.epoch, lockChunks: [], check: Verifier.rowCheck())
        } catch {
            throw ProvisionError(store: error, context: "cannot check the rows of the store at \(build.path.display)")
        }
        let note = StoreTrust.note(reason: outcome.rebuiltFrom.map { "\(reason), and SQLite reported it damaged (\($0))" } ?? reason,
                                   damage: outcome.damage, removed: true)
        progress.emit(.repaired(rows: outcome.damage.rows.count, unusable: outcome.damage.unusable.count, note: note))
        return note
    }

    /// The plan to carry out: loaded from a saved plan file (refused when its job or store changed
    /// since), or computed from a job file. An existing store is locked, recovered and (with
    /// --repair or --refresh) repaired before planning; for a
    /// saved plan the store is compared with the one it was planned against in between, since the
    /// plan saw the store before recovery.
    /// `shard` is the share the apply holds: the saved plan's (a different `--shard` is refused),
    /// else `--shard`, which needs `SOURCE_DATE_EPOCH`.
    private func obtainPlan(build: inout StoreBuild?, repairNote: inout PlanNote?, unverified: inout Bool,
                            shard: inout Shard?) throws(ProvisionError) -> (Plan, PlanSession, Double) {
        func prepare(_ session: PlanSession) throws(ProvisionError) {
            guard build == nil, FileManager.default.fileExists(atPath: session.store.url.path) else { return }
            build = try lock(session.store)
        }
        func recover(_ session: PlanSession) throws(ProvisionError) {
            guard let build else { return }
            try recoverStore(build)
            let unvouched = StoreTrust.unvouchedReason(session)
            unverified = unvouched != nil
            if request.repair || request.refresh {
                repairNote = try removeDamage(build, session: session)
            } else if let unvouched {
                repairNote = try removeInvalid(build, session: session, reason: unvouched)
            }
        }
        let path = request.job
        // Read once: a saved plan may be larger than a job file may be, so the job cap comes after.
        let contents: JobFileContents
        switch JobLoader.read(argument: path, maxBytes: JSONValue.ParseLimits.standard.maxBytes) {
        case .success(let read): contents = read
        case .failure(let failure): throw JobInput.error(failure, path: path)
        }
        // Not JSON, or not a saved plan: read as a job file below, whose loader reports what is wrong.
        if let json = try? JSONValue.parse(contents.data), SavedPlan.isSavedPlan(json) {
            let saved: SavedPlan
            do {
                saved = try SavedPlan(json: json)
            } catch {
                throw ProvisionError(.invalidJob, "\(path) is not a usable saved plan: \(error)")
            }
            if let asked = request.shard, asked != saved.shard {
                throw ProvisionError(.usage, "--shard \(asked) differs from the saved plan \(path), which was planned for "
                                     + (saved.shard.map { "shard \($0)" } ?? "the whole job (no --shard)") + "; apply it without "
                                     + "--shard, or save a plan of that shard with 'provision plan JOB --shard \(asked) --out FILE'")
            }
            shard = saved.shard
            // The plan fixes the build time: the rows, their expiry and the lock take its epoch.
            var context = self.context
            context.sourceDateEpoch = saved.plan.epoch
            let input = try JobInput.load(saved.jobPath)
            guard input.digest == saved.plan.jobDigest else {
                throw ProvisionError(.failure, "the saved plan \(path) is stale: the job file \(saved.jobPath) changed since it was "
                                     + "planned (\(saved.plan.jobDigest.prefix(19))… → \(input.digest.prefix(19))…); run 'provision plan' again")
            }
            let session = try PlanSession(input: input, storeOption: request.store ?? saved.storePath, context: context)
            try session.checkOutputs(request.outputs)
            try prepare(session)
            guard try session.store.digest() == saved.storeDigest else {
                throw ProvisionError(.failure, "the saved plan \(path) is stale: the store at \(session.store.display) changed since "
                                     + "it was planned; run 'provision plan' again")
            }
            try recover(session)
            progress.emit(.planLoaded(path: path))
            return (saved.plan, session, 0)
        }
        if let asked = request.shard, context.sourceDateEpoch == nil { throw Self.unfixedBuildTime(asked, applying: true) }
        shard = request.shard
        let session = try PlanSession(input: try JobInput.load(contents, path: path), storeOption: request.store, context: context)
        try session.checkOutputs(request.outputs)
        try prepare(session)
        try recover(session)
        let planned = try session.plan(refresh: request.refresh, shard: shard, progress: progress)
        return (planned.plan, session, planned.seconds)
    }
}

/// The applier's observer of an apply run: forwards what the applier tells to the progress sink.
private struct ApplyProgress: ApplyObserver {
    let progress: ProgressSink
    /// A shard's row wants the share's tiles of it, by region key (empty without a shard).
    let shardWanted: [String: Int]

    func phase(_ phase: ApplyPhase) { progress.emit(.phase(phase.rawValue)) }

    func downloads(_ p: DownloadProgress) {
        progress.emit(.downloads(done: p.completed, total: p.requested, bytes: p.bytes, failed: p.failed))
    }

    func failed(url: String, reason: String) { progress.emit(.failure(url: url, reason: reason)) }

    func regionLinked(key: String, linkedTiles linked: Int, wantedTiles: Int, complete: Bool) {
        let wanted = shardWanted[key] ?? wantedTiles
        progress.emit(.region(key: key, tiles: linked, wanted: wanted, complete: complete))
    }
}
