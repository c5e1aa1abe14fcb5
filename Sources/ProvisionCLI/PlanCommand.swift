import Foundation
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore

/// `provision plan JOB`: what apply would change. Writes nothing, downloads no tile.
struct PlanCommand {
    let job: String
    let store: String?
    let detailedExitCode: Bool
    let out: String?
    let refresh: Bool
    let repair: Bool
    let options: CommonOptions
    let console: Console
    let environment: [String: String]

    func run() throws(CLIError) -> ExitCode {
        let progress = ProgressReporter(console: console, mode: options.progress)
        if let out { try checkWritableOutput(out, flag: "--out") }
        var computed = try PlanCommand.computePlan(job: job, store: store, environment: environment, progress: progress,
                                                   refresh: refresh)
        if repair, FileManager.default.fileExists(atPath: computed.session.store.databaseURL.path) {
            let database = try computed.session.openForReading(epoch: computed.session.epoch)
            defer { try? database?.close() }
            if let database {
                let damage = try StoreRepair.damage(in: database, lock: computed.lock, store: computed.session.store)
                computed.plan.repairRows = damage.rows.count
                if let note = StoreRepair.note(damage, fixing: false) { computed.plan.notes.append(note) }
                if computed.lock == nil, FileManager.default.fileExists(atPath: computed.session.store.lockURL.path) {
                    // An unreadable lock is rewritten by the next apply: a change too.
                    computed.plan.repairRows += 1
                    computed.plan.notes.append(PlanNote(subject: "repair", message: "provision.lock.json is unreadable; "
                                                        + "'apply --repair' rewrites it"))
                }
            }
        }
        let doc = PlanDocument(plan: computed.plan, store: computed.session.store.display, limits: computed.session.input.job.limits)
        if let out {
            let saved = SavedPlan(plan: computed.plan, jobPath: URL(fileURLWithPath: job).standardizedFileURL.path,
                                  storePath: computed.session.store.url.standardizedFileURL.path,
                                  storeDigest: StoreState.digest(of: computed.session.store))
            do {
                try AtomicFile.write(saved.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: out))
            } catch {
                throw CLIError(.failure, "cannot write the plan to \(out): \(describe(error))")
            }
            progress.event("plan-saved", JSONObject([("path", .string(out))]), text: "Saved the plan to \(out); run 'provision apply \(out)' to carry it out.")
        }
        switch options.format {
        case .json: console.out(doc.json.serialized(.prettySorted) + "\n")
        case .markdown: console.out(PlanRenderer.markdown(doc))
        case .text: console.out(PlanRenderer.text(doc))
        }
        return detailedExitCode && computed.plan.hasChanges ? .changesPresent : .success
    }

    /// Loads the job, resolves its documents and plans against the store. Shared with apply.
    static func computePlan(job path: String, store storeOption: String?, environment: [String: String],
                            progress: ProgressReporter, refresh: Bool = false,
                            beforePlanning: (PlanSession) throws(CLIError) -> Void = { _ in }) throws(CLIError)
        -> (plan: Plan, session: PlanSession, lock: LockDocument?, seconds: Double)
    {
        let started = Date()
        let input = try JobInput.load(path)
        let session = try PlanSession(input: input, storeOption: storeOption, environment: environment)
        try beforePlanning(session)
        progress.event("plan-started", JSONObject([("job", .string(path)), ("store", .string(session.store.display))]),
                       text: "Planning \(input.job.name) against \(session.store.display)")
        let lock = session.lock
        let epoch = session.epoch
        let database = try session.openForReading(epoch: epoch)
        defer { try? database?.close() }
        let planInput = try session.resolve(store: database, lock: lock, epoch: epoch)
        var plan: Plan
        do {
            plan = try Planner.plan(planInput, store: database)
            if refresh {
                // "Now" for expiry is the clock: it decides what to ask upstream, never what is stored.
                let now = PlanSession.now(environment)
                let expired = try database?.expiredCounts(before: now) ?? (resources: 0, tiles: 0)
                plan.refresh = RefreshPlan(before: now, resources: expired.resources, tiles: expired.tiles)
            }
        } catch let error as PlanError {
            throw CLIError(.invalidJob, error.description)
        } catch {
            throw CLIError(.cannotWriteStore, "cannot read the store at \(session.store.display): \(describe(error))")
        }
        let seconds = Date().timeIntervalSince(started)
        progress.event("plan-finished", JSONObject([
            ("hasChanges", .bool(plan.hasChanges)), ("tilesToDownload", .int(plan.tilesToDownload)),
            ("seconds", .double((seconds * 1000).rounded() / 1000)),
        ]))
        return (plan, session, lock, seconds)
    }
}
