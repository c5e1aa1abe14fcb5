import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionCodecs
import ProvisionExecution
import ProvisionModel
import ProvisionReports
import ProvisionStore
import TileMath

/// `provision export`: the store's tiles as MBTiles or PMTiles archives, a directory a
/// MapLibre app or web page opens offline (styles, sprites, glyphs, one PMTiles archive a
/// source), or a patch devices side-load to update an older bundle (`PatchExport`). Reads the
/// store only; every output is written under a temporary name and renamed into place.
public struct ExportRun {
    /// What to write.
    public enum Format: String, CaseIterable, Sendable {
        case mbtiles, pmtiles, bundle, patch

        /// The file extension of an archive of this format.
        var fileExtension: String { rawValue }
    }

    /// `--store`; `./store` without it.
    public var store: String?
    public var format: Format
    /// `--region`: only the tiles of this job region (every region row of it).
    public var region: String?
    /// `--source`: only this tileset (a name the catalog gives).
    public var source: String?
    /// `--out`: a file, or a directory (one archive a source; the bundle).
    public var out: String
    /// `--since`: the store devices have, which a patch updates (`--format patch` only).
    public var since: String?
    public var progress: ProgressSink

    public init(store: String?, format: Format, region: String?, source: String?, out: String, since: String? = nil,
                progress: ProgressSink) {
        self.store = store
        self.format = format
        self.region = region
        self.source = source
        self.out = out
        self.since = since
        self.progress = progress
    }

    /// Reads the store, picks the tilesets, writes the outputs.
    public func run() throws(ProvisionError) -> ExportResult {
        let path = StorePath(option: store, job: nil)
        do {
            try path.checkPathLength()
        } catch {
            throw ProvisionError(.cannotWriteStore, describe(error), cause: error)
        }
        guard path.hasDatabase else {
            throw ProvisionError(.missingInput, "no store at \(path.display): \(StoreDirectory.databaseName) is missing")
        }
        try Self.checkOutput(out, against: path)
        if format == .patch {
            guard let since, region == nil, source == nil else {
                throw ProvisionError(.usage, "--format patch needs --since OLD (the store devices have), and takes no "
                                     + "--region or --source: a patch updates the whole bundle")
            }
            try Self.checkOutput(out, against: StorePath(option: since, job: nil))
            return try PatchExport(store: path, since: since, out: out, progress: progress).run()
        }
        if since != nil {
            throw ProvisionError(.usage, "--since goes with --format patch only; --format \(format.rawValue) exports the whole store")
        }
        let (lock, _) = PlanSession.readLock(path)
        let database: OfflineDatabase
        do {
            database = try path.openForReading(epoch: lock?.epoch ?? 0)
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(path.display)", kind: .failure)
        }
        // Best effort: closing a read-only connection.
        defer { try? database.close() }
        let regions = try regionRows(lock: lock, store: path)
        let catalog: ExportCatalog
        do {
            catalog = try ExportCatalog(database: database, lock: lock, regions: regions)
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(path.display)", kind: .failure)
        }
        guard !catalog.sources.isEmpty else {
            let scope = region.map { "region '\($0)' of " } ?? ""
            throw ProvisionError(.invalidJob, "\(scope)the store at \(path.display) holds no tiles with content: nothing to export")
        }
        let exporter = Exporter(database: database, regions: regions, lock: lock, progress: progress)
        let partial = ExportResult.partiality(lock: lock, regions: regions)
        if let partial {
            progress.emit(.partialExport(reason: partial))
        }
        if format == .bundle {
            var result = try BundleExport(exporter: exporter, catalog: catalog, store: path, out: URL(fileURLWithPath: out)).run()
            result.warnings = catalog.warnings
            result.partial = partial
            return result
        }
        let (sources, destinations) = try archiveTargets(catalog)
        progress.emit(.exportStarted(store: path.display, format: format.rawValue, files: sources.count,
                                     tiles: sources.map(\.set.tileCount).reduce(0, +)))
        var files: [ExportResult.File] = []
        for (source, destination) in zip(sources, destinations) {
            files.append(try exporter.export(source, format: format, to: destination))
        }
        var result = exporter.finish(ExportResult(store: path.display, format: format.rawValue, files: files,
                                                  warnings: catalog.warnings))
        result.partial = partial
        return result
    }

    /// The region rows of `--region` (nil without it), from the lock.
    private func regionRows(lock: LockDocument?, store: StorePath) throws(ProvisionError) -> [Int64]? {
        guard let region else { return nil }
        guard let lock else {
            throw ProvisionError(.usage, "--region needs the store's \(StoreDirectory.lockName), which names the regions; "
                                 + "\(store.display) has none (export the whole store instead)")
        }
        let rows = lock.regions.filter { $0.regionID == region }.map(\.rowID)
        guard !rows.isEmpty else {
            let known = Array(Set(lock.regions.map(\.regionID))).sorted()
            let hint = Suggestions.closest(to: region, among: known).map { " (did you mean '\($0)'?)" } ?? ""
            throw ProvisionError(.usage, "--region \(region): the store has no such region\(hint); "
                                 + "its regions are \(known.joined(separator: ", "))")
        }
        return rows.sorted()
    }

    /// The tilesets to write and where, as `--source` and `--out` say.
    private func archiveTargets(_ catalog: ExportCatalog) throws(ProvisionError) -> ([ExportCatalog.Source], [URL]) {
        let names = catalog.sources.map(\.name)
        var chosen = catalog.sources
        if let source {
            guard let match = catalog.sources.first(where: { $0.name == source }) else {
                let hint = Suggestions.closest(to: source, among: names).map { " (did you mean '\($0)'?)" } ?? ""
                throw ProvisionError(.usage, "--source \(source): the store has no such source\(hint); "
                                     + "its sources are \(names.joined(separator: ", "))")
            }
            chosen = [match]
        }
        let outURL = URL(fileURLWithPath: out)
        if Self.isDirectory(out) {
            do {
                try FileManager.default.createDirectory(at: outURL, withIntermediateDirectories: true)
            } catch {
                throw ProvisionError(.cannotWriteStore, "cannot create the directory \(out): \(error.localizedDescription)")
            }
            return (chosen, chosen.map { outURL.appendingPathComponent("\($0.name).\(format.fileExtension)") })
        }
        guard chosen.count == 1 else {
            throw ProvisionError(.usage, "the store has \(chosen.count) sources (\(names.joined(separator: ", "))): "
                                 + "give --source NAME for one file, or --out DIR for one file a source")
        }
        let parent = outURL.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProvisionError(.cannotWriteStore, "cannot write \(out): the directory \(parent.path) does not exist")
        }
        return (chosen, [outURL])
    }

    /// Refuses an `--out` that is the store or lies inside it (64): a store holds exactly its
    /// database and its lock. `naming` calls `out` in the message when it is not `--out` itself.
    static func checkOutput(_ out: String, against store: StorePath, naming: String? = nil) throws(ProvisionError) {
        func resolved(_ url: URL) -> String { url.standardizedFileURL.resolvingSymlinksInPath().path }
        let storePath = resolved(store.url)
        var target = URL(fileURLWithPath: out).standardizedFileURL
        while target.path != "/" {
            if resolved(target) == storePath {
                throw ProvisionError(.usage, "\(naming ?? "--out \(out)") is inside the store at \(store.display), which holds only "
                                     + "\(StoreDirectory.databaseName) and \(StoreDirectory.lockName); write elsewhere")
            }
            target.deleteLastPathComponent()
        }
    }

    /// Whether `path` names a directory: one that exists, or a path ending in `/`.
    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return path.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}
