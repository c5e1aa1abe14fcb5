import Foundation
import ProvisionFoundation
import ProvisionModel

/// A fetcher that sends each canonical URL to the origin its longest matching prefix names.
///
/// A route matches the canonical URL (`mapbox://styles/…`, the URL the store records) or, when
/// no route does, the request URL the HTTP fetcher's `rewrite` maps it to
/// (`https://api.mapbox.com/styles/v1/…`, with its key), so a mirror or caching proxy of an
/// API works under either prefix; a match on the canonical URL wins. Local origins (directories,
/// archives) are read on the calling thread and their bodies verified on worker threads, the
/// answers delivered in request order (`OrderedPool`); HTTP requests, rewritten to a mirror base or
/// left as they are when no route matches, go through one `HTTPFetcher`, and so do the range
/// requests of remote PMTiles archives (`RemotePMTilesArchive`), whose tiles wait in the router
/// while a leaf directory they need is read. Every body passes the `Verifier`, and every body
/// but a tile is scrubbed of the job's secrets, before it is delivered.
public final class OriginRouter: Fetcher, RetryCounting {
    /// Where requests under a canonical URL prefix are served from.
    public enum Route {
        /// Files of a local directory.
        case directory(String, URL)
        /// Tiles of an opened archive.
        case archive(String, TileArchive)
        /// Tiles of a PMTiles archive read over HTTP with range requests.
        case remoteArchive(String, RemotePMTilesArchive)
        /// Another HTTP(S) base URL; the rest of the canonical URL is appended to it.
        case http(String, String)

        /// The canonical URL prefix.
        public var prefix: String {
            switch self {
            case .directory(let prefix, _), .archive(let prefix, _), .remoteArchive(let prefix, _), .http(let prefix, _):
                return prefix
            }
        }
    }

    /// The routes, longest prefix first.
    public let routes: [Route]
    /// The remote PMTiles archives of the routes.
    let remoteArchives: [RemotePMTilesArchive]
    let http: HTTPFetcher?
    private let verifier: Verifier
    /// What a tile absent from a local origin means (HTTP 404s follow the HTTP fetcher's setting).
    public let missingTiles: MissingTilePolicy
    /// The secrets removed from every document before it is delivered (see `URLSecrets.scrub`).
    public let secrets: URLSecrets
    /// How many threads verify bodies read from local origins (see `OrderedPool`): one per
    /// processor, at most four.
    public var localWorkers = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Creates a router; with `http` nil, requests that need the network fail as `.unsupported`.
    /// `verifier` and `missingTiles` default to the HTTP fetcher's (else `Verifier()` and `.fail`).
    public init(routes: [Route], http: HTTPFetcher?, verifier: Verifier? = nil,
                missingTiles: MissingTilePolicy? = nil, secrets: URLSecrets = URLSecrets()) {
        self.secrets = secrets
        self.routes = routes.enumerated()
            .sorted { ($0.element.prefix.count, $1.offset) > ($1.element.prefix.count, $0.offset) }
            .map(\.element)
        self.remoteArchives = self.routes.compactMap { route in
            if case .remoteArchive(_, let archive) = route { return archive } else { return nil }
        }
        self.http = http
        self.verifier = verifier ?? http?.verifier ?? Verifier()
        self.missingTiles = missingTiles ?? http?.configuration.missingTiles ?? .fail
    }

    /// Routes for a job file's origins; `openArchive` opens MBTiles mirrors (the store's reader),
    /// local PMTiles archives are opened here, remote ones only by `openRemoteArchives()`.
    ///
    /// - Throws: what `openArchive` throws, or `ArchiveOpenError` for a local PMTiles archive.
    public static func routes(for origins: [Origin], openArchive: (URL) throws -> TileArchive) throws -> [Route] {
        try origins.map { origin in
            switch origin.mirror {
            case .directory(let directory): return .directory(origin.prefix, directory)
            case .mbtiles(let file): return .archive(origin.prefix, try openArchive(file))
            case .pmtiles(let file): return .archive(origin.prefix, try PMTilesFileArchive(url: file))
            case .remotePMTiles(let url): return .remoteArchive(origin.prefix, RemotePMTilesArchive(url: url))
            case .http(let base): return .http(origin.prefix, base)
            }
        }
    }


