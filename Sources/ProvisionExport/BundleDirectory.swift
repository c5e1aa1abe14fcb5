import Foundation
import ProvisionCodecs
import ProvisionStore

/// A directory an export fills (a bundle, or the files beside a patch: `PatchFiles`), built
/// under a temporary name beside its destination and moved into place by `commit`.
///
/// Why: a killed or failed export must leave either no directory or the previous one, never a
/// half-written bundle an app would ship. `commit` renames the finished directory into place;
/// a previous bundle there is first moved aside and removed after. Only a directory that is
/// empty or that an export of the same kind wrote (its `README.txt` starts with `marker`) is replaced.
public final class BundleDirectory {
    /// The first line of the README.txt of every bundle.
    public static let marker = "provision export bundle"

    /// Where the bundle goes.
    public let destination: URL
    /// The directory being filled.
    public let staging: URL
    /// The first line of the README.txt of the directories this one may replace, and what they are called.
    private let kind: (marker: String, noun: String)
    /// What the directory is called in messages ("bundle", "patch's files directory").
    public var noun: String { kind.noun }
    private var committed = false

    /// Creates the staging directory; throws when `destination` exists and is neither empty nor a
    /// directory of this kind (`marker`, called `noun` in errors).
    public init(destination: URL, marker: String = BundleDirectory.marker, noun: String = "bundle") throws {
        self.destination = destination
        kind = (marker, noun)
        try Self.checkReplaceable(destination, kind: kind)
        staging = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).tmp-\(getpid())")
        // Best effort: a staging directory an earlier run left, if any; creating it below fails loudly.
        try? FileManager.default.removeItem(at: staging)
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.io, "cannot create \(staging.path): \(error.localizedDescription)", path: destination.path)
        }
    }

    deinit {
        discard()
    }

    /// The URL of `relativePath` in the staging directory, its parent directories created.
    public func url(for relativePath: String) throws -> URL {
        let url = staging.appendingPathComponent(relativePath)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw StoreError(.io, "cannot create a directory for \(relativePath): \(error.localizedDescription)",
                             path: destination.path)
        }
        return url
    }

    /// Writes `data` to `relativePath` (flushed to disk).
    public func write(_ data: Data, to relativePath: String) throws {
        let file = try ExportFile(destination: try url(for: relativePath))
        do {
            try file.write(data)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    /// A file `copy(_:to:)` could not read: the source's fault, told apart from a failure to write
    /// the copy (the bundle's).
    public struct UnreadableSource: Error {
        public var error: any Error
    }

    /// Copies the file at `source` to `relativePath` through a flushed file, hashing the bytes as
    /// they are written, and returns their count and lower-case hex SHA-256: the digest of the
    /// copy the bundle holds, which the caller compares with the lock's before committing.
    ///
    /// Why not `FileManager.copyItem`: its copy is never flushed, so after a power loss the renamed
    /// bundle could hold an empty or torn pack that nothing checks again; and hashing the source
    /// before copying it vouched for bytes that could change before the copy read them.
    public func copy(_ source: URL, to relativePath: String) throws -> (bytes: Int64, sha256: String) {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw UnreadableSource(error: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
        defer { close(input) }
        let file = try ExportFile(destination: try url(for: relativePath))
        do {
            var hash = SHA256()
            var bytes: Int64 = 0
            var chunk = Data(count: 1 << 20)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw UnreadableSource(error: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
                if count == 0 { break }
                let piece = chunk.prefix(count)
                hash.update(piece)
                try file.write(piece)
                bytes += Int64(count)
            }
            try file.commit()
            return (bytes, hash.finalizeHex())
        } catch {
            file.discard()
            throw error
        }
    }

    /// Moves the finished directory to `destination`, replacing a previous bundle there.
    ///
    /// Every directory of the bundle is flushed first: the files are (`ExportFile`), but their
    /// names live in their directories, and a bundle renamed into place before those reach the
    /// disk could come back from a power loss with files missing.
    public func commit() throws {
        let manager = FileManager.default
        try syncDirectories()
        let aside = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).old-\(getpid())")
        var isDirectory: ObjCBool = false
        let exists = manager.fileExists(atPath: destination.path, isDirectory: &isDirectory)
        if exists {
            try Self.checkReplaceable(destination, kind: kind)
            // Best effort: an old copy set aside by an earlier run, if any; the rename below fails loudly.
            try? manager.removeItem(at: aside)
            guard rename(destination.path, aside.path) == 0 else {
                throw StoreError(.io, "cannot move the previous bundle aside: \(String(cString: strerror(errno)))",
                                 path: destination.path, underlyingCode: errno)
            }
        }
        guard rename(staging.path, destination.path) == 0 else {
            let code = errno
            if exists { _ = rename(aside.path, destination.path) }
            throw StoreError(.io, "cannot move the bundle into place: \(String(cString: strerror(code)))",
                             path: destination.path, underlyingCode: code)
        }
        committed = true
        let parent = open(destination.deletingLastPathComponent().path, O_RDONLY)
        if parent >= 0 {
            _ = fsync(parent)
            _ = close(parent)
        }
        // Best effort: the new bundle is in place; the old one set aside is only left over.
        if exists { try? manager.removeItem(at: aside) }
    }

    /// Flushes the staging directory and every directory in it.
    private func syncDirectories() throws {
        var directories = [staging]
        let keys: [URLResourceKey] = [.isDirectoryKey]
        for case let url as URL in FileManager.default.enumerator(at: staging, includingPropertiesForKeys: keys) ?? .init()
        // An entry whose kind cannot be read is not flushed as a directory; a file is flushed by its writer.
        where (try? url.resourceValues(forKeys: Set(keys)))?.isDirectory == true {
            directories.append(url)
        }
        for directory in directories {
            let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0, fsync(descriptor) == 0 else {
                let code = errno
                if descriptor >= 0 { close(descriptor) }
                throw StoreError(.io, "cannot flush \(directory.path): \(String(cString: strerror(code)))",
                                 path: destination.path, underlyingCode: code)
            }
            close(descriptor)
        }
    }

    /// Removes the staging directory unless it was committed (idempotent).
    public func discard() {
        guard !committed else { return }
        committed = true
        // Best effort: removing a staging directory that may already be gone.
        try? FileManager.default.removeItem(at: staging)
    }

    /// Throws unless `url` is absent, an empty directory, or a directory of `kind` an export wrote.
    private static func checkReplaceable(_ url: URL, kind: (marker: String, noun: String)) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else {
            throw StoreError(.io, "\(url.path) is a file; a \(kind.noun) is a directory: give another --out", path: url.path)
        }
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw StoreError(.io, "cannot list \(url.path) to check it may be replaced: \(error.localizedDescription)", path: url.path)
        }
        if entries.isEmpty { return }
        // An unreadable README.txt is no bundle's marker: refused below, naming the directory.
        let readme = (try? String(contentsOf: url.appendingPathComponent("README.txt"), encoding: .utf8)) ?? ""
        guard readme.hasPrefix(kind.marker) else {
            throw StoreError(.io, "\(url.path) exists and is not a \(kind.noun) provision export wrote (no README.txt of one); "
                             + "give a new or empty directory", path: url.path)
        }
    }
}
