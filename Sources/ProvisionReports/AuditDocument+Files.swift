import Foundation
import ProvisionFoundation

extension AuditDocument {
    /// A file of the store whose size or SHA-256 is not what the lock's `files` records
    /// (`audit --verify`).
    public struct FileMismatch: Equatable, Sendable {
        /// What the lock records.
        public var expected: LockDocument.FileEntry
        /// What the file holds; nil when it is missing or cannot be read.
        public var found: LockDocument.FileEntry?

        public init(expected: LockDocument.FileEntry, found: LockDocument.FileEntry?) {
            self.expected = expected
            self.found = found
        }

        /// The problem line: the file, what the lock expects, what was found.
        public var problem: String {
            let expectedText = "\(grouped(Int(expected.bytes))) bytes, sha256 \(expected.sha256)"
            let foundText = found.map { "\(grouped(Int($0.bytes))) bytes, sha256 \($0.sha256)" } ?? "the file is missing or unreadable"
            return "\(expected.path) is not the file the lock records: expected \(expectedText); found \(foundText)"
        }
    }
}
