import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The audit of a store's routing packs: each extract the lock records is present, its `index.bin`
/// valid and holding exactly the recorded tiles, the size the lock says; a file of `routing/` the
/// lock does not record is named; with `--verify`, every recorded tile is re-read (header checked
/// against its place and the pack's build, SHA-256 against the lock's) and the file's digest compared.
enum RoutingPackAudit {
    /// Checks the packs `lock` records (every tile with `verify`) and lists the files of `routing/`
    /// it does not; `lock` nil (absent or unreadable) checks nothing and only says whether there are files.
    ///
    /// - Throws: `StoreError(.io)` when `routing/` exists and cannot be listed.
    static func check(_ doc: inout AuditDocument, path: StorePath, lock: LockDocument?, verify: Bool) throws {
        let files = try routingFiles(path)
        guard let lock else {
            doc.routingPackFilesUnchecked = !files.isEmpty
            return
        }
        let recorded = Set(lock.routingPacks.map(\.file))
        doc.unknownRoutingPackFiles = files.filter { !recorded.contains($0) }
        doc.routingPacks = lock.routingPacks.map { check($0, directory: path.url, verify: verify) }
    }

    /// One pack's extract against its record.
    static func check(_ record: RoutingPackRecord, directory: URL, verify: Bool) -> AuditDocument.RoutingPack {
        var pack = AuditDocument.RoutingPack(id: record.id, file: record.file, tiles: record.tiles.count, bytes: record.bytes)
        let url = directory.appendingPathComponent(record.file)
        (pack.fileChecked, pack.problems) = RoutingPackCheck.fileProblems(record, directory: directory)
        guard verify, FileManager.default.fileExists(atPath: url.path) else { return pack }
        do {
            pack.damagedTiles = try RoutingPackCheck.tiles(record, directory: directory).map {
                AuditDocument.DamagedTile(path: $0.path, problem: $0.what)
            }
            pack.tilesChecked = true
            let (digest, bytes) = try RoutingPackBuild.fileDigest(url)
            if pack.problems.isEmpty, pack.damagedTiles.isEmpty, digest != record.digest {
                pack.problems.append("its SHA-256 (\(digest.prefix(19))…, \(ByteFormat.string(bytes))) differs from the lock's "
                                     + "(\(record.digest.prefix(19))…, \(ByteFormat.string(record.bytes))) though every tile is whole")
            }
        } catch {
            pack.problems.append("its tiles cannot be read: \(describe(error))")
        }
        return pack
    }

    /// The files of the store's `routing/` as store paths (`routing/<name>`), sorted; empty without it.
    static func routingFiles(_ path: StorePath) throws -> [String] {
        try files(path, directory: StoreDirectory.routingDirectoryName, what: "the routing packs")
    }

    /// The files of the store's directory `name` as store paths (`<name>/<file>`), sorted; empty
    /// without it, the name itself when it is not a directory.
    ///
    /// - Throws: `StoreError(.io)` when it exists and cannot be listed: an audit must not say
    ///   "no unknown pack" of a directory it could not read.
    static func files(_ path: StorePath, directory name: String, what: String) throws -> [String] {
        let directory = path.url.appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [name] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map { name + "/" + $0 }
        } catch {
            throw StoreError(.io, "cannot list \(what): \(error.localizedDescription)", path: directory.path)
        }
    }
}
