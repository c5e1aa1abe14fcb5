import Foundation

/// A store directory: `offline.db` and `provision.lock.json`, and nothing else once an
/// apply has finished.
public struct StoreDirectory: Equatable, Sendable {
    /// The database file name.
    public static let databaseName = "offline.db"
    /// The lock file name.
    public static let lockName = "provision.lock.json"
    /// The lock's detached Ed25519 signature (`provision sign`), when the store is signed.
    public static let signatureName = "provision.lock.json.sig"
    /// The directory of the search packs' files (`search/<pack>.db`).
    public static let searchDirectoryName = "search"
    /// The directory of the routing packs' tile extracts (`routing/<pack>.tar`).
    public static let routingDirectoryName = "routing"

    /// The directory.
    public let url: URL

    /// Uses the directory at `url`, creating it (and its parents) when `create` is true and it
    /// is missing; throws when it exists as a file, or is missing and `create` is false.
    public init(url: URL, create: Bool = true) throws {
        self.url = url
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StoreError(.io, "store path exists and is not a directory", path: url.path)
            }
        } else if create {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw StoreError(.io, "cannot create store directory: \(error.localizedDescription)", path: url.path)
            }
        } else {
            throw StoreError(.cannotOpen, "store directory does not exist", path: url.path)
        }
    }

    /// The path of `offline.db`.
    public var databaseURL: URL { url.appendingPathComponent(StoreDirectory.databaseName) }

    /// The path of `provision.lock.json`.
    public var lockURL: URL { url.appendingPathComponent(StoreDirectory.lockName) }

    /// The writer lock's owner file (`ApplyLease`), present only while an apply runs or after
    /// one was killed.
    public var lockOwnerURL: URL { url.appendingPathComponent(ApplyLease.fileName) }

    /// Names of entries other than `offline.db` and `provision.lock.json` (a leftover
    /// `offline.db-journal`, a temporary lock file, the `ApplyLease` owner file of a running or
    /// killed apply, anything a user put there), sorted.
    public func listUnexpectedFiles() throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw StoreError(.io, "cannot list store directory: \(error.localizedDescription)", path: url.path)
        }
        let expected: Set = [StoreDirectory.databaseName, StoreDirectory.lockName, StoreDirectory.signatureName,
                             StoreDirectory.searchDirectoryName, StoreDirectory.routingDirectoryName]
        return names.filter { !expected.contains($0) }.sorted()
    }
}
