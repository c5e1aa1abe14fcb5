import Foundation
import ProvisionCodecs
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The audit of a store's search packs: each file the lock records is present, opens, is a search
/// pack whole by its own checks (`PlaceIndexDatabase.problems`) and has the lock's digest; a file of
/// `search/` the lock does not record is named; with `--verify` and the job, each pack is rebuilt
/// from the stored tiles into a temporary directory and compared (packs are byte-reproducible).
enum SearchPackAudit {
    /// Checks the packs `lock` records and lists the files of `search/` it does not; `lock` nil
    /// (absent or unreadable) checks nothing and only says whether there are files.
    ///
    /// - Throws: `StoreError(.io)` when `search/` exists and cannot be listed: an audit must not
    ///   say "no unknown pack" of a directory it could not read.
    static func check(_ doc: inout AuditDocument, path: StorePath, lock: LockDocument?) throws {
        let files = try searchFiles(path)
        guard let lock else {
            doc.searchPackFilesUnchecked = !files.isEmpty
            return
        }
        let recorded = Set(lock.searchPacks.map(\.file))
        doc.unknownSearchPackFiles = files.filter { !recorded.contains($0) }
        doc.searchPacks = lock.searchPacks.map { check($0, directory: path.url) }
        doc.searchPackTilesNotChecked = "audit --verify --manifest JOB rebuilds them from the stored tiles"
    }

    /// One pack's file against its record.
    static func check(_ record: SearchPackRecord, directory: URL) -> AuditDocument.SearchPack {
        var pack = AuditDocument.SearchPack(id: record.id, file: record.file, entries: record.entries, bytes: record.bytes)
        let url = directory.appendingPathComponent(record.file)
        guard FileManager.default.fileExists(atPath: url.path) else {
            pack.problems.append("the file is missing; 'apply --repair' builds it again")
            return pack
        }
        let file: (bytes: Int64, hex: String)
        do {
            file = try SHA256.file(at: url)
        } catch {
            pack.problems.append("the file cannot be read: \(describe(error))")
            return pack
        }
        pack.fileChecked = true
        pack.problems += PlaceIndexDatabase.problems(url)
        let digest = "sha256:" + file.hex
        if digest != record.digest {
            pack.problems.append("its SHA-256 (\(digest.prefix(19))…, \(ByteFormat.string(file.bytes))) differs from the "
                                 + "lock's (\(record.digest.prefix(19))…, \(ByteFormat.string(record.bytes))): it is not the file "
                                 + "the apply wrote; 'apply --repair' builds it again")
        }
        return pack
    }

    /// The files of the store's `search/` as store paths (`search/<name>`), sorted; empty without it.
    static func searchFiles(_ path: StorePath) throws -> [String] {
        try RoutingPackAudit.files(path, directory: StoreDirectory.searchDirectoryName, what: "the search packs")
    }

    /// `--verify` with the job: rebuilds each recorded pack the job's `plan` has from the tiles of
    /// `database`, in a temporary directory outside the store, stamped with the build time the
    /// pack's file gives, and compares it with the lock's record; the temporary directory is removed.
    static func verify(_ doc: inout AuditDocument, plan: Plan, database: OfflineDatabase, path: StorePath,
                       lock: LockDocument) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("provision-audit-\(UUID().uuidString)")
        // Best effort: the scratch directory holds only rebuilt copies; one left behind harms nothing.
        defer { try? FileManager.default.removeItem(at: scratch) }
        var notInJob: [String] = []
        for index in doc.searchPacks.indices {
            let id = doc.searchPacks[index].id
            guard let record = lock.searchPacks.first(where: { $0.id == id }),
                  let packPlan = plan.searchPacks.first(where: { $0.pack.id == id }) else {
                notInJob.append(id)
                continue
            }
            let url = path.url.appendingPathComponent(record.file)
            guard let buildTime = PlaceIndexDatabase.buildTime(url) else { continue }  // its file's problems are named
            let rebuilt: SearchPackBuild.Outcome
            do {
                rebuilt = try SearchPackBuild.run(packPlan, plan: plan, store: database, directory: scratch, buildTime: buildTime,
                                                  record: nil)
            } catch {
                doc.searchPacks[index].problems.append("cannot be rebuilt from the stored tiles to compare: \(describe(error))")
                continue
            }
            doc.searchPacks[index].tilesChecked = true
            doc.searchPacks[index].problems += differences(rebuilt.record, record: record)
        }
        doc.searchPackTilesNotChecked = notInJob.isEmpty ? nil
            : "the job has no search pack \(listed(notInJob.map { "'\($0)'" }))"
    }

    /// What differs between a pack rebuilt from the tiles and the lock's record of it.
    static func differences(_ rebuilt: SearchPackRecord, record: SearchPackRecord) -> [String] {
        var out: [String] = []
        if rebuilt.settingsDigest != record.settingsDigest {
            out.append("the job's settings for it (names, layers, sources or regions) are not the ones it was built with")
        } else if rebuilt.inputDigest != record.inputDigest {
            out.append("the stored tiles it is built from changed since it was built; 'apply' builds it again")
        }
        if rebuilt.digest != record.digest {
            out.append("a rebuild from the stored tiles (\(rebuilt.digest.prefix(19))…, \(plural(rebuilt.entries, "place"))) "
                       + "differs from the lock's (\(record.digest.prefix(19))…, \(plural(record.entries, "place")))")
        }
        return out
    }
}
