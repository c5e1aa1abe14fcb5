import Foundation
import ProvisionModel

/// A fetcher that sends each canonical URL to the origin its longest matching prefix names.
///
/// A route matches the canonical URL (`mapbox://styles/…`, the URL the store records) or, when
/// no route does, the request URL the HTTP fetcher's `rewrite` maps it to
/// (`https://api.mapbox.com/styles/v1/…`, with its key), so a mirror or caching proxy of an
/// API works under either prefix; a match on the canonical URL wins. Local origins (directories,
/// archives) are read on the calling thread and their bodies verified on worker threads, the
/// answers delivered in request order (`OrderedPool`); HTTP requests, rewritten to a mirror base or
/// left as they are when no route matches, go through one `HTTPFetcher`. Every body passes the
/// `Verifier`, and every body but a tile is scrubbed of the job's secrets, before it is delivered.
public final class OriginRouter: Fetcher, RetryCounting {
    /// Where requests under a canonical URL prefix are served from.
    public enum Route {
        /// Files of a local directory.
        case directory(String, URL)
        /// Tiles of an opened archive.
        case archive(String, TileArchive)
        /// Another HTTP(S) base URL; the rest of the canonical URL is appended to it.
        case http(String, String)

        /// The canonical URL prefix.
        public var prefix: String {
            switch self {
            case .directory(let prefix, _), .archive(let prefix, _), .http(let prefix, _): return prefix
            }
        }
    }

    /// The routes, longest prefix first.
    public let routes: [Route]
    private let http: HTTPFetcher?
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
        self.http = http
        self.verifier = verifier ?? http?.verifier ?? Verifier()
        self.missingTiles = missingTiles ?? http?.configuration.missingTiles ?? .fail
    }

    /// Routes for a job file's origins; `openArchive` opens MBTiles mirrors (the store's reader).
    public static func routes(for origins: [Origin], openArchive: (URL) throws -> TileArchive) rethrows -> [Route] {
        try origins.map { origin in
            switch origin.mirror {
            case .directory(let directory): return .directory(origin.prefix, directory)
            case .mbtiles(let file): return .archive(origin.prefix, try openArchive(file))
            case .http(let base): return .http(origin.prefix, base)
            }
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
            var network = NetworkRequests(base: requests, pool: pool, read: { self.readLocally($0) },
                                          deliver: { onResult($0.request, $0.result) })
            if let http {
                http.fetchAll(&network, transportURL: { self.transportURL(for: $0.url) }, onResult: onResult)
            } else {
                while let request = network.next() {
                    onResult(request, .failure(.unsupported("no network transport for \(request.url)")))
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

    /// Reads `request` from its local origin; nil when it needs the network.
    private func readLocally(_ request: FetchRequest) -> LocalRead? {
        let resolved = resolve(request.url)
        var routed = request
        routed.url = resolved.url
        switch resolved.route {
        case .directory(let prefix, let directory)?:
            return LocalRead(request: request, bytes: DirectoryOrigin(prefix: prefix, directory: directory).read(routed))
        case .archive(let prefix, let archive)?:
            return LocalRead(request: request, bytes: ArchiveOrigin(prefix: prefix, archive: archive).read(routed))
        case .http?, nil:
            return nil
        }
    }

    /// What a local origin's answer `bytes` to `request` delivers: the verified body, or why not
    /// (a tile the origin lacks is a missing tile when the job allows that).
    static func answer(_ request: FetchRequest, _ bytes: Result<Data, FetchFailure>, verifier: Verifier,
                       missingTiles: MissingTilePolicy) -> Result<FetchedBody, FetchFailure> {
        if case .failure(.notFound) = bytes, request.kind == .tile, missingTiles == .skip { return .success(.missingTile) }
        return bytes.flatMap { verifier.verifiedBody($0, kind: request.kind) }.mapError(\.redacted)
    }
}

/// A request a local origin answered, with its bytes as read (not yet verified).
struct LocalRead: Sendable {
    var request: FetchRequest
    var bytes: Result<Data, FetchFailure>

    /// The verified answer, as `fetchAll` delivers it.
    typealias Answer = (request: FetchRequest, result: Result<FetchedBody, FetchFailure>)
}

/// The requests of an iterator that need the network. The others are read from their local
/// origin as a side effect and verified in `pool`, whose answers are delivered in order, all of
/// them before a network request or the end is returned.
private struct NetworkRequests<Base: IteratorProtocol>: IteratorProtocol where Base.Element == FetchRequest {
    var base: Base
    let pool: OrderedPool<LocalRead, LocalRead.Answer>
    let read: (FetchRequest) -> LocalRead?
    let deliver: (LocalRead.Answer) -> Void

    mutating func next() -> FetchRequest? {
        while let request = base.next() {
            guard let local = read(request) else {
                pool.drain(deliver)
                return request
            }
            pool.add(local, deliver: deliver)
            pool.deliverReady(deliver)
        }
        pool.drain(deliver)
        return nil
    }
}
