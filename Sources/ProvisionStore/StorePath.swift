import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel

/// Where a store lives and the files in it, before anything is opened: `--store`, else the
/// job's `store`, else `./store`.
public struct StorePath: Equatable, Sendable {
    /// The store directory.
    public let url: URL

    /// The store `option` names (`--store`), else the job's, else `./store`. An option that names
    /// an existing `offline.db` file means the store directory holding it.
    public init(option: String?, job: Job?) {
        if let option {
            let named = URL(fileURLWithPath: option)
            var isDirectory: ObjCBool = false
            if named.lastPathComponent == StoreDirectory.databaseName,
               FileManager.default.fileExists(atPath: named.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                url = named.deletingLastPathComponent()
            } else {
                url = named
            }
        } else if let store = job?.store {
            url = store
        } else {
            url = URL(fileURLWithPath: "store")
        }
    }

    /// A store at `url`.
    public init(url: URL) { self.url = url }

    /// `offline.db`.
    public var databaseURL: URL { url.appendingPathComponent(StoreDirectory.databaseName) }
    /// `provision.lock.json`.
    public var lockURL: URL { url.appendingPathComponent(StoreDirectory.lockName) }
    /// Where an apply writes the next `offline.db` before renaming it into place.
    public var partialBuildURL: URL { url.appendingPathComponent(StoreDirectory.databaseName + ".canonical") }
    /// The writer lock's owner file, present while an apply runs or after one was killed.
    public var ownerURL: URL { url.appendingPathComponent(ApplyLease.fileName) }
    /// The path as the user will recognise it.
    public var display: String { url.standardizedFileURL.path }

    /// Whether the store has a database yet.
    public var hasDatabase: Bool { FileManager.default.fileExists(atPath: databaseURL.path) }

    /// Whether an apply is running or was killed here (its owner file or partial build is left).
    public var isInterrupted: Bool {
        [partialBuildURL, ownerURL].contains { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The longest store directory path (in bytes, symlinks resolved) whose files SQLite opens:
    /// its unix VFS refuses a database whose path is over 504 bytes (512 with `-journal`), and the
    /// longest name opened in a store is `offline.db.canonical`.
    public static let maxPathBytes = 504 - "/\(StoreDirectory.databaseName).canonical".utf8.count

    /// Throws, naming the path and the limit, when the store's path is too long for SQLite to open
    /// its database (`maxPathBytes`).
    public func checkPathLength() throws {
        let resolved = url.standardizedFileURL.resolvingSymlinksInPath().path
        let bytes = resolved.utf8.count
        guard bytes > Self.maxPathBytes else { return }
        throw StoreError(.io, "the store path is \(bytes) bytes long\(resolved == display ? "" : " (as \(resolved))"); "
                         + "SQLite opens no database under a path over 504 bytes, so a store directory's path may be at "
                         + "most \(Self.maxPathBytes) bytes: give --store a shorter path", path: display)
    }

    /// Throws when the path exists and is not a directory (a store path that is a file), or is
    /// too long for SQLite (`checkPathLength`).
    public func checkIsDirectoryOrAbsent() throws {
        try checkPathLength()
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw StoreError(.io, "the store path is a file, not a directory; give --store (or the job's \"store\") a directory",
                             path: display)
        }
    }

    /// The files that are not an `offline.db` or a lock (a journal, an owner file, anything a
    /// user put there), sorted.
    ///
    /// - Throws: `StoreError(.io)` when the directory cannot be listed: an audit must not say
    ///   "nothing unexpected" of a directory it could not read.
    public func unexpectedFiles() throws -> [String] {
        try StoreDirectory(url: url, create: false).listUnexpectedFiles()
    }

    /// Opens the database read-only; a journal a killed apply left is rolled back first (when
    /// no apply runs, else `.locked`), as the next apply would.
    public func openForReading(epoch: Int64) throws -> OfflineDatabase {
        do {
            return try OfflineDatabase(url: databaseURL, epoch: epoch, options: .init(readOnly: true, create: false))
        } catch let error as StoreError where error.code == .hotJournal {
            let owner = try ApplyLease.acquire(directory: url)
            defer { owner.release() }
            _ = try OfflineDatabase.recoverInterruptedWrite(at: databaseURL)
            return try OfflineDatabase(url: databaseURL, epoch: epoch, options: .init(readOnly: true, create: false))
        }
    }

    /// The lock document's JSON, nil when there is none; throws when it cannot be read.
    public func readLockJSON() throws -> JSONValue? {
        try AtomicFile.readJSON(from: lockURL)
    }

    /// sha256 over the bytes of `offline.db` and `provision.lock.json` ("absent" for a missing
    /// file): what a saved plan records to notice a store that changed since.
    ///
    /// - Throws: `StoreError(.io)` when a file that is there cannot be read: a digest of part of
    ///   it, or of "absent", could match a store that changed.
    public func stateDigest() throws -> String {
        var hash = SHA256()
        for url in [databaseURL, lockURL] {
            hash.update(url.lastPathComponent + "\n")
            guard FileManager.default.fileExists(atPath: url.path) else {
                hash.update("absent\n")
                continue
            }
            do {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }  // best effort: closing a file only read, every byte of it hashed
                while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(chunk) }
            } catch {
                throw StoreError(.io, "cannot read \(url.lastPathComponent) to fingerprint the store: \(error.localizedDescription)",
                                 path: url.path)
            }
        }
        return "sha256:" + hash.finalizeHex()
    }

    /// The time of the build about to run: `sourceDateEpoch` when set (the reproducible-builds
    /// convention); else the time of an unfinished build this one resumes (the lock's, when it
    /// marks a region incomplete, or the latest row stamp of a killed apply, when the store shows
    /// one was killed here: its owner file or partial build is left); else `clock`, never earlier
    /// than one second after the last finished build.
    ///
    /// Why: every row without an upstream `Last-Modified` carries the build time as its
    /// `modified`, which is what makes MapLibre's side-load merge replace it on devices; one build
    /// must have one time, however often it is resumed. Why only a killed apply's stamps: rows
    /// no apply of this store recorded (a database written by something else, a deleted or
    /// foreign lock) carry whatever times their writer gave them; taking those would date every
    /// new row in the past, and a device's merge would refuse the update. Such a build takes the
    /// clock, so the build time is never below the clock unless it resumes a build of its own.
    public func buildTime(sourceDateEpoch: Int64?, clock: Int64, lockEpoch: Int64?, lockIsIncomplete: Bool) -> Int64 {
        if let sourceDateEpoch { return sourceDateEpoch }
        if let lockEpoch, lockIsIncomplete { return lockEpoch }
        if isInterrupted, let unfinished = [databaseURL, partialBuildURL].compactMap(OfflineDatabase.latestStamp(at:)).max(),
           unfinished > (lockEpoch ?? -1) {
            return unfinished
        }
        return max(clock, (lockEpoch ?? -1) + 1)
    }
}
