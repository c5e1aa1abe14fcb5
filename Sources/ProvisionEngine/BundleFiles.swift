import Foundation
import ProvisionCodecs
import ProvisionReports
import ProvisionStore

/// The lock's `files`: the size and SHA-256 of each file of the store an app ships
/// (`offline.db`; the search packs have their own `searchPacks[].digest`), written by every
/// writer of a lock once the file is final.
enum BundleFiles {
    /// The files recorded, relative to the store directory.
    static let paths = [StoreDirectory.databaseName]

    /// The entries of the store's files as they are now. An entry of `recorded` (the lock the store
    /// had before this run) is kept without reading the file again when the file is provably the
    /// one it describes (`isUnchanged`); otherwise the file is hashed.
    static func entries(in store: StorePath, recorded: LockDocument?) throws -> [LockDocument.FileEntry] {
        try paths.map { path in
            let url = store.url.appendingPathComponent(path)
            if let entry = recorded?.file(path), isUnchanged(url, entry: entry, lock: store.lockURL) { return entry }
            let (bytes, hex) = try SHA256.file(at: url)
            return LockDocument.FileEntry(path: path, bytes: bytes, sha256: hex)
        }
    }

    /// Whether the file at `url` is the one `entry` of the lock at `lock` describes, without
    /// reading it: its size is the recorded one and it was last modified before the lock was
    /// written (every writer writes the lock after the file is final, so a file written since,
    /// by SQLite or a copy, is newer). Strictly before: a file modified within the same clock
    /// tick as the lock is hashed again.
    static func isUnchanged(_ url: URL, entry: LockDocument.FileEntry, lock: URL) -> Bool {
        let manager = FileManager.default
        // A file or lock whose attributes cannot be read is not proven unchanged: it is hashed.
        guard let file = try? manager.attributesOfItem(atPath: url.path),
              let locked = try? manager.attributesOfItem(atPath: lock.path),
              file[.type] as? FileAttributeType == .typeRegular,
              (file[.size] as? NSNumber)?.int64Value == entry.bytes,
              let modified = file[.modificationDate] as? Date, let written = locked[.modificationDate] as? Date else { return false }
        return modified < written
    }

    /// The files of `lock` whose bytes in `store` are not the recorded ones, for `audit --verify`.
    static func mismatches(in store: StorePath, lock: LockDocument) -> [AuditDocument.FileMismatch] {
        lock.files.compactMap { entry in
            // Only a plain name inside the store is read: a lock naming another path vouches for nothing here.
            guard !entry.path.hasPrefix("/"), !entry.path.split(separator: "/").contains("..") else {
                return AuditDocument.FileMismatch(expected: entry, found: nil)
            }
            // A missing or unreadable file is a mismatch, reported with nothing found.
            let found = try? SHA256.file(at: store.url.appendingPathComponent(entry.path))
            guard found?.bytes != entry.bytes || found?.hex != entry.sha256 else { return nil }
            return AuditDocument.FileMismatch(expected: entry,
                                              found: found.map { LockDocument.FileEntry(path: entry.path, bytes: $0.bytes, sha256: $0.hex) })
        }
    }
}
