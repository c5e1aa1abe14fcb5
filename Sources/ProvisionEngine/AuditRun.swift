import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionExecution
import ProvisionModel
import ProvisionCoverage
import ProvisionReports
import ProvisionStore

/// `provision audit`: what a store holds and whether it is whole.
public struct AuditRun {
    /// `--store`; without it, the `--manifest` job's store, else `./store`.
    public var store: String?
    /// `--verify`: re-read every row against its kind and the lock's digests.
    public var verify = false
    /// `--manifest`: also plan this job against the store.
    public var manifest: String?
    /// `--trusted-key`: the key whose signature of the lock is checked before anything else.
    public var trustedKey: Ed25519.PublicKey?
    /// `--html`, `--svg --zoom`: the coverage pictures to draw of the store, one map each.
    public var coverage: [CoverageOptions] = []
    /// Files the command will write (`--html`, `--svg`): refused when they are the store's.
    public var outputs: [(flag: String, path: String)] = []
    public var context: RunContext
    public var progress: ProgressSink

    public init(store: String?, verify: Bool, manifest: String?, context: RunContext, progress: ProgressSink) {
        self.store = store
        self.verify = verify
        self.manifest = manifest
        self.context = context
        self.progress = progress
    }

    /// Audits the store; missing input (no store, no manifest) and unreadable stores are errors,
    /// what is wrong with the store is in the document.
    public func run() throws(ProvisionError) -> AuditDocument {
        try audit().document
    }

    /// Audits the store and draws the coverage pictures `coverage` asks for, in that order.
    public func audit() throws(ProvisionError) -> (document: AuditDocument, coverage: [CoverageMap]) {
        let input = try manifest.map { path throws(ProvisionError) in try JobInput.load(path) }
        let path = StorePath(option: store, job: input?.job)
        try PlanSession.checkOutputs(outputs, store: path)
        do {
            try path.checkPathLength()
        } catch {
            throw ProvisionError(.cannotWriteStore, describe(error), cause: error)
        }
        guard path.hasDatabase else {
            throw ProvisionError(.missingInput, "no store at \(path.display): \(StoreDirectory.databaseName) is missing")
        }
        if let trustedKey {
            // Digests compared with a lock nobody vouches for prove nothing: the signature comes first.
            try LockSignature.verify(path, key: trustedKey)
            progress.emit(.signatureVerified(lock: path.lockURL.path, signature: LockSignature.url(in: path).path))
        }
        let (lock, lockProblem) = PlanSession.readLock(path)
        var doc: AuditDocument
        do {
            let database = try path.openForReading(epoch: lock?.epoch ?? 0)
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            doc = AuditDocument(store: path.display, summary: try database.summary(), integrity: try database.integrityCheck(),
                                lock: lock, unexpectedFiles: try path.unexpectedFiles(),
                                // The footprint adds to the audit; a store too damaged to give it still gets its problems reported.
                                sharing: try? database.contentSharing())
            doc.lockProblem = lockProblem
            // The source names add to the audit (the catalog throws only when the database cannot be
            // read); a store too damaged to give them still gets its problems reported.
            doc.sources = ((try? ExportCatalog(database: database, lock: lock))?.sources ?? []).map { source in
                AuditDocument.Source(name: source.name, template: source.set.urlTemplate, pixelRatio: source.set.pixelRatio,
                                     tiles: source.set.tileCount,
                                     styleSources: source.styleSources.map { "\($0.pack): \($0.source)" })
            }
            doc.interrupted = path.isInterrupted
            try SearchPackAudit.check(&doc, path: path, lock: lockProblem == nil ? lock : nil)
            try RoutingPackAudit.check(&doc, path: path, lock: lockProblem == nil ? lock : nil, verify: verify)
            if verify {
                let (verification, byRegion) = try Self.verify(database, lock: lock, now: context.now)
                doc.verification = verification
                doc.verification?.files = lock.map { BundleFiles.mismatches(in: path, lock: $0) } ?? []
                for i in doc.regions.indices {
                    doc.regions[i].verification = byRegion[doc.regions[i].rowID] ?? AuditDocument.RegionVerification()
                }
            }
        } catch {
            throw ProvisionError(store: error, context: "cannot audit the store at \(path.display)", kind: .failure)
        }
        if let input {
            let session = try PlanSession(input: input, storeOption: path.url.path, context: context)
            let plan = try session.plan(progress: progress).plan
            doc.manifestDifferences = AuditDocument.differences(plan)
            if verify, let lock, !doc.searchPacks.isEmpty { try Self.verifySearchPacks(&doc, plan: plan, path: path, lock: lock) }
        }
        var maps: [CoverageMap] = []
        for options in coverage { maps.append(try Self.coverage(doc, path: path, lock: lock, options: options)) }
        progress.emit(.auditFinished(whole: doc.isWhole, ok: doc.isOK, regions: doc.regions.count, tiles: doc.tileCount))
        return (doc, maps)
    }

    /// Rebuilds the search packs from the store's tiles and compares them (`SearchPackAudit.verify`).
    static func verifySearchPacks(_ doc: inout AuditDocument, plan: Plan, path: StorePath, lock: LockDocument) throws(ProvisionError) {
        do {
            let database = try path.openForReading(epoch: lock.epoch)
            // Best effort: closing a read-only connection.
            defer { try? database.close() }
            try SearchPackAudit.verify(&doc, plan: plan, database: database, path: path, lock: lock)
        } catch {
            throw ProvisionError(store: error, context: "cannot rebuild the search packs of \(path.display) to compare", kind: .failure)
        }
    }

    /// Re-reads every row: inflates it, checks it is plausible for its kind and that its chunk
    /// hashes as the lock recorded, counts expired rows and compares the content digest with the
    /// lock's; and per region row, the damaged rows it links.
    static func verify(_ database: OfflineDatabase, lock: LockDocument?, now: Int64) throws
        -> (AuditDocument.Verification, [Int64: AuditDocument.RegionVerification]) {
        let damage = try StoreRepair.damage(in: database, lockChunks: lock?.chunks ?? [], check: Verifier.rowCheck())
        var byRegion: [Int64: AuditDocument.RegionVerification] = [:]
        for row in damage.rows {
            for region in try database.regionsLinking(row.key) {
                if row.isUnusable { byRegion[region, default: .init()].corrupt += 1 } else { byRegion[region, default: .init()].differing += 1 }
            }
        }
        let expired = try database.expiredCounts(before: now)
        let matches = try lock.map { "sha256:" + (try database.contentDigest().digest) == $0.contentDigest }
        var verification = AuditDocument.Verification(damage: damage, expired: expired.resources + expired.tiles,
                                                      digestMatchesLock: matches)
        verification.glyphs = try GlyphAudit.check(database, lock: lock)
        return (verification, byRegion)
    }
}
