import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Why the documents a plan is resolved from cannot be had, as the user must hear it.
public struct DocumentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure; the command line maps each to its exit status.
    public enum Kind: Sendable, Equatable {
        /// A key or token the style needs is missing from the environment (usage, 64).
        case credentials
        /// A document arrived but cannot be used: not JSON, not a style, a TileJSON without
        /// tiles (invalid input, 65).
        case unusable
        /// An origin could not deliver, or refused the access token (69).
        case unavailable
    }

    public var kind: Kind
    /// One line (or a few) naming the URL and the style pack or region it belongs to.
    public var message: String
    /// Per document, where in it the problem is.
    public var diagnostics: [Diagnostic] = []

    public init(_ kind: Kind, _ message: String, diagnostics: [Diagnostic] = []) {
        self.kind = kind
        self.message = message
        self.diagnostics = diagnostics
    }

    public var description: String { message }
}

/// Fetches the styles and TileJSONs a job needs and resolves every style pack and region
/// tileset into a `PlanInput`. It does no I/O of its own: it is handed a fetch function and
/// the store's copy of each document.
///
/// Why a failed fetch is an error even when the store holds a copy: a plan compares the job's
/// documents as upstream serves them now with the store's; a plan made from the store's own copies
/// would report "no changes" while it checked nothing, and a CI drift check would pass while
/// upstream was down. So an unavailable document is exit 69 naming its URL, and the message says
/// when the store holds a copy.
public struct DocumentResolver {
    /// Fetches documents; every request gets a result, keyed by its URL.
    public typealias Fetch = ([FetchRequest]) -> [String: Result<FetchedBody, FetchFailure>]

    /// The job, its URLs canonical (secret query parameters dropped).
    public var job: Job
    /// The keys the requests carry; checked against every URL a style leads to.
    public var credentials: Credentials
    /// How documents are fetched.
    public var fetch: Fetch
    /// The store's copy of a document, if it has one: named in the message when its origin fails.
    public var storedCopy: (String) -> Data?
    /// Whether documents come from the store's copies and are never fetched (`plan --offline`):
    /// the plan then cannot show upstream drift, and says so (`Plan.driftChecked`).
    public var offline = false

    public init(job: Job, credentials: Credentials, fetch: @escaping Fetch, storedCopy: @escaping (String) -> Data? = { _ in nil }) {
        self.job = job
        self.credentials = credentials
        self.fetch = fetch
        self.storedCopy = storedCopy
    }

    /// Fetches styles, then TileJSONs, and resolves the job; `jobDigest` and `epoch` go into the
    /// plan input as they are.
    public func resolve(jobDigest: String, epoch: Int64) throws(DocumentError) -> PlanInput {
        var documents: [String: FetchedBody] = [:]
        var subjects: [String: String] = [:]
        for pack in job.stylePacks { subjects[pack.style] = subjects[pack.style] ?? "style pack '\(pack.id)'" }
        let styles = try fetchDocuments(job.stylePacks.map { FetchRequest(url: $0.style, kind: .style) }, subjects: subjects)
        documents.merge(styles) { a, _ in a }

        var resolvedStyles: [String: ResolvedStyle] = [:]
        var tileJSONURLs: [String] = []
        for pack in job.stylePacks {
            guard let body = styles[pack.style] else { continue }
            let resolved = try resolveStyle(pack, body: body)
            resolvedStyles[pack.id] = resolved
            tileJSONURLs += resolved.tileJSONURLs
            for url in resolved.tileJSONURLs { subjects[url] = subjects[url] ?? "style pack '\(pack.id)'" }
        }
        for region in job.regions {
            let urls = region.tilesets.filter { !TileURLTemplate.isTemplate($0) }
            tileJSONURLs += urls
            for url in urls { subjects[url] = subjects[url] ?? "region '\(region.id)'" }
        }
        let tileJSONs = try fetchDocuments(Array(Set(tileJSONURLs)).sorted().map { FetchRequest(url: $0, kind: .source) },
                                           subjects: subjects)
        documents.merge(tileJSONs) { a, _ in a }

        var packs: [String: ResolvedPack] = [:]
        var notes: [PlanNote] = []
        for pack in job.stylePacks {
            guard let resolved = resolvedStyles[pack.id] else { continue }
            notes += resolved.notes
            var resolvedPack = try resolvePack(pack, style: resolved, tileJSONs: tileJSONs)
            if pack.glyphs == .used, let template = resolved.glyphsTemplate, let body = styles[pack.style] {
                let style = try parse(body.data, url: pack.style, of: "style pack '\(pack.id)'")
                var tiles: [String: GlyphDemandBuilder.SourceTiles] = [:]
                for (source, summary) in zip(resolvedPack.tileSources, resolvedPack.summaries) where source.type == .vector {
                    tiles[summary.name] = GlyphDemandBuilder.SourceTiles(urlTemplate: source.template, maxZoom: source.maxZoom)
                }
                let outcome = GlyphDemandBuilder.build(style: style, template: template, sources: tiles,
                                                       subject: "stylePack '\(pack.id)'")
                resolvedPack.glyphDemand = outcome.demand
                resolvedPack.resources = Array(Set(resolvedPack.resources + outcome.knownResources)).sorted()
                notes += outcome.notes
            }
            packs[pack.id] = resolvedPack
        }
        var regionTilesets: [String: ResolvedTilesets] = [:]
        for region in job.regions where !region.tilesets.isEmpty {
            regionTilesets[region.id] = try resolveTilesets(region, tileJSONs: tileJSONs)
        }
        var input = PlanInput(job: job, jobDigest: jobDigest, epoch: epoch, packs: packs, regionTilesets: regionTilesets,
                              documents: documents)
        input.notes = notes + input.notes
        if let note = Self.revalidationNote(documents) { input.notes.append(note) }
        return input
    }

