import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision merge STORE… --store OUT`: joins the stores of a sharded apply (`apply --shard
/// I/N`) into the store the apply of the whole job writes, byte for byte.
///
/// Why it can: the shards share every plan-derived row (regions, resources) and their tiles are
/// contiguous runs of the job's key order, so replaying them through the next-store writer
/// in the whole apply's order (`ShardReplay`) writes the same file, and the shards' lock with
/// the merged content is the whole apply's lock. The search packs, which no shard builds, are
/// built once from the shards' tiles (`buildSearchPacks`), as the whole apply builds them; each
/// routing pack's extract is written from the shards' shares of its tiles (`mergeRoutingPacks`).
public struct MergeRun {
    /// The shard stores, as the user named them, in any order.
    public var stores: [String]
    /// `--store`: the store to write (created when missing; its database and lock are replaced).
    public var output: String
    public var progress: ProgressSink

    /// What a merge wrote.
    public struct Result {
        /// The merged store's lock, as written.
        public var lock: LockDocument
        /// The merged store.
        public var store: String
        /// How many shards were merged.
        public var shards: Int

        /// The text summary for stdout.
        public var text: String {
            "Merged \(plural(shards, "shard")) of \(lock.jobName) into \(store): \(plural(lock.tileCount, "tile")), "
                + "\(plural(lock.resourceCount, "resource")), \(ByteFormat.string(lock.byteCount)).\n"
                + lock.searchPacks.map { "Search pack \($0.id): \($0.file), \(plural($0.entries, "entry", "entries")).\n" }.joined()
                + lock.routingPacks.map { "Routing pack \($0.id): \($0.file), \(plural($0.tiles.count, "graph tile")).\n" }.joined()
        }
    }

    /// One input store and the share of the job it holds.
    struct Input {
        /// As the user named it.
        var name: String
        var path: StorePath
        var lock: LockDocument
        var entry: LockDocument.ShardEntry

        /// `NAME (shard I/N)`.
        var label: String { "\(name) (shard \(entry.shard))" }
    }

    public init(stores: [String], output: String, progress: ProgressSink) {
        self.stores = stores
        self.output = output
        self.progress = progress
    }

    /// Checks every input (nothing is written when one is refused), then writes the merged
    /// database and its lock into the output store, holding its writer lock.
    public func run() throws(ProvisionError) -> Result {
        let out = StorePath(url: URL(fileURLWithPath: output))
        try checkOutput(out)
        let inputs = try Self.order(try stores.map { name throws(ProvisionError) in try Self.read(name) })
        let first = inputs[0]
        progress.emit(.mergeStarted(store: out.display, shards: inputs.count, tiles: first.entry.totalTiles, jobName: first.lock.jobName))
        let created = !FileManager.default.fileExists(atPath: out.url.path)
        let build: StoreBuild
        do {
            build = try StoreBuild(locking: out)
        } catch {
            // Best effort: removing the directory this run created; the error below is what matters.
            if created { try? FileManager.default.removeItem(at: out.url) }
            throw ProvisionError(store: error, context: "cannot lock the store at \(out.display)")
        }
        let lock: LockDocument
        do {
            defer { build.release() }
            do {
                lock = try write(inputs, into: build)
            } catch {
                build.abandon()
                throw error
            }
        } catch {
            // Best effort: removing the directory this run created; the error below is what matters.
            if created { try? FileManager.default.removeItem(at: out.url) }
            if ProvisionError.storeFailure(error)?.code == .invalidInput {
                throw ProvisionError(.invalidJob, "cannot merge: \(describe(error))", cause: error)
            }
            throw ProvisionError(store: error, context: "cannot write the merged store at \(out.display)")
        }
        progress.emit(.mergeFinished(tiles: lock.tileCount, resources: lock.resourceCount, bytes: lock.byteCount))
        return Result(lock: lock, store: out.display, shards: inputs.count)
    }

    /// Replays the shards into the output's next file, renames it over `offline.db` and
    /// writes the lock: the shards' lock, whole (no shard, every region complete), with the
    /// merged content.
    private func write(_ inputs: [Input], into build: StoreBuild) throws -> LockDocument {
        let epoch = inputs[0].lock.epoch
        let writer = try build.beginNextStore(epoch: epoch)
        try ShardReplay(shards: inputs.map(\.path), tileCounts: inputs.map(\.lock.tileCount)).run(into: writer)
        let packs = try buildSearchPacks(inputs, into: build.path, epoch: epoch)
        defer { packs?.discard() }
        let routing = try mergeRoutingPacks(inputs, into: build.path)
        defer { routing.files.discard() }
        let content = try build.finish(epoch: epoch, unchanged: nil)
        var lock = inputs[0].lock
        lock.shard = nil
        for index in lock.regions.indices { lock.regions[index].isComplete = true }
        lock.tileCount = content.tileCount
        lock.resourceCount = content.resourceCount
        lock.byteCount = content.byteCount
        lock.contentDigest = "sha256:" + content.digest
        lock.chunks = content.chunks
        lock.searchPacks = try packs?.place() ?? []
        try routing.files.place(routing.records.map(\.file))
        lock.routingPacks = routing.records
        lock.files = try BundleFiles.entries(in: build.path, recorded: nil)
        LockSignature.removeOutdated(in: build.path, rewritten: try build.writeLock(lock.fileBytes), progress: progress)
        return lock
    }

    /// Refuses an output that is one of the inputs (usage) or a file (cannot write).
    private func checkOutput(_ out: StorePath) throws(ProvisionError) {
        func resolved(_ url: URL) -> String { url.standardizedFileURL.resolvingSymlinksInPath().path }
        let target = resolved(out.url)
        if let input = stores.first(where: { resolved(URL(fileURLWithPath: $0)) == target }) {
            throw ProvisionError(.usage, "--store \(output) is the input \(input); merge into another directory")
        }
        do {
            try out.checkIsDirectoryOrAbsent()
        } catch {
            throw ProvisionError(store: error, context: "cannot write the merged store")
        }
    }
}