    /// Reads the header and root directory of every remote PMTiles archive (once), through the
    /// HTTP fetcher, pinning each archive's version for the rest of the run.
    ///
    /// - Throws: `ArchiveOpenError` for the first archive that cannot be opened.
    public func openRemoteArchives() throws(ArchiveOpenError) {
        for archive in remoteArchives {
            guard let http else {
                throw ArchiveOpenError(.unavailable, "no network transport to read the PMTiles archive \(archive.displayURL)")
            }
            try archive.open(using: http)
        }
    }

    /// The route with the longest prefix of `url`, or nil for the network as-is.
    public func route(for url: String) -> Route? {
        routes.first { url.hasPrefix($0.prefix) }
    }

    /// The route of canonical `url` and the URL it matched: the canonical URL when a route has
    /// a prefix of it, else the request URL (`rewrite`), else nil and the request URL.
    public func resolve(_ url: String) -> (route: Route?, url: String) {
        if let route = route(for: url) { return (route, url) }
        let requestURL = http?.configuration.rewrite(url) ?? url
        return (route(for: requestURL), requestURL)
    }

    /// The URL the network transport fetches for a canonical URL: on a mirror, the rest of the
    /// request URL (with its keys) after the route's prefix.
    public func transportURL(for url: String) -> String {
        let resolved = resolve(url)
        guard case .http(let prefix, let base)? = resolved.route else { return resolved.url }
        let request = resolved.url == url ? (http?.configuration.rewrite(url) ?? url) : resolved.url
        return base + (request.hasPrefix(prefix) ? request : resolved.url).dropFirst(prefix.count)
    }

    /// Retries the HTTP transport has made.
    public var retryCount: Int { http?.retryCount ?? 0 }

    /// Fetches every request from its origin, calling `onResult` on the calling thread.
    public func fetchAll<I: IteratorProtocol>(
        _ requests: inout I,
        onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void
    ) where I.Element == FetchRequest {
        withoutActuallyEscaping(onResult) { deliver in
            let onResult = { (request: FetchRequest, result: Result<FetchedBody, FetchFailure>) in
                deliver(request, result.flatMap { self.scrubbed($0, kind: request.kind) }
                    .mapError { self.secrets.redacted($0) })
            }
            let verifier = self.verifier, missingTiles = self.missingTiles
            let pool = OrderedPool<LocalRead, LocalRead.Answer>(workers: localWorkers) { read in
                (read.request, OriginRouter.answer(read.request, read.bytes, verifier: verifier, missingTiles: missingTiles))
            }
            defer { pool.close() }
            var network = RoutedRequests(base: requests, router: self, pool: pool, deliver: { onResult($0.request, $0.result) })
            if let http {
                http.fetchAll(&network) { request, result in
                    if let archive = self.remoteArchives.first(where: { $0.owns(request) }) {
                        for (tile, failure) in archive.receive(request, result) { onResult(tile, .failure(failure)) }
                    } else {
                        onResult(request, result)
                    }
                }
            } else {
                while case .request(let transport) = network.pull() {
                    onResult(transport.request, .failure(.unsupported("no network transport for \(transport.request.url)")))
                }
            }
            // Tiles still waiting for a directory when the run stopped (after a fatal failure).
            for archive in remoteArchives {
                for request in archive.drain() {
                    onResult(request, .failure(.abandoned("the run stopped before the PMTiles directory of this tile was read")))
                }
            }
            requests = network.base
        }
    }

    /// `body` without the job's secrets: URLs in documents scrubbed, and any other body that
    /// still holds a secret refused, so nothing stored carries one.
    func scrubbed(_ body: FetchedBody, kind: ResourceKind) -> Result<FetchedBody, FetchFailure> {
        guard kind != .tile, !body.data.isEmpty else { return .success(body) }
        let isDocument = kind == .style || kind == .source || kind == .spriteJSON
        if !isDocument {
            return secrets.leaks(in: body.data) ? .failure(.invalidBody(SecretLeak().description)) : .success(body)
        }
        do {
            let data = try secrets.scrub(body.data)
            guard data != body.data else { return .success(body) }
            var scrubbed = body
            scrubbed.data = data
            scrubbed.zlibData = nil
            return .success(scrubbed)
        } catch {
            return .failure(.invalidBody(error.description))
        }
    }

