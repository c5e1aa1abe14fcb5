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
    /// The job, its URLs in canonical form (secret query parameters dropped).
    let input: JobInput
    /// The keys the requests carry.
    let credentials: Credentials
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
        let credentials: Credentials
        do {
            credentials = try Credentials.resolve(job: input.job, environment: environment)
        } catch {
            throw CLIError(.usage, error.description)
        }
        self.credentials = credentials
        var input = input
        input.job = credentials.canonical(input.job)
        self.input = input
        self.environment = environment
        let store = StoreDirectoryPath(option: storeOption, job: input.job)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: store.url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw CLIError(.cannotWriteStore, "the store path \(store.display) is a file, not a directory; "
                           + "give --store (or the job's \"store\") a directory")
        }
        self.store = store
        let lock = PlanSession.readLock(store)
        self.lock = lock
        let epoch = try PlanSession.epoch(lock: lock, store: store, environment: environment)
        self.epoch = epoch
        var opened: [MBTilesArchive] = []
        do {
            let routes = try OriginRouter.routes(for: input.job.origins) { url in
                let archive = try MBTilesArchive(url: url)
                opened.append(archive)
                return archive
            }
            let http = try HTTPFetcher(configuration: HTTPFetcher.Configuration(
                settings: input.job.download,
                rewrite: { url in credentials.requestURL(url) },
                now: { epoch }, trust: TLSTrust(environment: environment)))
            fetcher = OriginRouter(routes: routes, http: http, secrets: credentials.secrets)
        } catch let error as StoreError {
            throw CLIError(.missingInput, "cannot open an origin archive: \(error.message)", cause: "\(error)")
        } catch {
            throw CLIError(.failure, "cannot set up downloads: \(error)")
        }
        archives = opened
    }

    /// The lock of the store, if there is one this version reads.
    static func readLock(_ store: StoreDirectoryPath) -> LockDocument? {
        guard let json = try? AtomicFile.readJSON(from: store.lockURL) else { return nil }
        return LockDocument(json: json)
    }

    /// The environment variable that stands in for the clock (Unix seconds), for tests and for
    /// reruns that must reproduce a build without SOURCE_DATE_EPOCH.
    static let clockVariable = "PROVISION_NOW"

    /// The clock: `PROVISION_NOW` when it is a number, else the wall clock (Unix seconds). The
    /// one place the binary reads the time, for expiry and for a build without SOURCE_DATE_EPOCH.
    static func now(_ environment: [String: String]) -> Int64 {
        environment[clockVariable].flatMap(Int64.init) ?? Int64(Date().timeIntervalSince1970)
    }

    /// The time of this build: `SOURCE_DATE_EPOCH` when set (the reproducible-builds convention);
    /// else the time of an unfinished build this one resumes (an apply that was killed, or stopped
    /// partial or on a full disk); else the clock (`PROVISION_NOW` when set).
    ///
    /// Why: every row without an upstream `Last-Modified` carries the build time as its
    /// `modified`, which is what makes MapLibre's side-load merge replace it on devices; one build
    /// must have one time, however often it is resumed.
    static func epoch(lock: LockDocument?, store: StoreDirectoryPath,
                      environment: [String: String]) throws(CLIError) -> Int64 {
        func seconds(_ name: String) throws(CLIError) -> Int64? {
            guard let text = environment[name] else { return nil }
            guard let value = Int64(text), value >= 0 else {
                throw CLIError(.usage, "\(name) must be a non-negative integer (Unix seconds), not '\(text)'")
            }
            return value
        }
        if let fixed = try seconds("SOURCE_DATE_EPOCH") { return fixed }
        let clock = try seconds(clockVariable) ?? now(environment)
        if let lock, lock.regions.contains(where: { !$0.isComplete }) { return lock.epoch }
        let stamps = [store.databaseURL, store.partialBuildURL].compactMap(OfflineDatabase.latestStamp(at:))
        if let unfinished = stamps.max(), unfinished > (lock?.epoch ?? -1) { return unfinished }
        return max(clock, (lock?.epoch ?? -1) + 1)
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
        var subjects: [String: String] = [:]
        for pack in job.stylePacks { subjects[pack.style] = subjects[pack.style] ?? "style pack '\(pack.id)'" }
        let styles = try fetchDocuments(job.stylePacks.map { FetchRequest(url: $0.style, kind: .style) }, store: database,
                                        subjects: subjects)
        documents.merge(styles) { a, _ in a }

        var resolvedStyles: [String: ResolvedStyle] = [:]
        var tileJSONURLs: [String] = []
        for pack in job.stylePacks {
            guard let body = styles[pack.style] else { continue }
            let json = try parseDocument(body.data, url: pack.style, of: "style pack '\(pack.id)'")
            do {
                let resolved = try StyleResolver.resolve(styleURL: pack.style, style: json, pack: pack)
                try credentials.check(resolved.resources.map(\.url), subject: "style pack '\(pack.id)'")
                resolvedStyles[pack.id] = resolved
                tileJSONURLs += resolved.tileJSONURLs
                for url in resolved.tileJSONURLs { subjects[url] = subjects[url] ?? "style pack '\(pack.id)'" }
            } catch let error as CredentialsError {
                throw CLIError(.usage, error.description)
            } catch let error as PlanningError {
                throw CLIError(.invalidJob, "style \(pack.style) of style pack '\(pack.id)' cannot be used",
                               diagnostics: [error.diagnostic(file: pack.style)])
            } catch {
                throw CLIError(.failure, "style \(pack.style): \(error)")
            }
        }
        for region in job.regions {
            let urls = region.tilesets.filter { !Self.isTemplate($0) }
            tileJSONURLs += urls
            for url in urls { subjects[url] = subjects[url] ?? "region '\(region.id)'" }
        }
        let tileJSONs = try fetchDocuments(Array(Set(tileJSONURLs)).sorted().map { FetchRequest(url: $0, kind: .source) },
                                           store: database, subjects: subjects)
        documents.merge(tileJSONs) { a, _ in a }

        var packs: [String: ResolvedPack] = [:]
        var notes: [PlanNote] = []
        for pack in job.stylePacks {
            guard let resolved = resolvedStyles[pack.id] else { continue }
            notes += resolved.notes
            let regions = job.regions.filter { $0.stylePacks.contains(pack.id) }
            var overview = resolved.overview
            var sources: [TileSource] = []
            var summaries: [SourceSummary] = []
            for source in resolved.sources {
                let tileJSON = try source.tileJSONURL.map { url throws(CLIError) in
                    try parseDocument(tileJSONs[url]?.data ?? Data(), url: url, of: "source '\(source.name)' of style pack '\(pack.id)'")
                }
                let tileSource: TileSource?
                do {
                    tileSource = try source.resolvedTileset(tileJSON: tileJSON)
                } catch let error as PlanningError {
                    throw CLIError(.invalidJob, "source '\(source.name)' of style pack '\(pack.id)' (style \(pack.style)) "
                                   + "cannot be used", diagnostics: [error.diagnostic()])
                } catch {
                    throw CLIError(.invalidJob, "source '\(source.name)' of style \(pack.style) cannot be used: \(describe(error))")
                }
                guard let tileSource else { continue }
                sources.append(tileSource)
                summaries.append(SourceSummary(name: source.name, tileJSONURL: source.tileJSONURL,
                                               urlTemplate: tileSource.template, scheme: tileSource.scheme.rawValue,
                                               minZoom: tileSource.minZoom, maxZoom: tileSource.maxZoom,
                                               tileSize: tileSource.tileSize))
                if let i = overview.sources.firstIndex(where: { $0.name == source.name }) {
                    overview.sources[i].templateCount = tileSource.templateCount
                    overview.sources[i].zooms = regions.map {
                        RegionZooms(region: $0.id, zooms: tileSource.zoomRange(regionMin: $0.minZoom, regionMax: $0.maxZoom))
                    }
                }
            }
            do {
                try credentials.check(sources.map(\.template), subject: "style pack '\(pack.id)'")
            } catch {
                throw CLIError(.usage, error.description)
            }
            packs[pack.id] = ResolvedPack(pack: pack, resources: resolved.resources, tileSources: sources,
                                          summaries: summaries, overview: overview)
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
        planInput.notes = buildTimeNotes(epoch: epoch) + notes + planInput.notes
        if let note = Self.revalidationNote(documents) { planInput.notes.append(note) }
        return planInput
    }

    /// One line when the build time comes from the clock: the bytes then depend on when it ran.
    func buildTimeNotes(epoch: Int64) -> [PlanNote] {
        guard environment["SOURCE_DATE_EPOCH"] == nil else { return [] }
        let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
        return [PlanNote(subject: "build time", message: "SOURCE_DATE_EPOCH is not set, so rows without an upstream "
                         + "Last-Modified are stamped with this build's time (\(time)) and two builds of the same job "
                         + "differ in those times; set it (e.g. to the commit time) for byte-identical bundles")]
    }

    /// Tells of the documents served with no-cache, no-store or must-revalidate, which the bundle
    /// nonetheless stores with must_revalidate = 0; nil when there are none.
    static func revalidationNote(_ documents: [String: FetchedBody]) -> PlanNote? {
        let asking = documents.filter { $0.value.revalidation.asksRevalidation }.keys.sorted()
        guard let first = asking.first else { return nil }
        let mapLibre = asking.filter { documents[$0]?.revalidation.contains(.mapLibreMustRevalidate) == true }.count
        let subject = asking.count == 1 ? first : "\(first) and \(asking.count - 1) more"
        let what = asking.count == 1 ? "1 document was" : "\(asking.count) documents were"
        return PlanNote(subject: subject, message: "\(what) served with no-cache/no-store/must-revalidate "
            + "(MapLibre would store must_revalidate = 1 for \(mapLibre)); the bundle stores \(asking.count == 1 ? "it" : "them") with "
            + "must_revalidate = 0 so devices use them offline; expiry is the response's Date for no-cache and no-store "
            + "(a device online revalidates at once), else its max-age or Expires")
    }

    /// Why a document that arrived cannot be used (a cap, a BOM, not an object, not a style), or nil
    /// for a failure fetching it again might cure (an HTML error page counts as one).
    static func unusableReason(_ failure: FetchFailure) -> String? {
        switch failure {
        case .unusableDocument(let why): return why
        case .invalidBody(let why) where !why.hasPrefix("HTML page"): return why
        default: return nil
        }
    }

    /// Whether a region's tileset is a tile URL template (else it is a TileJSON URL, whatever its path).
    static func isTemplate(_ url: String) -> Bool {
        TileURLTemplate.isTemplate(url)
    }

    /// Parses a fetched document; `owner` (`style pack 'id'` …) says what needs it, for the message.
    private func parseDocument(_ data: Data, url: String, of owner: String? = nil) throws(CLIError) -> JSONValue {
        do {
            return try JSONValue.parse(data)
        } catch {
            let what = owner.map { " (\($0))" } ?? ""
            throw CLIError(.invalidJob, "\(url)\(what) is not valid JSON: \(error)")
        }
    }

    /// Fetches documents; a failed fetch falls back to the store's copy, else fails with 69, or
    /// with 65 when every failure is a body that arrived but cannot be used (a style that is not
    /// an object, a TileJSON without tiles; not an HTML error page). `subjects` names the style
    /// pack or region each URL belongs to, for messages.
    private func fetchDocuments(_ requests: [FetchRequest], store: OfflineDatabase?,
                                subjects: [String: String]) throws(CLIError) -> [String: FetchedBody] {
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
        var refused: [String] = []
        var unusable: [(url: String, diagnostic: Diagnostic)] = []
        for (request, failure) in failures {
            if let stored = try? store?.resourceData(url: request.url) {
                bodies[request.url] = FetchedBody(data: stored)
            } else if failure.isFatal {
                let subject = subjects[request.url].map { " of \($0)" } ?? ""
                refused.append("\(request.url)\(subject): the access token was refused (\(failure)); check that it is "
                               + "valid and has the scopes this style needs")
            } else if let why = Self.unusableReason(failure) {
                let kind = request.kind == .style ? "style " : "TileJSON "
                unusable.append((kind + request.url, Diagnostic(file: URLRedaction.redact(request.url), pointer: "", message: why)))
            } else {
                let subject = subjects[request.url].map { " (\($0))" } ?? ""
                unavailable.append("\(request.url)\(subject): \(failure)")
            }
        }
        func redacted(_ text: String) -> String { credentials.secrets.redact(URLRedaction.redact(text)) }
        if !refused.isEmpty {
            throw CLIError(.upstreamUnavailable, redacted(refused.sorted().joined(separator: "\n")))
        }
        if unavailable.isEmpty, let first = unusable.first {
            let url = first.url.split(separator: " ", maxSplits: 1).last.map(String.init) ?? first.url
            let what = unusable.count == 1 ? "\(first.url)\(subjects[url].map { " of \($0)" } ?? "")" : "\(unusable.count) documents"
            throw CLIError(.invalidJob, redacted("\(what) cannot be used"), diagnostics: unusable.map(\.diagnostic))
        }
        unavailable += unusable.map { "\($0.url): invalid body: \($0.diagnostic.message)" }
        unavailable = unavailable.map(redacted)
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
    /// Where an apply writes the next `offline.db` before renaming it into place.
    var partialBuildURL: URL { url.appendingPathComponent(StoreDirectory.databaseName + ".canonical") }
    /// The path as the user will recognise it.
    var display: String { url.standardizedFileURL.path }
}

/// Checks that an output file (`--report`, `--out`) can be written, before any work is done.
///
/// - Throws: exit 73 naming the path and why (no such directory, not writable, a directory).
func checkWritableOutput(_ path: String, flag: String) throws(CLIError) {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
        guard !isDirectory.boolValue else {
            throw CLIError(.cannotWriteStore, "cannot write \(flag) \(path): it is a directory")
        }
        guard access(url.path, W_OK) == 0 else {
            throw CLIError(.cannotWriteStore, "cannot write \(flag) \(path): the file is not writable")
        }
        return
    }
    let directory = url.deletingLastPathComponent()
    guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw CLIError(.cannotWriteStore, "cannot write \(flag) \(path): the directory \(directory.path) does not exist")
    }
    guard access(directory.path, W_OK) == 0 else {
        throw CLIError(.cannotWriteStore, "cannot write \(flag) \(path): the directory \(directory.path) is not writable")
    }
}

/// A one-line description of an error, for messages.
func describe(_ error: Error) -> String {
    if let store = error as? StoreError, store.code == .corrupt {
        return "offline.db is damaged (SQLite reports: \(store.message.components(separatedBy: " in \"").first ?? store.message)); "
            + "run 'provision apply --repair' to rebuild it from what can still be read and fresh downloads"
    }
    if let store = error as? StoreError { return store.message }
    if let planning = error as? PlanningError { return planning.description }
    return String(describing: error)
}
