import Foundation
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore

/// `provision apply JOB`: plans, then brings the store to the job's desired state.
struct ApplyCommand {
    let job: String
    let store: String?
    let reportPath: String?
    let refresh: Bool
    let repair: Bool
    let options: CommonOptions
    let console: Console
    let environment: [String: String]

    func run() throws(CLIError) -> ExitCode {
        let progress = ProgressReporter(console: console, mode: options.progress)
        if let reportPath { try checkWritableOutput(reportPath, flag: "--report") }
        var owner: StoreLock?
        defer { owner?.release() }
        var repairNote: PlanNote?
        // An existing store is locked (and what a killed apply left recovered) before planning;
        // a new one is created only once the plan succeeded, so a failed plan writes nothing.
        var (plan, session, planSeconds) = try obtainPlan(progress: progress, lock: { session throws(CLIError) in
            if owner == nil, FileManager.default.fileExists(atPath: session.store.url.path) {
                owner = try ApplyCommand.lockStore(session.store, progress: progress)
            }
        }, recover: { session throws(CLIError) in
            if owner != nil {
                try ApplyCommand.recoverStore(session.store, progress: progress)
                if repair || refresh { repairNote = try StoreRepair.removeDamage(session, progress: progress) }
            }
        })
        if let repairNote { plan.notes.append(repairNote) }
        if owner == nil {
            owner = try ApplyCommand.lockStore(session.store, progress: progress)
            try ApplyCommand.recoverStore(session.store, progress: progress)
        }
        let directory: StoreDirectory
        let database: OfflineDatabase
        do {
            directory = try StoreDirectory(url: session.store.url, create: true)
            database = try OfflineDatabase(url: directory.databaseURL, epoch: plan.epoch)
            try database.tuneForBulkWrites()
        } catch {
            throw CLIError(.cannotWriteStore, "cannot open the store at \(session.store.display) for writing: \(describe(error))")
        }

        let stops = StopSignals { number in
            progress.event("stopping", JSONObject([("signal", .int(Int(number)))]),
                           text: "\nStopping: finishing the downloads in flight and committing them (signal again to quit now)")
        }
        // PROVISION_FLUSH_WINDOW_MS: how long a finished download may wait to be committed (tests set 0).
        let flushWindow = environment["PROVISION_FLUSH_WINDOW_MS"].flatMap(Double.init).map { $0 / 1000 } ?? 0.1
        let applier = Applier(store: database, fetcher: session.fetcher, configuration: .init(flushWindow: flushWindow))
        applier.shouldStop = { stops.isStopping }
        applier.onRegion = { key, linked, wanted, complete in
            progress.event("region", JSONObject([("key", .string(key)), ("tiles", .int(linked)), ("wanted", .int(wanted)),
                                                 ("complete", .bool(complete))]))
        }
        applier.onPhase = { phase in progress.event("phase", JSONObject([("phase", .string(phase))])) }
        applier.onProgress = { p in
            progress.downloads(done: p.completed, total: p.requested, bytes: p.bytes, failed: p.failed)
        }
        var outcome: ApplyOutcome
        let lock: LockDocument
        var builder: CanonicalStoreWriter?
        do {
            // A plan that changes nothing leaves every byte of the store as it is.
            if plan.hasChanges || plan.refresh != nil || !plan.refetchTemplates.isEmpty {
                builder = try CanonicalStoreWriter(url: ApplyCommand.canonicalURL(directory), epoch: plan.epoch)
            }
            outcome = try applier.apply(plan, building: builder)
            progress.finish()
            let content: ContentDigest
            if let builder {
                progress.event("phase", JSONObject([("phase", .string("flush"))]))
                content = try builder.finish()
                try database.close()
                try LockFile.replace(directory.databaseURL, with: builder.url)
            } else {
                try database.finish()
                if let previous = session.lock {
                    // Nothing was written: the content is what the lock already recorded.
                    content = ContentDigest(tileCount: previous.tileCount, resourceCount: previous.resourceCount,
                                            byteCount: previous.byteCount,
                                            digest: String(previous.contentDigest.dropFirst("sha256:".count)),
                                            chunks: previous.chunks)
                } else {
                    progress.event("phase", JSONObject([("phase", .string("digest"))]))
                    let final = try OfflineDatabase(url: directory.databaseURL, epoch: plan.epoch,
                                                    options: .init(readOnly: true, create: false))
                    defer { try? final.close() }
                    content = try final.contentDigest()
                }
            }
            // Nothing written: the store keeps the time of the build that wrote it.
            let epoch = builder == nil ? (session.lock?.epoch ?? plan.epoch) : plan.epoch
            lock = ApplyCommand.lockDocument(plan: plan, outcome: outcome, content: content, epoch: epoch)
            let lockBytes = lock.json.data(.prettySorted) + Data("\n".utf8)
            if (try? Data(contentsOf: directory.lockURL)) != lockBytes {
                try LockFile.writeAtomically(lockBytes, to: directory.lockURL)
            }
        } catch {
            progress.finish()
            if let builder {
                // What the new file committed goes back into the store (unless the disk is full);
                // the file itself is deleted either way.
                builder.abandon()
                _ = try? database.takeInPartialBuild(at: builder.url)
                OfflineDatabase.removeFiles(at: builder.url)
            }
            try? database.close()
            let explained = (error as? StoreError)?.code == .diskFull  // its message already says what is kept
            throw CLIError(.cannotWriteStore,
                           explained ? describe(error)
                               : "apply stopped: \(describe(error)); the store keeps every batch committed before the error",
                           cause: String(describing: error))
        }

        let report = ApplyReport(plan: PlanDocument(plan: plan, store: session.store.display, limits: session.input.job.limits),
                                 outcome: outcome, planSeconds: planSeconds, lock: lock)
        if let reportPath {
            do {
                try LockFile.writeAtomically(report.json.data(.prettySorted) + Data("\n".utf8), to: URL(fileURLWithPath: reportPath))
            } catch {
                throw CLIError(.cannotWriteStore, "cannot write the report to \(reportPath): \(describe(error))")
            }
        }
        progress.event("apply-finished", JSONObject([
            ("status", .string(report.status)), ("downloaded", .int(outcome.downloaded)), ("failed", .int(outcome.failed)),
        ]))
        console.out(options.format == .json ? report.json.serialized(.prettySorted) + "\n" : report.text)
        if let number = stops.receivedSignal { return number == SIGTERM ? .terminated : .interrupted }
        if let stop = outcome.stopMessage {
            let packs = outcome.stopURL.map { plan.stylePacks(using: $0) } ?? []
            let subject = packs.isEmpty ? "" : " (style pack\(packs.count == 1 ? "" : "s") \(packs.map { "'\($0)'" }.joined(separator: ", ")))"
            console.err("error: \(stop)\(subject); what was verified before is kept\n")
            return .upstreamUnavailable
        }
        if !outcome.isComplete && !outcome.failures.isEmpty {
            console.err(ApplyCommand.failureLines(outcome))
        }
        return outcome.isComplete ? .success : .partial
    }

