import Foundation
import ProvisionFoundation
import ProvisionExecution
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision plan`: what apply would change. Writes nothing, downloads no tile.
public struct PlanRun {
    /// The job, the store, `--refresh` (count what has expired), `--repair` (count the damaged rows
    /// as changes), the files the command will write (refused when they are the store's) and `--shard`
    /// (also tell this share of the job's tiles).
    public var request: RunRequest
    /// `--offline`: plan from the store's copies of the documents, fetching none.
    public var offline = false
    public var context: RunContext
    public var progress: ProgressSink

    public init(request: RunRequest, context: RunContext, progress: ProgressSink) {
        self.request = request
        self.context = context
        self.progress = progress
    }

    /// Plans; with `repair`, re-reads every stored row and counts the damaged ones (and an
    /// unreadable lock) as changes.
    public func run() throws(ProvisionError) -> (plan: Plan, session: PlanSession) {
        let (refresh, repair, shard) = (request.refresh, request.repair, request.shard)
        if let shard, context.sourceDateEpoch == nil { throw ApplyRun.unfixedBuildTime(shard, applying: false) }
        let session = try PlanSession(input: try JobInput.load(request.job), storeOption: request.store, context: context)
        try session.checkOutputs(request.outputs)
        // Damaged rows first: 'apply --repair' (and '--refresh') removes them before it plans, so
        // the plan is made without them and counts their downloads; so does any apply with the
        // rows no lock vouches for (StoreTrust) that are invalid.
        let unvouched = repair || refresh ? nil : StoreTrust.unvouchedReason(session)
        var damage: StoreDamage?
        if repair || refresh || unvouched != nil, session.store.hasDatabase, let database = try session.openForReading() {
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            do {
                damage = unvouched != nil ? try StoreTrust.invalidRows(in: database)
                    : try StoreRepair.damage(in: database, lockChunks: session.lock?.chunks ?? [], check: Verifier.rowCheck())
            } catch {
                throw ProvisionError(store: error, context: "cannot read every row of the store at \(session.store.display)")
            }
        }
        let hidden = damage?.rows.map(\.key) ?? []
        var plan = try session.plan(refresh: refresh, offline: offline, hiding: hidden, shard: shard, progress: progress).plan
        if let shard, let pack = plan.stylePacks.first(where: { $0.glyphPolicy == .used }) {
            throw ProvisionError(.usage, "--shard \(shard) cannot split style pack '\(pack.id)': its \"glyphs\": \"used\" ranges "
                                 + "come from the labels of all the region's tiles, which no shard holds; use \"ideographs-local\" "
                                 + "or \"all\" for a sharded apply")
        }
        if let shard, let share = plan.shard?.share {
            plan.notes.append(PlanNote(subject: "shard \(shard)", message: "this shard holds tiles \(share.tiles.lowerBound)–"
                + "\(max(share.tiles.lowerBound, share.tiles.upperBound - 1)) of the job's \(grouped(share.totalTiles)) in key order "
                + "(\(plural(share.tiles.count, "tile"))); \(grouped(share.missingTiles)) of them are not in this store yet; "
                + "the counts above are this shard's (the whole job would download \(grouped(plan.tilesToDownload)))"))
        }
        if let unvouched, let damage {
            // Rows no apply of this store recorded: the next apply checks them and fetches the invalid ones again.
            plan.repairRows = damage.rows.count
            plan.unverifiedStore = unvouched
            plan.notes.append(StoreTrust.note(reason: unvouched, damage: damage, removed: false))
        } else if repair, let damage {
            plan.repairRows = damage.rows.count
            if let note = damage.note(fixing: false) { plan.notes.append(note) }
        }
        if repair { SearchPackPlanning.recheck(&plan.searchPacks, directory: session.store.url) }
        if repair { RoutingPackRepair.recheck(&plan.routingPacks, records: session.lock?.routingPacks ?? [], directory: session.store.url) }
        if repair, session.store.hasDatabase, session.lock == nil, FileManager.default.fileExists(atPath: session.store.lockURL.path) {
            // An unreadable lock is rewritten by the next apply: a change too.
            plan.repairRows += 1
            plan.notes.append(PlanNote(subject: "repair", message: "provision.lock.json is unreadable; 'apply --repair' rewrites it"))
        }
        return (plan, session)
    }

    /// The plan saved for `apply PLAN`: the plan, where its job and store are, and the store's
    /// state now, so a store that changes in between is noticed.
    ///
    /// - Throws: `failure` when a file of the store cannot be read to fingerprint it.
    public static func saved(_ plan: Plan, session: PlanSession, jobPath: String) throws(ProvisionError) -> SavedPlan {
        SavedPlan(plan: plan, jobPath: URL(fileURLWithPath: jobPath).standardizedFileURL.path,
                  storePath: session.store.url.standardizedFileURL.path, storeDigest: try session.store.digest())
    }
}

extension StorePath {
    /// `stateDigest`, a file that cannot be read a `failure` naming it.
    func digest() throws(ProvisionError) -> String {
        do {
            return try stateDigest()
        } catch {
            throw ProvisionError(store: error, context: "cannot fingerprint the store at \(display)", kind: .failure)
        }
    }
}
