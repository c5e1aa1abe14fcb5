import Foundation
import ProvisionExecution
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// `provision audit`: what a store holds and whether it is whole.
struct AuditCommand {
    let store: String?
    let verify: Bool
    let manifest: String?
    let options: CommonOptions
    let console: Console
    let environment: [String: String]

    func run() throws(CLIError) -> ExitCode {
        let path = StoreDirectoryPath(option: store, job: nil)
        guard FileManager.default.fileExists(atPath: path.databaseURL.path) else {
            throw CLIError(.missingInput, "no store at \(path.display): \(StoreDirectory.databaseName) is missing")
        }
        var lockProblem: String?
        var lock: LockDocument?
        do {
            if let json = try AtomicFile.readJSON(from: path.lockURL) {
                lock = LockDocument(json: json)
                if lock == nil { lockProblem = "not a lock this version of provision reads" }
            }
        } catch {
            lockProblem = describe(error)
        }
        var doc: AuditDocument
        do {
            let database = try path.openForReading(epoch: lock?.epoch ?? 0)
            defer { try? database.close() }
            doc = try AuditCommand.audit(database: database, lock: lock, directory: path)
            doc.lockProblem = lockProblem
            doc.interrupted = [path.partialBuildURL, path.url.appendingPathComponent(StoreLock.fileName)]
                .contains { FileManager.default.fileExists(atPath: $0.path) }
            if verify {
                doc.verification = try AuditCommand.verify(database: database, lock: lock, directory: path, environment: environment)
            }
        } catch {
            throw CLIError(.failure, "cannot audit the store at \(path.display): \(describe(error))")
        }
        if let manifest {
            let progress = ProgressReporter(console: console, mode: .none)
            let computed = try PlanCommand.computePlan(job: manifest, store: path.url.path, environment: environment, progress: progress)
            doc.manifestDifferences = AuditCommand.differences(computed.plan)
        }
        console.out(options.format == .json ? doc.json.serialized(.prettySorted) + "\n" : doc.text)
        return doc.isOK ? .success : .failure
    }

    /// Re-reads every row: inflates it, checks it is plausible for its kind and that its chunk
    /// hashes as the lock recorded (`StoreRepair`), counts expired rows and compares the content
    /// digest with the lock's.
    static func verify(database: OfflineDatabase, lock: LockDocument?, directory: StoreDirectoryPath,
                       environment: [String: String]) throws -> AuditDocument.Verification {
        let now = PlanSession.now(environment)
        let damage = try StoreRepair.damage(in: database, lock: lock, store: directory)
        let expired = try database.expiredCounts(before: now)
        let unusable = damage.unusable
        var result = AuditDocument.Verification(checked: damage.checked, corrupt: [], corruptCount: unusable.count,
                                                expired: expired.resources + expired.tiles, digestMatchesLock: nil)
        result.differingChunks = damage.mismatchedChunks
        result.differingRows = damage.rows.count - unusable.count
        result.corrupt = unusable.prefix(20).map { row in
            switch row.key {
            case .resource(let url): return "resource \(url): \(row.reason)"
            case .tile(let key): return "tile \(key.urlTemplate) \(key.tile.z)/\(key.tile.x)/\(key.tile.y): \(row.reason)"
            }
        }
        if let lock {
            result.digestMatchesLock = "sha256:" + (try database.contentDigest().digest) == lock.contentDigest
        }
        return result
    }

    /// What a plan of the job against this store would change, as audit findings.
    static func differences(_ plan: Plan) -> [String] {
        var out: [String] = []
        for region in plan.regions where region.action != .keep || region.hasTileChanges || region.resources.hasChanges {
            let totals = region.totals
            out.append("region \(region.key): \(region.action.rawValue), tiles +\(totals.add) -\(totals.remove), "
                       + "resources +\(region.resources.add.count) -\(region.resources.remove.count)")
        }
        for removed in plan.removedRegions {
            out.append("region \(removed.key ?? "row \(removed.rowID)") is not in the job (\(removed.tileCount) tiles)")
        }
        for drift in plan.drift { out.append("\(drift.url) changed upstream since the last apply") }
        return out
    }

    static func audit(database: OfflineDatabase, lock: LockDocument?, directory: StoreDirectoryPath) throws -> AuditDocument {
        let summary = try database.summary()
        let integrity = try database.integrityCheck()
        let byRow = Dictionary((lock?.regions ?? []).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
        var regions: [AuditDocument.Region] = []
        for region in summary.regions {
            let entry = byRow[region.rowID]
            var zooms: [(template: String, zoom: Int, expected: Int?, present: Int)] = []
            var seen = Set<String>()
            for expected in entry?.expectedTiles ?? [] {
                let present = region.tileCounts.first { $0.urlTemplate == expected.urlTemplate && $0.zoom == expected.zoom }?.count ?? 0
                zooms.append((expected.urlTemplate, expected.zoom, expected.count, present))
                seen.insert("\(expected.zoom) \(expected.urlTemplate)")
            }
            for count in region.tileCounts where !seen.contains("\(count.zoom) \(count.urlTemplate)") {
                zooms.append((count.urlTemplate, count.zoom, entry == nil ? nil : 0, count.count))
            }
            zooms.sort { ($0.template, $0.zoom) < ($1.template, $1.zoom) }
            let definition = (try? JSONValue.parse(region.definition)) ?? .string(String(decoding: region.definition, as: UTF8.self))
            let metadata: JSONValue = region.description.map { data in
                (try? JSONValue.parse(data)) ?? .string(data.base64EncodedString())
            } ?? .null
            regions.append(AuditDocument.Region(rowID: region.rowID, key: entry?.key, definition: definition,
                                                metadata: metadata, zooms: zooms,
                                                expectedResources: entry?.expectedResources,
                                                presentResources: region.resourceCount))
        }
        let rows = Set(summary.regions.map(\.rowID))
        let missing = (lock?.regions ?? []).filter { !rows.contains($0.rowID) }.map(\.key)
        let unexpected = (try? StoreDirectory(url: directory.url, create: false).listUnexpectedFiles()) ?? []
        return AuditDocument(store: directory.display, hasLock: lock != nil, integrity: integrity, regions: regions,
                             tileCount: summary.tileCount, resourceCount: summary.resourceCount,
                             byteCount: summary.tileBytes + summary.resourceBytes,
                             orphanTiles: summary.orphanTileCount, orphanResources: summary.orphanResourceCount,
                             unexpectedFiles: unexpected, missingRegions: missing)
    }
}