    /// The stderr lines of a partial apply: which URLs failed and why (the first ten), so a CI log
    /// shows them without the report.
    static func failureLines(_ outcome: ApplyOutcome) -> String {
        let shown = outcome.failures.prefix(10)
        var text = "error: \(outcome.failed) download\(outcome.failed == 1 ? "" : "s") failed; run apply again to retry them:\n"
        for failure in shown { text += "  \(failure.url): \(failure.reason)\n" }
        if outcome.failed > shown.count {
            let more = outcome.failed - shown.count
            let listed = min(outcome.failures.count, 100) - shown.count
            text += listed > 0 ? "  … and \(more) more (\(listed) of them in the JSON report)\n" : "  … and \(more) more\n"
        }
        return text
    }

    /// Makes this process the store's one writer (exit 73 naming the holder when another apply
    /// runs).
    static func lockStore(_ store: StoreDirectoryPath, progress: ProgressReporter) throws(CLIError) -> StoreLock {
        try preparing(store) {
            let owner = try StoreLock.acquire(directory: try StoreDirectory(url: store.url, create: true).url)
            if let previous = owner.previousHolder {
                progress.event("phase", JSONObject([("phase", .string("recover"))]),
                               text: "Taking over the store from a run that was killed (\(previous)); resuming its work.")
            }
            return owner
        }
    }

    /// Puts back what a killed apply left, holding the store's lock: rolls back a write it left
    /// half done, and takes the tiles its new file had committed into the store, unlinked, so the
    /// plan counts them as stored and nothing committed is fetched again.
    static func recoverStore(_ store: StoreDirectoryPath, progress: ProgressReporter) throws(CLIError) {
        try preparing(store) {
            let directory = try StoreDirectory(url: store.url, create: true)
            if FileManager.default.fileExists(atPath: directory.databaseURL.path) {
                _ = try OfflineDatabase.recoverInterruptedWrite(at: directory.databaseURL)
            }
            let partial = canonicalURL(directory)
            guard FileManager.default.fileExists(atPath: partial.path) else { return }
            let database = try OfflineDatabase(url: directory.databaseURL, epoch: 0)
            defer { try? database.close() }
            let taken = try database.takeInPartialBuild(at: partial)
            if taken > 0 {
                progress.event("phase", JSONObject([("phase", .string("recover"))]),
                               text: "Took back \(taken) tiles a killed apply had written.")
            }
        }
    }