    /// What the transport fetches for `request`, or nil when it was answered here: read from a
    /// local origin or answered by a remote archive's directories (`local` gets the bytes, to be
    /// verified), or held until the archive directory it needs arrives.
    fileprivate func transport(for request: FetchRequest, local: (LocalRead) -> Void) -> TransportRequest? {
        let read: Result<Data, FetchFailure>
        let resolved = resolve(request.url)
        var routed = request
        routed.url = resolved.url
        switch resolved.route {
        case .directory(let prefix, let directory)?:
            read = DirectoryOrigin(prefix: prefix, directory: directory).read(routed)
        case .archive(let prefix, let archive)?:
            read = ArchiveOrigin(prefix: prefix, archive: archive).read(routed)
        case .remoteArchive(_, let archive)?:
            switch archive.step(request) {
            case .fetch(let transport): return transport
            case .held: return nil
            case .answer(let answer): read = answer
            }
        case .http?, nil:
            return TransportRequest(request: request, url: transportURL(for: request.url))
        }
        local(LocalRead(request: request, bytes: read))
        return nil
    }

    /// What a local read (or an archive directory) `bytes` gives for `request`: the verified
    /// body, or an empty tile when the tile is absent and the job allows that, or why not.
    static func answer(_ request: FetchRequest, _ bytes: Result<Data, FetchFailure>, verifier: Verifier,
                       missingTiles: MissingTilePolicy) -> Result<FetchedBody, FetchFailure> {
        if case .failure(.notFound) = bytes, request.kind == .tile, missingTiles == .skip { return .success(.missingTile) }
        // `fetchAll` redacts every failure it delivers with the job's secrets.
        return bytes.flatMap { verifier.verifiedBody($0, kind: request.kind, url: request.url) }
    }
}

/// A request a local origin answered, with its bytes as read (not yet verified).
struct LocalRead: Sendable {
    var request: FetchRequest
    var bytes: Result<Data, FetchFailure>

    /// The verified answer, as `fetchAll` delivers it.
    typealias Answer = (request: FetchRequest, result: Result<FetchedBody, FetchFailure>)
}

/// The transport requests of an iterator's requests: local ones are answered as a side effect
/// (verified in `pool`, whose answers are delivered in order, all of them before anything is
/// returned), and tiles of remote archives wait while their leaf directory is read, then come first.
private struct RoutedRequests<Base: IteratorProtocol>: TransportSource where Base.Element == FetchRequest {
    var base: Base
    let router: OriginRouter
    let pool: OrderedPool<LocalRead, LocalRead.Answer>
    let deliver: (LocalRead.Answer) -> Void
    /// The most tiles held waiting for directories before no more are pulled: tiles pulled after
    /// a held one and sent ahead of it arrive out of the store's order, which its writer keeps in
    /// memory (briefly), so how far ahead they may run is kept short.
    static var heldCap: Int { 256 }

    mutating func pull() -> TransportPull {
        let pulled = next()
        pool.drain(deliver)
        return pulled
    }

    private mutating func next() -> TransportPull {
        let archives = router.remoteArchives
        while true {
            if let request = Self.released(from: archives) {
                if let transport = transport(for: request) { return .request(transport) }
                continue
            }
            let held = archives.reduce(0) { $0 + $1.heldCount }
            if held >= Self.heldCap { return .later }
            guard let request = base.next() else { return held > 0 ? .later : .done }
            if let transport = transport(for: request) { return .request(transport) }
        }
    }

    /// `router.transport(for:)`, its local answers verified in the pool.
    private func transport(for request: FetchRequest) -> TransportRequest? {
        router.transport(for: request) { local in
            pool.add(local, deliver: deliver)
            pool.deliverReady(deliver)
        }
    }

    /// A tile some archive released (its leaf directory arrived), taken from that archive.
    private static func released(from archives: [RemotePMTilesArchive]) -> FetchRequest? {
        for archive in archives {
            if let request = archive.takeReleased() { return request }
        }
        return nil
    }
}