    private func resolveStyle(_ pack: StylePack, body: FetchedBody) throws(DocumentError) -> ResolvedStyle {
        let json = try parse(body.data, url: pack.style, of: "style pack '\(pack.id)'")
        do {
            let resolved = try StyleResolver.resolve(styleURL: pack.style, style: json, pack: pack)
            try credentials.check(resolved.resources.map(\.url), subject: "style pack '\(pack.id)'")
            return resolved
        } catch let error as CredentialsError {
            throw DocumentError(.credentials, error.description)
        } catch let error as DocumentProblem {
            throw DocumentError(.unusable, "style \(pack.style) of style pack '\(pack.id)' cannot be used",
                                diagnostics: [error.diagnostic(file: pack.style)])
        } catch {
            throw DocumentError(.unusable, "style \(pack.style) of style pack '\(pack.id)' cannot be used: \(error)")
        }
    }

    private func resolvePack(_ pack: StylePack, style resolved: ResolvedStyle,
                             tileJSONs: [String: FetchedBody]) throws(DocumentError) -> ResolvedPack {
        let regions = job.regions.filter { $0.stylePacks.contains(pack.id) }
        var overview = resolved.overview
        var sources: [TileSource] = []
        var summaries: [SourceSummary] = []
        for source in resolved.sources {
            let tileJSON = try source.tileJSONURL.map { url throws(DocumentError) in
                try parse(tileJSONs[url]?.data ?? Data(), url: url, of: "source '\(source.name)' of style pack '\(pack.id)'")
            }
            let tileSource: TileSource?
            do {
                tileSource = try source.resolvedTileset(tileJSON: tileJSON)
            } catch let error as DocumentProblem {
                throw DocumentError(.unusable, "source '\(source.name)' of style pack '\(pack.id)' (style \(pack.style)) "
                                    + "cannot be used", diagnostics: [error.diagnostic()])
            } catch {
                throw DocumentError(.unusable, "source '\(source.name)' of style \(pack.style) cannot be used: \(error)")
            }
            guard let tileSource else { continue }
            sources.append(tileSource)
            summaries.append(SourceSummary(name: source.name, tileJSONURL: source.tileJSONURL, urlTemplate: tileSource.template,
                                           scheme: tileSource.scheme.rawValue, minZoom: tileSource.minZoom,
                                           maxZoom: tileSource.maxZoom, tileSize: tileSource.tileSize))
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
            throw DocumentError(.credentials, error.description)
        }
        return ResolvedPack(pack: pack, resources: resolved.resources, tileSources: sources, summaries: summaries,
                            overview: overview)
    }

    private func resolveTilesets(_ region: Region, tileJSONs: [String: FetchedBody]) throws(DocumentError) -> ResolvedTilesets {
        var resolved = ResolvedTilesets()
        for tileset in region.tilesets {
            if TileURLTemplate.isTemplate(tileset) {
                resolved.append(TileSource(template: tileset), tileJSONURL: nil)
                continue
            }
            let json = try parse(tileJSONs[tileset]?.data ?? Data(), url: tileset, of: "region '\(region.id)'")
            do {
                resolved.append(try TileSource.from(tileJSON: json, sourceURL: tileset, type: .vector, tileSize: 512),
                                tileJSONURL: tileset)
            } catch {
                throw DocumentError(.unusable, "tileset \(tileset) of region '\(region.id)' cannot be used: \(error)")
            }
        }
        return resolved
    }

