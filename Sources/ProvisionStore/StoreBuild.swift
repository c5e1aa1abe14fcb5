import Foundation
import ProvisionModel

/// One apply's hold on a store: the writer lock, the recovery of what a killed apply left, the
/// database it stages into, and the next file that replaces `offline.db` at the end.
///
/// Order matters for kill safety: the store is locked before anything is read for writing, what
/// a killed run left is taken back before planning (so nothing committed is fetched again), and
/// the new file replaces the old one by a rename, after which the lock document is written.
public final class StoreBuild {
    /// The store.
    public let path: StorePath
    /// The writer lock, held until `release()`.
    public let owner: ApplyLease
    private var staging: OfflineDatabase?
    private var builder: NextStoreWriter?

    /// Locks the store (creating its directory); throws `.locked` naming the holder when another
    /// apply runs. `owner.previousHolder` names a killed run whose lock was taken over.
    public init(locking path: StorePath) throws {
        self.path = path
        owner = try ApplyLease.acquire(directory: try StoreDirectory(url: path.url, create: true).url)
    }

    deinit { release() }

    /// Puts back what a killed apply left: rolls back a write it left half done, and takes the
    /// tiles its new file had committed into `offline.db`, unlinked, so the plan counts them as
    /// stored. Returns how many tiles were taken back.
    public func recover() throws -> Int {
        if path.hasDatabase { _ = try OfflineDatabase.recoverInterruptedWrite(at: path.databaseURL) }
        guard FileManager.default.fileExists(atPath: path.partialBuildURL.path) else { return 0 }
        let database = try OfflineDatabase(url: path.databaseURL, epoch: 0)
        // Best effort: the partial build was taken in and committed by the call below.
        defer { try? database.close() }
        return try database.takeInPartialBuild(at: path.partialBuildURL)
    }

    /// Opens `offline.db` (creating it) as the staging store of this build.
    public func openStaging(epoch: Int64) throws -> OfflineDatabase {
        let database = try OfflineDatabase(url: path.databaseURL, epoch: epoch)
        try database.tuneForBulkWrites()
        staging = database
        return database
    }

    /// Starts the next file that will replace `offline.db`.
    public func beginNextStore(epoch: Int64) throws -> NextStoreWriter {
        let writer = try NextStoreWriter(url: path.partialBuildURL, epoch: epoch)
        builder = writer
        return writer
    }

    /// Ends the build: the next file (when one was begun) is finished and renamed over
    /// `offline.db`; else the staging store is closed as it is. Returns the content digest of the
    /// store now: the new file's, else `unchanged` (what the lock recorded), else hashed afresh.
    public func finish(epoch: Int64, unchanged: ContentDigest?) throws -> ContentDigest {
        if let builder {
            let content = try builder.finish()
            try staging?.close()
            staging = nil
            try AtomicFile.replace(path.databaseURL, with: builder.url)
            self.builder = nil
            return content
        }
        try staging?.finish()
        staging = nil
        if let unchanged { return unchanged }
        let final = try OfflineDatabase(url: path.databaseURL, epoch: epoch, options: .init(readOnly: true, create: false))
        // Best effort: closing a read-only connection after the digest is read.
        defer { try? final.close() }
        return try final.contentDigest()
    }

    /// Gives up after an error: what the next file committed goes back into the staging
    /// store (unless the disk is full), and the file is deleted either way.
    public func abandon() {
        if let builder {
            builder.abandon()
            _ = try? staging?.takeInPartialBuild(at: builder.url)  // best effort: the next apply downloads what is lost
            OfflineDatabase.removeFiles(at: builder.url)
            self.builder = nil
        }
        // Best effort: abandoning; what the staging file committed is taken in by the next apply.
        try? staging?.close()
        staging = nil
    }

    /// Writes the lock document, atomically, unless the file already holds these bytes; returns
    /// whether it wrote (a signature of the earlier bytes then no longer holds).
    @discardableResult
    public func writeLock(_ bytes: Data) throws -> Bool {
        guard (try? Data(contentsOf: path.lockURL)) != bytes else { return false }  // an unreadable lock is rewritten
        try AtomicFile.write(bytes, to: path.lockURL)
        return true
    }

    /// Releases the writer lock (once; later calls do nothing).
    public func release() {
        owner.release()
    }
}