    /// Runs a step that prepares the store, reporting its failure as "cannot write the store" (73).
    private static func preparing<T>(_ store: StoreDirectoryPath, _ step: () throws -> T) throws(CLIError) -> T {
        do {
            return try step()
        } catch let error as StoreError {
            throw CLIError(.cannotWriteStore, error.message, cause: String(describing: error))
        } catch {
            throw CLIError(.cannotWriteStore, "cannot prepare the store at \(store.display): \(error)")
        }
    }

    /// The plan to carry out: loaded from a saved plan file (refused when its job or store changed
    /// since), or computed from a job file. `lock` and `recover` run before planning; for a saved
    /// plan the store is compared with the one it was planned against in between, since the
    /// plan saw the store before recovery.
    private func obtainPlan(progress: ProgressReporter, lock: (PlanSession) throws(CLIError) -> Void,
                            recover: (PlanSession) throws(CLIError) -> Void) throws(CLIError) -> (Plan, PlanSession, Double) {
        if let data = FileManager.default.contents(atPath: job), let json = try? JSONValue.parse(data),
           SavedPlan.isSavedPlan(json) {
            let saved: SavedPlan
            do {
                saved = try SavedPlan(json: json)
            } catch {
                throw CLIError(.invalidJob, "\(job) is not a usable saved plan: \(error)")
            }
            let input = try JobInput.load(saved.jobPath)
            guard input.digest == saved.plan.jobDigest else {
                throw CLIError(.failure, "the saved plan \(job) is stale: the job file \(saved.jobPath) changed since it was planned "
                               + "(\(saved.plan.jobDigest.prefix(19))… → \(input.digest.prefix(19))…); run 'provision plan' again")
            }
            let session = try PlanSession(input: input, storeOption: store ?? saved.storePath, environment: environment)
            try lock(session)
            let current = StoreState.digest(of: session.store)
            guard current == saved.storeDigest else {
                throw CLIError(.failure, "the saved plan \(job) is stale: the store at \(session.store.display) changed since it was planned; "
                               + "run 'provision plan' again")
            }
            try recover(session)
            progress.event("plan-loaded", JSONObject([("path", .string(job))]), text: "Applying the saved plan \(job)")
            return (saved.plan, session, 0)
        }
        let computed = try PlanCommand.computePlan(job: job, store: store, environment: environment, progress: progress,
                                                   refresh: refresh, beforePlanning: { session throws(CLIError) in
                                                       try lock(session)
                                                       try recover(session)
                                                   })
        return (computed.plan, computed.session, computed.seconds)
    }

    /// Where an apply writes the store's next `offline.db` before renaming it into place.
    static func canonicalURL(_ directory: StoreDirectory) -> URL {
        directory.url.appendingPathComponent(StoreDirectory.databaseName + ".canonical")
    }

    /// The lock recording what this apply left in the store.
    static func lockDocument(plan: Plan, outcome: ApplyOutcome, content: ContentDigest, epoch: Int64) -> LockDocument {
        let incomplete = Set(outcome.incompleteRegions)
        let regions = plan.regions.compactMap { region -> LockDocument.RegionEntry? in
            guard let rowID = outcome.regionRows[region.key] else { return nil }
            return LockDocument.RegionEntry(
                key: region.key, regionID: region.regionID, stylePack: region.stylePackID, rowID: rowID,
                definitionDigest: "sha256:" + SHA256.hex(region.definition),
                expectedTiles: region.zoomChanges.map {
                    TileCount(urlTemplate: $0.urlTemplate, zoom: $0.zoom, count: $0.counts.add + $0.counts.keep)
                },
                expectedResources: region.resources.wanted.count, isComplete: !incomplete.contains(region.key))
        }
        let packs = plan.stylePacks.map { pack in
            var digests: [String: String] = [:]
            for source in pack.sources {
                if let url = source.tileJSONURL, let body = plan.documents[url] { digests[url] = "sha256:" + SHA256.hex(body.data) }
            }
            return LockDocument.PackEntry(id: pack.id, style: pack.styleURL,
                                          styleDigest: plan.documents[pack.styleURL].map { "sha256:" + SHA256.hex($0.data) },
                                          sources: pack.sources, tileJSONDigests: digests)
        }
        return LockDocument(jobName: plan.jobName, jobDigest: plan.jobDigest, epoch: epoch, stylePacks: packs,
                            regions: regions, tileCount: content.tileCount, resourceCount: content.resourceCount,
                            byteCount: content.byteCount, contentDigest: "sha256:" + content.digest, chunks: content.chunks)
    }
}
