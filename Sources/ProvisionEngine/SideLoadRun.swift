import Foundation
import ProvisionFoundation
import ProvisionExecution
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision merge DEVICE.db… --store OUT`: takes MapLibre offline databases (files, such as one
/// pulled off a device or written by `mbgl-offline`) into an existing store, by the rule devices
/// use to side-load a bundle (`OfflineDatabase.mergeSideDatabases`), and rewrites the store's
/// lock so its content fields describe the merged database. Every incoming body that would
/// change the store is checked by kind first (the executor's `Verifier`); invalid ones are
/// skipped and named, and the store keeps its own row.
public struct SideLoadRun {
    /// The side databases, as the user named them.
    public var databases: [String]
    /// `--store`: the existing store to merge into.
    public var output: String
    /// Where `merge-started` and `merge-finished` go.
    public var progress: ProgressSink

    /// What a side-load merge did.
    public struct Result {
        /// The store, as the user named it.
        public var store: String
        /// Each side database as named, with what happened to each of its regions.
        public var databases: [(name: String, regions: [SideLoadedRegion])]
        /// Each side database's incoming rows left out because their bytes are not valid for their
        /// kind, in the order of `databases`.
        public var skipped: [[SideLoadSkippedRow]] = []
        /// The store's content after the merge.
        public var content: ContentDigest
        /// The rewritten lock; nil when the store had none (and none was written).
        public var lock: LockDocument?

        /// The document `--json` prints (`Jobs/schema/merge-report.schema.json`).
        public var json: JSONValue { MergeReport.document(self) }
        /// The text summary for stdout.
        public var text: String { MergeReport.text(self) }
    }

    /// A merge of `databases` into the store at `output`, reporting to `progress`.
    public init(databases: [String], output: String, progress: ProgressSink) {
        self.databases = databases
        self.output = output
        self.progress = progress
    }

    /// Whether `inputs` name side databases (regular files) rather than shard stores
    /// (directories); throws a usage error when they mix the two.
    public static func namesSideDatabases(_ inputs: [String]) throws(ProvisionError) -> Bool {
        func isDirectory(_ name: String) -> Bool? {
            var directory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: name, isDirectory: &directory) else { return nil }
            return directory.boolValue
        }
        let kinds = inputs.map { ($0, isDirectory($0)) }
        guard let file = kinds.first(where: { $0.1 == false }) else { return false }
        if let store = kinds.first(where: { $0.1 == true }) {
            throw ProvisionError(.usage, "\(file.0) is a database file and \(store.0) a store directory: merge either "
                                 + "the shard stores of a sharded apply or offline.db files into an existing store, not both")
        }
        return true
    }

    /// Checks the store and every side database (nothing is written when one is refused), then
    /// merges them in one transaction, holding the store's writer lock, and rewrites its lock.
    public func run() throws(ProvisionError) -> Result {
        let out = StorePath(url: URL(fileURLWithPath: output))
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: out.url.path, isDirectory: &isDirectory), isDirectory.boolValue,
              out.hasDatabase else {
            throw ProvisionError(.missingInput, "no store at \(output): merging offline.db files needs an existing store "
                                 + "with an \(StoreDirectory.databaseName) (apply a job into it first)")
        }
        guard databases.count <= OfflineDatabase.maximumSideDatabases else {
            throw ProvisionError(.usage, "\(databases.count) database files given; merge at most "
                                 + "\(OfflineDatabase.maximumSideDatabases) in one call and run merge again for the rest")
        }
        let urls = try databases.map { name throws(ProvisionError) in try Self.check(name, against: out) }
        progress.emit(.sideLoadStarted(store: out.display, databases: urls.count, tiles: urls.map(\.tiles).reduce(0, +)))
        let build: StoreBuild
        do {
            build = try StoreBuild(locking: out)
        } catch {
            throw ProvisionError(store: error, context: "cannot lock the store at \(out.display)")
        }
        defer { build.release() }
        let (lock, problem) = PlanSession.readLock(out)
        if let problem {
            throw ProvisionError(.failure, "the store at \(out.display) has a \(StoreDirectory.lockName) that cannot be read "
                                 + "(\(problem)); nothing was merged")
        }
        let regions: [[SideLoadedRegion]]
        let skipped: [[SideLoadSkippedRow]]
        let content: ContentDigest
        do {
            _ = try build.recover()
            let database = try OfflineDatabase(url: out.databaseURL, epoch: lock?.epoch ?? 0, options: .init(create: false))
            (regions, skipped) = try database.mergeSideDatabases(urls.map(\.url), check: Verifier.rowCheck())
            content = try database.contentDigest()
            try database.finish()
        } catch {
            throw ProvisionError(store: error, context: "cannot merge into the store at \(out.display)")
        }
        var written: LockDocument?
        if var lock {
            lock.tileCount = content.tileCount
            lock.resourceCount = content.resourceCount
            lock.byteCount = content.byteCount
            lock.contentDigest = "sha256:" + content.digest
            lock.chunks = content.chunks
            do {
                lock.files = try BundleFiles.entries(in: out, recorded: lock)
                LockSignature.removeOutdated(in: out, rewritten: try build.writeLock(lock.fileBytes), progress: progress)
            } catch {
                throw ProvisionError(store: error, context: "merged, but cannot write the lock of the store at \(out.display)")
            }
            written = lock
        }
        for (name, rows) in zip(databases, skipped) {
            for row in rows { progress.emit(.notMerged(url: row.url, database: name, reason: row.reason)) }
        }
        progress.emit(.mergeFinished(tiles: content.tileCount, resources: content.resourceCount, bytes: content.byteCount))
        return Result(store: out.display, databases: Array(zip(databases, regions)).map { ($0.0, $0.1) },
                      skipped: skipped, content: content, lock: written)
    }

    /// Refuses a side database that is missing (66), the store's own file (64), or not a
    /// MapLibre offline database (65); returns its URL and tile rows.
    private static func check(_ name: String, against out: StorePath) throws(ProvisionError) -> (url: URL, tiles: Int) {
        let url = URL(fileURLWithPath: name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ProvisionError(.missingInput, "no offline database at \(name): the file does not exist")
        }
        func resolved(_ url: URL) -> String { url.standardizedFileURL.resolvingSymlinksInPath().path }
        if resolved(url) == resolved(out.databaseURL) {
            throw ProvisionError(.usage, "\(name) is the \(StoreDirectory.databaseName) of --store \(out.display); "
                                 + "merge another database into it")
        }
        do {
            return (url, try OfflineDatabase.checkSideDatabase(at: url))
        } catch {
            let why = ProvisionError.storeFailure(error).map { $0.code == .corrupt ? "it is not an SQLite database, or is damaged "
                + "(SQLite reports: \($0.message))" : $0.message } ?? describe(error)
            throw ProvisionError(.invalidJob, "\(name) is not a MapLibre offline database: \(why)",
                                 cause: error)
        }
    }
}
