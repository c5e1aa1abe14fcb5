import Foundation
import ProvisionCodecs
import ProvisionModel
import RoutingGraph

/// The tiles fetched for a routing pack's next extract, kept in `routing/.<pack>.partial/` inside
/// the store until the extract is written, so an apply killed midway never fetches them again.
///
/// Each tile is one file named by its level and index, written to a temporary name and renamed,
/// so a kill leaves whole tiles only; a tile the source had none of (404) is an empty `.absent`
/// file. A staged tile is checked again when read: a damaged one is fetched anew.
public struct RoutingPackStaging: Sendable {
    /// The staging directory.
    public let directory: URL

    /// The staging directory of `pack` in the store at `store`.
    public init(store: URL, pack: RoutingPack) {
        directory = store.appendingPathComponent(pack.stagingDirectory)
    }

    func url(_ tile: GraphTileID, absent: Bool = false) -> URL {
        directory.appendingPathComponent("\(tile.level.level)-\(tile.index)\(absent ? ".absent" : ".gph")")
    }

    /// The staged bytes of `tile` when they are there and pass the header check, else nil.
    public func staged(_ tile: GraphTileID) -> [UInt8]? {
        // A staged tile that cannot be read is fetched again, as one never staged.
        guard let data = try? Data(contentsOf: url(tile)) else { return nil }
        let bytes = [UInt8](data)
        // A staged tile that fails the check is fetched again.
        return (try? GraphTileHeader.check(bytes, expected: tile)) != nil ? bytes : nil
    }

    /// Whether the source answered 404 for `tile` in an apply that did not finish.
    public func isAbsent(_ tile: GraphTileID) -> Bool {
        FileManager.default.fileExists(atPath: url(tile, absent: true).path)
    }

    /// Keeps `bytes` of `tile` (whole, or not at all).
    public func stage(_ tile: GraphTileID, bytes: [UInt8]) throws {
        try write(Data(bytes), to: url(tile))
    }

    /// Records that the source has no `tile`.
    public func stageAbsent(_ tile: GraphTileID) throws {
        try write(Data(), to: url(tile, absent: true))
    }

    private func write(_ data: Data, to target: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString)")
        try Self.writeUnsynced(data, to: temporary.path)
        guard rename(temporary.path, target.path) == 0 else {
            let code = errno
            // Best effort: the temporary file is garbage once the rename failed.
            try? FileManager.default.removeItem(at: temporary)
            throw StoreError(.io, "cannot stage graph tile \(target.lastPathComponent): \(String(cString: strerror(code)))",
                             path: target.path)
        }
    }

    /// Writes `data` to a new file at `path` without `fsync`.
    ///
    /// Why no sync: a staged tile is checked again when it is read, and what a killed process
    /// wrote stays in the page cache; `Data.write` synced every tile, so staging a pack of 1,116
    /// tiles waited on the disk 1,121 times (strace) and took 5 s for 0.4 s of CPU.
    private static func writeUnsynced(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("cannot create", path) }
        var written = 0
        let complete = data.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let count = Foundation.write(fd, raw.baseAddress.map { $0 + written }, raw.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
        guard complete else {
            let error = failure("cannot write", path)
            _ = close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw failure("cannot close", path) }
    }

    private static func failure(_ what: String, _ path: String) -> StoreError {
        StoreError(.io, "\(what) \(path): \(String(cString: strerror(errno)))", path: path)
    }

    /// Makes the staging directory hold only tiles of the source version `version` (a remote
    /// extract's ETag and size): tiles staged from another version are removed first, so a pack is
    /// never written from tiles of two versions of its source.
    public func adopt(source version: String) throws {
        let marker = directory.appendingPathComponent(".source")
        // No marker (or an unreadable one) is no proof of the version: the staged tiles go.
        let staged = try? String(contentsOf: marker, encoding: .utf8)
        guard staged != version else { return }
        try remove()
        try write(Data(version.utf8), to: marker)
    }

    /// Removes the staging directory (its extract is written).
    public func remove() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        try FileManager.default.removeItem(at: directory)
    }
}

/// A routing pack that cannot be written as asked: tiles of two builds (exit 65).
public struct RoutingPackError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Writes a routing pack's extract from the tiles the previous extract keeps and the staged ones.
public enum RoutingPackBuild {
    /// Writes `routing/<pack>.tar` in the store at `directory` with `plan`'s kept tiles (read from
    /// the previous extract) and added tiles (read from `staging`), leaving out `absent` ones; returns
    /// its lock record.
    ///
    /// - Throws: `RoutingPackError` when the tiles are of two builds (naming both, no file
    ///   written), or an I/O or extract error.
    public static func write(_ plan: RoutingPackPlan, absent: [RoutingTile], staging: RoutingPackStaging,
                             directory: URL) throws -> RoutingPackRecord {
        let target = directory.appendingPathComponent(plan.pack.file)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Opened when a kept tile is first read: a repair stages every kept tile of an extract whose
        // index may be damaged, and such an extract is never opened.
        var previous: TileExtractReader?
        let absentSet = Set(absent), keep = Set(plan.keep)
        // Read twice (checked, then written) rather than held: memory stays one tile whatever the pack's size.
        func body(_ tile: RoutingTile, _ id: GraphTileID) throws -> [UInt8] {
            let staged = staging.staged(id)
            if keep.contains(tile), staged == nil {
                let reader = try previous ?? TileExtractReader(url: target)
                previous = reader
                return try reader.readChecked(id).bytes
            }
            guard let staged else {
                throw RoutingPackError("routing pack '\(plan.pack.id)': graph tile \(id.path) was neither kept nor fetched")
            }
            return staged
        }
        var sizes: [GraphTileID: Int] = [:]
        var identities: [(GraphTileID, GraphBuildIdentity)] = []
        for tile in plan.wanted where !absentSet.contains(tile) {
            guard let id = GraphTileID(tile) else { continue }
            let bytes = try body(tile, id)
            identities.append((id, try GraphTileHeader.check(bytes, expected: id).buildIdentity))
            sizes[id] = bytes.count
        }
        let build: GraphBuildIdentity?
        do {
            build = try GraphBuildIdentity.single(identities)
        } catch {
            throw RoutingPackError("routing pack '\(plan.pack.id)' (\(plan.pack.source)): \(error)")
        }
        var tiles: [RoutingPackRecord.Tile] = []
        try TileExtractWriter.write(to: target, sizes: sizes) { id in
            let bytes = try body(id.routingTile, id)
            tiles.append(RoutingPackRecord.Tile(tile: id.routingTile, path: id.path, bytes: bytes.count,
                                                digest: "sha256:" + SHA256.hex(Data(bytes))))
            return bytes
        }
        let (digest, byteCount) = try fileDigest(target)
        return RoutingPackRecord(id: plan.pack.id, file: plan.pack.file, source: plan.pack.source, gzip: plan.pack.gzip,
                                 digest: digest, bytes: byteCount,
                                 datasetID: build?.datasetID, version: build?.version, tiles: tiles, absent: absent.sorted())
    }

    /// sha256 (`sha256:…`) and size of the file at `url`, read in chunks.
    public static func fileDigest(_ url: URL) throws -> (String, Int64) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }  // best effort: closing a file only read
        var hash = SHA256(), count: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(chunk)
            count += Int64(chunk.count)
        }
        return ("sha256:" + hash.finalizeHex(), count)
    }
}
