import Foundation
import ProvisionExecution
import ProvisionModel
import ProvisionPlanning
import ProvisionReports
import ProvisionStore
import TileMath

/// The shared front half of `plan` and `apply`: the job, its store, its origins, and the
/// documents the plan is resolved from.
final class PlanSession {
    let input: JobInput
    let store: StoreDirectoryPath
    let environment: [String: String]
    let fetcher: OriginRouter
    /// The store's lock file, if it has one this version reads.
    let lock: LockDocument?
    /// The fixed time of this store (see `epoch(lock:)`), also the "now" HTTP expiry times are
    /// computed from, so that nothing in the store depends on when it was built.
    let epoch: Int64
    private var archives: [MBTilesArchive] = []

    init(input: JobInput, storeOption: String?, environment: [String: String]) throws(CLIError) {
        self.input = input
        self.environment = environment
        let store = StoreDirectoryPath(option: storeOption, job: input.job)
        self.store = store
        let lock = PlanSession.readLock(store)
        self.lock = lock
        let epoch = try PlanSession.epoch(lock: lock, environment: environment)
        self.epoch = epoch
        var opened: [MBTilesArchive] = []
        do {
            let routes = try OriginRouter.routes(for: input.job.origins) { url in
                let archive = try MBTilesArchive(url: url)
                opened.append(archive)
                return archive
            }
            let env = environment
            let http = try HTTPFetcher(configuration: HTTPFetcher.Configuration(
                settings: input.job.download,
                rewrite: { url in PlanSession.networkURL(url, environment: env) },
                now: { epoch }))
            fetcher = OriginRouter(routes: routes, http: http)
        } catch let error as StoreError {
            throw CLIError(.missingInput, "cannot open an origin archive: \(error.message)", cause: "\(error)")
        } catch {
            throw CLIError(.failure, "cannot set up downloads: \(error)")
        }
        archives = opened
    }

    /// The URL actually requested for a canonical URL: `${VAR}` references expanded from the
    /// environment and `mapbox://` mapped to the API with the token. Never stored or printed.
    static func networkURL(_ url: String, environment: [String: String]) -> String? {
        var expanded = url
        if url.contains("${") { expanded = expandEnvironment(url, env: environment).0 }
        if MapboxURL.isMapboxURL(expanded) {
            return MapboxURL.networkURL(for: expanded, accessToken: environment["MAPBOX_ACCESS_TOKEN"])
        }
        return expanded == url ? nil : expanded
    }

    /// The lock of the store, if there is one this version reads.
    static func readLock(_ store: StoreDirectoryPath) -> LockDocument? {
        guard let json = try? LockFile.read(from: store.lockURL) else { return nil }
        return LockDocument(json: json)
    }

    /// The fixed time of this store: SOURCE_DATE_EPOCH, else the lock's, else 0.
    static func epoch(lock: LockDocument?, environment: [String: String]) throws(CLIError) -> Int64 {
        if let text = environment["SOURCE_DATE_EPOCH"] {
            guard let value = Int64(text), value >= 0 else {
                throw CLIError(.usage, "SOURCE_DATE_EPOCH must be a non-negative integer, not '\(text)'")
            }
            return value
        }
        return lock?.epoch ?? 0
    }

    /// Opens the store's database read-only for planning; nil when the store has none yet.
    func openForReading(epoch: Int64) throws(CLIError) -> OfflineDatabase? {
        guard FileManager.default.fileExists(atPath: store.databaseURL.path) else { return nil }
        do {
            return try store.openForReading(epoch: epoch)
        } catch let error as StoreError where error.code == .locked {
            throw CLIError(.cannotWriteStore, error.message)
        } catch {
            throw CLIError(.cannotWriteStore, "cannot read the store at \(store.url.path): \(describe(error))")
        }
    }

    // MARK: - Resolving documents

