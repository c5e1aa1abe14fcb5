import Foundation
import ProvisionCodecs
import ProvisionModel

/// A PMTiles v3 archive on an HTTP(S) server used as a tile origin (`pmtiles:https://…`), read
/// with range requests through the HTTP fetcher: the same transfers, retries, rate limits and
/// size caps as any download.
///
/// `open` reads the first 16 KiB (the header and root directory) once and pins the archive's
/// version (`ArchiveVersion`: ETag, else Last-Modified, and size); every later answer must
/// match it, else the run stops with `FetchFailure.changed`. A tile is one range request for
/// its bytes, found in the root or in a leaf directory. A leaf directory is read once however
/// many tiles need it: the first such tile sends the request and waits, the others wait with it,
/// and all are looked up again when it arrives. Leaves are kept in `PMTilesIndex`'s bounded
/// cache. Used by one thread at a time (the fetch loop's).
public final class RemotePMTilesArchive {
    /// The archive URL, requested as written (messages show it redacted).
    public let url: String
    let version: ArchiveVersion
    private let cacheBudget: Int
    private(set) var index: PMTilesIndex?
    /// Tiles waiting for a leaf directory, by the leaf's offset.
    private var waiting: [UInt64: [FetchRequest]] = [:]
    /// The leaf directory reads in flight, by their request URL.
    private var reading: [String: ByteRange] = [:]
    /// Leaf directories that could not be read, and why: tiles under them fail the same way.
    private var failedLeaves: [UInt64: FetchFailure] = [:]
    /// Tiles whose leaf directory arrived, to be looked up again, in the order they were pulled
    /// (from `releasedHead` on): the store's writer takes tiles in that order, and holds in
    /// memory those that arrive before an earlier one.
    private var released: [FetchRequest] = []
    private var releasedHead = 0
    /// Tiles waiting for a directory or released and not yet looked up again.
    private(set) var heldCount = 0

    /// An archive at `url`, not read yet (see `open(using:)`).
    public init(url: String, cacheBudget: Int = PMTilesCache.defaultBudget) {
        self.url = url
        self.version = ArchiveVersion(displayURL: URLSecrets().redact(url))
        self.cacheBudget = cacheBudget
    }

    /// The archive as messages name it.
    public var displayURL: String { version.displayURL }

    /// The archive's header, once open.
    public var header: PMTiles.Header? { index?.header }

    /// How many leaf directories the cache holds.
    var cachedLeaves: Int { index?.cached.leaves ?? 0 }

    /// Reads the header and root directory (one range request, two when the root lies past the
    /// first 16 KiB) and pins the archive's version.
    ///
    /// - Throws: `ArchiveOpenError`: `.unavailable` when the server cannot be reached, has no
    ///   archive there, or does not serve byte ranges; `.invalid` when the bytes are not a PMTiles
    ///   v3 archive provision can read.
    public func open(using http: HTTPFetcher) throws(ArchiveOpenError) {
        guard index == nil else { return }
        let head = try read(ByteRange(offset: 0, count: UInt64(PMTiles.rootFetchSize)), using: http)
        index = try PMTilesIndex(name: displayURL, head: head, size: version.size, cacheBudget: cacheBudget) { range throws(ArchiveOpenError) in
            try read(range, using: http)
        }
    }

    /// One range of the archive, fetched on its own (while opening).
    private func read(_ range: ByteRange, using http: HTTPFetcher) throws(ArchiveOpenError) -> Data {
        let result = http.fetchOne(TransportRequest(
            request: FetchRequest(url: url, kind: .unknown), url: url, range: range, archive: version, isRaw: true))
        switch result {
        case .success(let body): return body.data
        case .failure(.notFound):
            throw ArchiveOpenError(.unavailable, "there is no PMTiles archive at \(displayURL) (HTTP 404)")
        case .failure(let failure):
            throw ArchiveOpenError(.unavailable, "cannot read the PMTiles archive \(displayURL) (\(range)): \(URLSecrets().redacted(failure))")
        }
    }

    /// What to do for a request routed to this archive.
    enum Step {
        /// Fetch this: the tile's bytes, or a leaf directory the tile waits for.
        case fetch(TransportRequest)
        /// Answered without the network: an absent tile (`.notFound`), an empty one, or a failure.
        case answer(Result<Data, FetchFailure>)
        /// The tile waits for a leaf directory already being read.
        case held
    }

    /// Looks a tile request up: its range, the leaf directory to read first, or an answer.
    func step(_ request: FetchRequest) -> Step {
        guard let index else { return .answer(.failure(.unsupported("the PMTiles archive \(displayURL) is not open"))) }
        guard request.kind == .tile, let tile = request.tile else {
            return .answer(.failure(.unsupported("a tile archive serves only tiles, not \(request.kind.name) \(request.url)")))
        }
        switch index.lookup(tile) {
        case .failure(let failure): return .answer(.failure(failure))
        case .success(.absent): return .answer(.failure(.notFound))
        case .success(.tile(nil)): return .answer(.success(Data()))
        case .success(.tile(let range?)):
            return .fetch(TransportRequest(request: request, url: url, range: range, archive: version))
        case .success(.leaf(let range)):
            if let failure = failedLeaves[range.offset] { return .answer(.failure(failure)) }
            heldCount += 1
            if waiting[range.offset] != nil {
                waiting[range.offset, default: []].append(request)
                return .held
            }
            waiting[range.offset] = [request]
            let leafURL = "\(url)#pmtiles-leaf-\(range.offset)-\(range.last)"
            reading[leafURL] = range
            return .fetch(TransportRequest(request: FetchRequest(url: leafURL, kind: .unknown), url: url, range: range,
                                           archive: version, isRaw: true))
        }
    }

    /// Whether `request` is one of this archive's leaf directory reads.
    func owns(_ request: FetchRequest) -> Bool {
        request.kind == .unknown && reading[request.url] != nil
    }

    /// Takes in a leaf directory read: the tiles that waited for it are released to be looked up
    /// again, or, when it failed, returned with the failure to report for each.
    func receive(_ request: FetchRequest, _ result: Result<FetchedBody, FetchFailure>) -> [(FetchRequest, FetchFailure)] {
        guard let range = reading.removeValue(forKey: request.url) else { return [] }
        let tiles = waiting.removeValue(forKey: range.offset) ?? []
        var failure: FetchFailure?
        switch result {
        case .success(let body): failure = index?.addLeaf(range, data: body.data)
        case .failure(let why): failure = why
        }
        guard let failure else {
            released.append(contentsOf: tiles)
            return []
        }
        heldCount -= tiles.count
        // A changed or abandoned read says nothing about the leaf itself: do not remember it.
        if case .invalidBody = failure { failedLeaves[range.offset] = failure }
        return tiles.map { ($0, failure) }
    }

    /// The next tile released by an arrived leaf directory, to be looked up again.
    func takeReleased() -> FetchRequest? {
        guard releasedHead < released.count else { return nil }
        let request = released[releasedHead]
        releasedHead += 1
        if releasedHead == released.count {
            released.removeAll(keepingCapacity: true)
            releasedHead = 0
        }
        heldCount -= 1
        return request
    }

    /// Every tile still held (the run stopped before their directories arrived or before they
    /// were looked up again); afterwards none is.
    func drain() -> [FetchRequest] {
        let held = Array(released[releasedHead...]) + waiting.values.flatMap { $0 }
        released = []
        releasedHead = 0
        waiting = [:]
        reading = [:]
        heldCount = 0
        return held
    }
}