    /// Parses a fetched document; `owner` (`style pack 'id'` …) says what needs it.
    private func parse(_ data: Data, url: String, of owner: String) throws(DocumentError) -> JSONValue {
        do {
            return try JSONValue.parse(data)
        } catch {
            throw DocumentError(.unusable, "\(url) (\(owner)) is not valid JSON: \(error)")
        }
    }

    /// Fetches documents; a failed fetch fails as unavailable (the store's copy never stands in:
    /// see the type's comment), or as unusable when every failure is a body that arrived but cannot be used
    /// (a style that is not an object, a TileJSON without tiles; not an HTML error page).
    /// `subjects` names the style pack or region each URL belongs to, for messages.
    private func fetchDocuments(_ requests: [FetchRequest], subjects: [String: String]) throws(DocumentError) -> [String: FetchedBody] {
        guard !requests.isEmpty else { return [:] }
        if offline { return try storedCopies(requests, subjects: subjects) }
        let results = fetch(requests)
        var bodies: [String: FetchedBody] = [:]
        var unavailable: [String] = []
        var refused: [String] = []
        var unusable: [(url: String, diagnostic: Diagnostic)] = []
        for request in requests {
            let failure: FetchFailure
            switch results[request.url] {
            case .success(let body)?:
                bodies[request.url] = body
                continue
            case .failure(let why)?: failure = why
            case nil: failure = .abandoned("not fetched")
            }
            if case .refused = failure {
                let subject = subjects[request.url].map { " of \($0)" } ?? ""
                refused.append("\(request.url)\(subject): \(failure); check that it is valid and has the scopes this "
                               + "style needs")
            } else if let why = Self.unusableReason(failure) {
                let kind = request.kind == .style ? "style " : "TileJSON "
                unusable.append((kind + request.url, Diagnostic(file: credentials.secrets.redact(request.url), pointer: "", message: why)))
            } else {
                let subject = subjects[request.url].map { " (\($0))" } ?? ""
                let stored = storedCopy(request.url) == nil ? ""
                    : " (the store holds a copy, but whether upstream changed it cannot be checked)"
                unavailable.append("\(request.url)\(subject): \(failure)\(stored)")
            }
        }
        let redacted = credentials.secrets.redact
        if !refused.isEmpty {
            throw DocumentError(.unavailable, redacted(refused.sorted().joined(separator: "\n")))
        }
        if unavailable.isEmpty, let first = unusable.first {
            let url = first.url.split(separator: " ", maxSplits: 1).last.map(String.init) ?? first.url
            let what = unusable.count == 1 ? "\(first.url)\(subjects[url].map { " of \($0)" } ?? "")" : "\(unusable.count) documents"
            throw DocumentError(.unusable, redacted("\(what) cannot be used"), diagnostics: unusable.map(\.diagnostic))
        }
        unavailable += unusable.map { "\($0.url): invalid body: \($0.diagnostic.message)" }
        if !unavailable.isEmpty {
            let what = unavailable.count == 1 ? "a document" : "\(unavailable.count) documents"
            throw DocumentError(.unavailable, "cannot fetch \(what) the plan needs:\n  "
                                + unavailable.map(redacted).sorted().joined(separator: "\n  "))
        }
        return bodies
    }

    /// The store's copies of the documents `requests` name (`offline`); a document the store
    /// lacks is unavailable, named with what needs it.
    private func storedCopies(_ requests: [FetchRequest], subjects: [String: String]) throws(DocumentError) -> [String: FetchedBody] {
        var bodies: [String: FetchedBody] = [:]
        var missing: [String] = []
        for request in requests {
            if let stored = storedCopy(request.url) {
                bodies[request.url] = FetchedBody(data: stored)
            } else {
                missing.append("\(request.url)\(subjects[request.url].map { " (\($0))" } ?? "")")
            }
        }
        guard missing.isEmpty else {
            let redacted = { (text: String) in credentials.secrets.redact(text) }
            throw DocumentError(.unavailable, "--offline plans from the store's copies, and the store holds no copy of "
                                + "\(missing.count == 1 ? "a document" : "\(missing.count) documents") the plan needs "
                                + "(plan without --offline to fetch them):\n  " + missing.map(redacted).sorted().joined(separator: "\n  "))
        }
        return bodies
    }

    /// Why a document that arrived cannot be used (a cap, a BOM, not an object, not a style), or
    /// nil for a failure fetching it again might cure (an HTML error page counts as one).
    static func unusableReason(_ failure: FetchFailure) -> String? {
        switch failure {
        case .unusableDocument(let why): return why
        case .invalidBody(let why) where !why.hasPrefix("HTML page"): return why
        default: return nil
        }
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
}
