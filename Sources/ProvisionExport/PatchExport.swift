import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision export --format patch --since OLD --out PATCH.db`: a MapLibre offline database
/// holding what a device with the bundle of the store OLD needs to hold the current store after
/// MapLibre's side-load merge (`OfflineDatabase.writePatch` says which rows and why).
///
/// Why OLD is checked first: a patch is only right against the exact rows devices have, so OLD
/// must be a store of the same job, built no later than the current one, and whole by the audit's
/// checks; and the patch is written under a temporary name beside `--out` and renamed into place
/// (`finish`), so a refusal or a failure leaves no file. Beside it goes a directory
/// (`PatchFiles`): the attribution, and the search and routing packs that changed, whole.
struct PatchExport {
    let store: StorePath
    let since: String
    let out: String
    let progress: ProgressSink

    func run() throws(ProvisionError) -> ExportResult {
        let old = StorePath(option: since, job: nil)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: old.url.path, isDirectory: &isDirectory), isDirectory.boolValue,
              old.hasDatabase, FileManager.default.fileExists(atPath: old.lockURL.path) else {
            throw ProvisionError(.missingInput, "--since \(since) is not a store: a store directory holds \(StoreDirectory.databaseName) "
                                 + "and \(StoreDirectory.lockName), as apply wrote them")
        }
        let destination = URL(fileURLWithPath: out)
        guard !ExportRun.isDirectory(out) else {
            throw ProvisionError(.usage, "--out \(out) is a directory; --format patch writes one file (PATCH.db)")
        }
        guard old.url.standardizedFileURL.resolvingSymlinksInPath() != store.url.standardizedFileURL.resolvingSymlinksInPath() else {
            throw ProvisionError(.usage, "--since \(since) is the store itself; give the store devices have")
        }
        let (current, oldLock) = try locks(old)
        try checkOld(old, lock: oldLock, current: current)
        try checkFilesDirectory(of: destination, old: old)
        let parent = destination.deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProvisionError(.cannotWriteStore, "cannot write \(out): the directory \(parent.path) does not exist")
        }
        let temporary = parent.appendingPathComponent(".\(destination.lastPathComponent).tmp-\(getpid())")
        removeTemporary(temporary)
        progress.emit(.exportStarted(store: store.display, format: ExportRun.Format.patch.rawValue, files: 1, tiles: current.tileCount))
        let contents: PatchContents
        do {
            contents = try OfflineDatabase.writePatch(current: store.databaseURL, since: old.databaseURL, to: temporary,
                                                      buildTime: current.epoch)
        } catch let refused as PatchRowNotNewer {
            removeTemporary(temporary)
            throw ProvisionError(.invalidJob, "cannot patch \(refused.url): it changed since \(since) but its modified time "
                                 + "(\(refused.newModified.map(String.init) ?? "none")) and the build time (\(current.epoch)) are not newer "
                                 + "than the old one (\(refused.oldModified.map(String.init) ?? "none")), so a device's merge would keep "
                                 + "the old bytes; rebuild the store with a later SOURCE_DATE_EPOCH")
        } catch {
            removeTemporary(temporary)
            throw ProvisionError(store: error, context: "cannot write the patch \(out)", kind: .cannotWriteStore)
        }
        let patch = ExportResult.Patch(
            path: destination.path, since: since, byteCount: Self.fileSize(temporary), fullByteCount: Self.fileSize(store.databaseURL),
            tiles: contents.tiles, resources: contents.resources, regions: contents.regions,
            newRegions: names(contents.newRegions, lock: current), droppedRegions: names(contents.droppedRegions, lock: oldLock),
            dropped: contents.droppedRows)
        return try finish(temporary, as: destination, patch: patch, files: PatchFiles(old: oldLock, current: current), lock: current)
    }

    /// Moves the written patch and the directory beside it (`files`, staged here) into place and
    /// reports them: the one place a patch's output is finished. The directory is committed first
    /// and removed again when the patch cannot be, so a failure leaves neither.
    private func finish(_ temporary: URL, as destination: URL, patch: ExportResult.Patch, files: PatchFiles,
                        lock: LockDocument) throws(ProvisionError) -> ExportResult {
        let staged: BundleDirectory
        do {
            staged = try files.stage(for: destination, store: store, lock: lock)
        } catch {
            removeTemporary(temporary)
            throw error
        }
        do {
            try staged.commit()
            do {
                try AtomicFile.replace(destination, with: temporary)
            } catch {
                // Best effort: the directory just committed goes with the patch that could not be written.
                try? FileManager.default.removeItem(at: staged.destination)
                throw error
            }
        } catch {
            staged.discard()
            removeTemporary(temporary)
            throw ProvisionError(store: error, context: "cannot write the patch \(out)", kind: .cannotWriteStore)
        }
        var patch = patch
        patch.directory = staged.destination.path
        patch.packs = files.packs
        patch.droppedPacks = files.droppedPacks
        progress.emit(.exportFinished(files: 1, tiles: patch.tiles, bytes: patch.byteCount))
        var result = ExportResult(store: store.display, format: ExportRun.Format.patch.rawValue, files: [])
        result.patch = patch
        return result
    }

    /// Refuses (64) an `--out` whose directory beside it (`PatchFiles`) would be `--out` itself,
    /// lie in either store or hold one, as for `--out` inside a store.
    private func checkFilesDirectory(of destination: URL, old: StorePath) throws(ProvisionError) {
        let directory = PatchFiles.directory(for: destination)
        guard directory.standardizedFileURL.path != destination.standardizedFileURL.path else {
            throw ProvisionError(.usage, "--out \(out) ends in .files, the name of the directory a patch's attribution and packs "
                                 + "go in beside it; give the patch another name (PATCH.db)")
        }
        let naming = "the directory \(directory.path) beside the patch (its attribution and packs)"
        let replaced = directory.standardizedFileURL.resolvingSymlinksInPath().path + "/"
        for input in [store, old] {
            try ExportRun.checkOutput(directory.path, against: input, naming: naming)
            guard !(input.url.standardizedFileURL.resolvingSymlinksInPath().path + "/").hasPrefix(replaced) else {
                throw ProvisionError(.usage, "\(naming) holds the store at \(input.display), and a patch replaces it; "
                                     + "write the patch elsewhere")
            }
        }
    }

    /// The current store's lock and OLD's; both are needed to tell their job and build time.
    private func locks(_ old: StorePath) throws(ProvisionError) -> (current: LockDocument, old: LockDocument) {
        let (current, currentProblem) = PlanSession.readLock(store)
        guard let current else {
            throw ProvisionError(.missingInput, "the store at \(store.display) has no usable \(StoreDirectory.lockName)"
                                 + "\(currentProblem.map { " (\($0))" } ?? ""); a patch needs the build time and job it records")
        }
        let (oldLock, oldProblem) = PlanSession.readLock(old)
        guard let oldLock else {
            throw ProvisionError(.invalidJob, "--since \(since) is damaged: its \(StoreDirectory.lockName) cannot be used"
                                 + "\(oldProblem.map { " (\($0))" } ?? "")")
        }
        return (current, oldLock)
    }

    /// Refuses (65) an OLD of another job, built after the current store, or that the audit finds damaged.
    private func checkOld(_ old: StorePath, lock: LockDocument, current: LockDocument) throws(ProvisionError) {
        guard lock.jobName == current.jobName else {
            throw ProvisionError(.invalidJob, "--since \(since) is a store of job '\(lock.jobName)', but the store at "
                                 + "\(store.display) is of job '\(current.jobName)'; a patch goes between builds of one job")
        }
        guard lock.epoch <= current.epoch else {
            throw ProvisionError(.invalidJob, "--since \(since) was built at \(lock.epoch) (Unix time), after the store at "
                                 + "\(store.display) (\(current.epoch)); a patch goes from an older build to a newer one")
        }
        let audit: AuditDocument
        do {
            audit = try AuditRun(store: old.url.path, verify: false, manifest: nil, context: RunContext(environment: [:], now: 0),
                                 progress: SilentProgress()).run()
        } catch {
            throw ProvisionError(.invalidJob, "--since \(since) is damaged: \(error.message)", cause: error.cause)
        }
        guard audit.isOK else {
            throw ProvisionError(.invalidJob, "--since \(since) is damaged, as 'provision audit' finds: "
                                 + audit.problems.joined(separator: "; "))
        }
    }

    /// The lock keys of region rows (a key per row, several when regions share one), else the row id.
    private func names(_ rows: [Int64], lock: LockDocument) -> [String] {
        rows.map { row in lock.regions.first { $0.rowID == row }?.key ?? "row \(row)" }
    }

    private func removeTemporary(_ temporary: URL) {
        for suffix in ["", "-journal"] {
            // Best effort: the file may not exist; a leftover temporary name is never read as a patch.
            try? FileManager.default.removeItem(atPath: temporary.path + suffix)
        }
    }

    private static func fileSize(_ url: URL) -> UInt64 {
        // A size that cannot be read is reported as 0; the patch itself was written and closed.
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
    }
}