    /// Fetches styles and TileJSONs (falling back to the stored copy when the origin fails)
    /// and resolves every style pack and region tileset.
    func resolve(store database: OfflineDatabase?, lock: LockDocument?, epoch: Int64) throws(CLIError) -> PlanInput {
        let job = input.job
        var documents: [String: FetchedBody] = [:]
        let styles = try fetchDocuments(job.stylePacks.map { FetchRequest(url: $0.style, kind: .style) }, store: database)
        documents.merge(styles) { a, _ in a }

        var resolvedStyles: [String: ResolvedStyle] = [:]
        var tileJSONURLs: [String] = []
        for pack in job.stylePacks {
            guard let body = styles[pack.style] else { continue }
            let json = try parseDocument(body.data, url: pack.style)
            do {
                let resolved = try StyleResolver.resolve(styleURL: pack.style, style: json, pack: pack)
                resolvedStyles[pack.id] = resolved
                tileJSONURLs += resolved.tileJSONURLs
            } catch let error as PlanningError {
                throw CLIError(.invalidJob, "style \(pack.style) of style pack '\(pack.id)' cannot be used",
                               diagnostics: [error.diagnostic(file: pack.style)])
            } catch {
                throw CLIError(.failure, "style \(pack.style): \(error)")
            }
        }
        for region in job.regions {
            tileJSONURLs += region.tilesets.filter { !Self.isTemplate($0) }
        }
        let tileJSONs = try fetchDocuments(Array(Set(tileJSONURLs)).sorted().map { FetchRequest(url: $0, kind: .source) },
                                           store: database)
        documents.merge(tileJSONs) { a, _ in a }

        var packs: [String: ResolvedPack] = [:]
        for pack in job.stylePacks {
            guard let resolved = resolvedStyles[pack.id] else { continue }
            var sources: [TileSource] = []
            var summaries: [SourceSummary] = []
            for source in resolved.sources {
                let tileJSON = try source.tileJSONURL.map { url throws(CLIError) in
                    try parseDocument(tileJSONs[url]?.data ?? Data(), url: url)
                }
                let tileSource: TileSource?
                do {
                    tileSource = try source.resolvedTileset(tileJSON: tileJSON)
                } catch {
                    throw CLIError(.invalidJob, "source '\(source.name)' of style \(pack.style) cannot be used: \(describe(error))")
                }
                guard let tileSource else { continue }
                sources.append(tileSource)
                summaries.append(SourceSummary(name: source.name, tileJSONURL: source.tileJSONURL,
                                               urlTemplate: tileSource.template, scheme: tileSource.scheme.rawValue,
                                               minZoom: tileSource.minZoom, maxZoom: tileSource.maxZoom,
                                               tileSize: tileSource.tileSize))
            }
            packs[pack.id] = ResolvedPack(pack: pack, resources: resolved.resources, tileSources: sources, summaries: summaries)
        }

        var regionTilesets: [String: ResolvedTilesets] = [:]
        for region in job.regions where !region.tilesets.isEmpty {
            var resolved = ResolvedTilesets()
            for tileset in region.tilesets {
                if Self.isTemplate(tileset) {
                    resolved.append(TileSource(template: tileset), tileJSONURL: nil)
                    continue
                }
                let json = try parseDocument(tileJSONs[tileset]?.data ?? Data(), url: tileset)
                do {
                    resolved.append(try TileSource.from(tileJSON: json, sourceURL: tileset, type: .vector, tileSize: 512),
                                    tileJSONURL: tileset)
                } catch {
                    throw CLIError(.invalidJob, "tileset \(tileset) of region '\(region.id)' cannot be used: \(describe(error))")
                }
            }
            regionTilesets[region.id] = resolved
        }
        var planInput = PlanInput(job: job, jobDigest: input.digest, epoch: epoch, packs: packs,
                                  regionTilesets: regionTilesets, documents: documents, lockedRows: lock?.rowsByKey ?? [:])
        planInput.pinnedDigests = lock?.pinnedDigests ?? [:]
        return planInput
    }

    static func isTemplate(_ url: String) -> Bool {
        url.contains("{z}") || url.contains("{quadkey}")
    }

    private func parseDocument(_ data: Data, url: String) throws(CLIError) -> JSONValue {
        do {
            return try JSONValue.parse(data)
        } catch {
            throw CLIError(.invalidJob, "\(url) is not valid JSON: \(error)")
        }
    }

    /// Fetches documents; a failed fetch falls back to the store's copy, else fails with 65 for a
    /// document that arrived but cannot be used and 69 for one that could not be fetched.
    private func fetchDocuments(_ requests: [FetchRequest], store: OfflineDatabase?) throws(CLIError) -> [String: FetchedBody] {
        var bodies: [String: FetchedBody] = [:]
        var failures: [(FetchRequest, FetchFailure)] = []
        var iterator = requests.makeIterator()
        fetcher.fetchAll(&iterator) { request, result in
            switch result {
            case .success(let body): bodies[request.url] = body
            case .failure(let failure): failures.append((request, failure))
            }
        }
        var unavailable: [String] = []
        var unusable: [String] = []
        for (request, failure) in failures {
            if let stored = try? store?.resourceData(url: request.url) {
                bodies[request.url] = FetchedBody(data: stored)
            } else if case .unusableDocument(let why) = failure.redacted {
                unusable.append(URLRedaction.redact("\(request.url): \(why)"))
            } else {
                unavailable.append(URLRedaction.redact("\(request.url): \(failure.redacted)"))
            }
        }
        // A document that arrived whole but cannot be used is the document's problem (65), not
        // the origin's (69): fetching it again gets the same bytes.
        if !unusable.isEmpty {
            throw CLIError(.invalidJob, "\(unusable.count == 1 ? "a document" : "\(unusable.count) documents") the plan needs cannot be used:\n  "
                           + unusable.sorted().joined(separator: "\n  "))
        }
        if !unavailable.isEmpty {
            throw CLIError(.upstreamUnavailable, "cannot fetch \(unavailable.count == 1 ? "a document" : "\(unavailable.count) documents") the plan needs:\n  "
                           + unavailable.sorted().joined(separator: "\n  "))
        }
        return bodies
    }
}

/// Where a store lives: `--store`, else the job's `store`, else `./store`.
struct StoreDirectoryPath {
    let url: URL

    init(option: String?, job: Job?) {
        if let option {
            url = URL(fileURLWithPath: option)
        } else if let store = job?.store {
            url = store
        } else {
            url = URL(fileURLWithPath: "store")
        }
    }

    var databaseURL: URL { url.appendingPathComponent(StoreDirectory.databaseName) }

    /// Opens the database read-only; a journal a killed apply left is rolled back first (when
    /// no apply runs, else `.locked`), as the next apply would.
    func openForReading(epoch: Int64) throws -> OfflineDatabase {
        do {
            return try OfflineDatabase(url: databaseURL, epoch: epoch, options: .init(readOnly: true, create: false))
        } catch let error as StoreError where error.code == .hotJournal {
            let owner = try StoreLock.acquire(directory: url)
            defer { owner.release() }
            _ = try OfflineDatabase.recoverInterruptedWrite(at: databaseURL)
            return try OfflineDatabase(url: databaseURL, epoch: epoch, options: .init(readOnly: true, create: false))
        }
    }
    var lockURL: URL { url.appendingPathComponent(StoreDirectory.lockName) }
    /// The path as the user will recognise it.
    var display: String { url.standardizedFileURL.path }
}

/// A one-line description of an error, for messages.
func describe(_ error: Error) -> String {
    if let store = error as? StoreError { return store.message }
    if let planning = error as? PlanningError { return planning.description }
    return String(describing: error)
}
