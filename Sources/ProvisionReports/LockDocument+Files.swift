import Foundation
import ProvisionFoundation

extension LockDocument {
    /// A file of the bundle an app ships, as the lock records it (version 7): its path in the store
    /// directory, its size and the SHA-256 of its bytes.
    ///
    /// Why: an app that checked the lock's signature can then tie the very file it is about to
    /// side-load to the signed lock with one SHA-256 over it, instead of recomputing the lock's
    /// per-row chunk sums on a phone.
    public struct FileEntry: Equatable, Sendable {
        /// Relative to the store directory: `offline.db`.
        public var path: String
        public var bytes: Int64
        /// Lower-case hex, no prefix (what `SHA256.hash(data:)` and `MessageDigest` give).
        public var sha256: String

        public init(path: String, bytes: Int64, sha256: String) {
            self.path = path
            self.bytes = bytes
            self.sha256 = sha256
        }

        var json: JSONValue { ["path": .string(path), "bytes": .int(Int(bytes)), "sha256": .string(sha256)] }

        init?(json: JSONValue) {
            guard let path = json["path"]?.stringValue, let bytes = json["bytes"]?.intValue,
                  let sha256 = json["sha256"]?.stringValue else { return nil }
            self.init(path: path, bytes: Int64(bytes), sha256: sha256)
        }
    }

    /// The entry of the file at `path`, nil when the lock records none.
    public func file(_ path: String) -> FileEntry? { files.first { $0.path == path } }
}
