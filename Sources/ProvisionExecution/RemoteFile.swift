import Foundation
import ProvisionModel

/// A file on an HTTP(S) server read with range requests through the HTTP fetcher (the same
/// transfers, retries, per-host caps, rate limits and size caps as any download), its version
/// pinned by the first answer: a routing pack's tile extract (`"extract": "https://…/graph.tar"`).
///
/// Why pinned: the caller reads an index first and then the bytes it points at; an answer from
/// another version of the file (another ETag, else Last-Modified, or size) would be bytes the
/// index does not describe, so it is `FetchFailure.changed`, which stops the run.
public final class RemoteFile {
    /// The file's canonical URL (as the job names it).
    public let url: String
    /// The URL actually requested (a mirror's, with its keys; never printed).
    let transportURL: String
    let version: ArchiveVersion
    private let http: HTTPFetcher

    init(url: String, transportURL: String, noun: String, consequence: String, http: HTTPFetcher, secrets: URLSecrets) {
        self.url = url
        self.transportURL = transportURL
        self.version = ArchiveVersion(displayURL: secrets.redact(url), noun: noun, consequence: consequence)
        self.http = http
    }

    /// The file as messages name it (redacted).
    public var displayURL: String { version.displayURL }

    /// The file's size, once a range was read.
    public var size: UInt64? { version.size }

    /// The version the first answer pinned, as one line (`ETag "x", 1234 bytes`); nil before.
    public var versionText: String? { version.text }

    /// One range of the file, fetched on its own.
    public func read(_ range: ByteRange) -> Result<Data, FetchFailure> {
        http.fetchOne(TransportRequest(request: FetchRequest(url: url, kind: .unknown), url: transportURL, range: range,
                                       archive: version, isRaw: true)).map(\.data)
    }

    /// Fetches each request's range of the file through one fetch loop; results carry the request,
    /// in completion order.
    public func fetchAll<I: IteratorProtocol>(_ requests: inout I, onResult: (FetchRequest, Result<Data, FetchFailure>) -> Void)
    where I.Element == (FetchRequest, ByteRange) {
        var source = RangeSource(base: requests, file: self)
        http.fetchAll(&source) { request, result in onResult(request, result.map(\.data)) }
        requests = source.base
    }

    /// The transport requests of an iterator of ranges of one file.
    private struct RangeSource<Base: IteratorProtocol>: TransportSource where Base.Element == (FetchRequest, ByteRange) {
        var base: Base
        let file: RemoteFile

        mutating func pull() -> TransportPull {
            guard let (request, range) = base.next() else { return .done }
            return .request(TransportRequest(request: request, url: file.transportURL, range: range, archive: file.version,
                                             isRaw: true))
        }
    }
}

extension HTTPFetcher {
    /// One transport request fetched on its own: its answer.
    func fetchOne(_ transport: TransportRequest) -> Result<FetchedBody, FetchFailure> {
        var source = OneTransport(transport: transport)
        var result: Result<FetchedBody, FetchFailure> = .failure(.abandoned("not fetched"))
        fetchAll(&source) { _, answer in result = answer }
        return result
    }
}

/// A source of exactly one transport request.
private struct OneTransport: TransportSource {
    var transport: TransportRequest?

    mutating func pull() -> TransportPull {
        guard let next = transport else { return .done }
        transport = nil
        return .request(next)
    }
}

extension OriginRouter {
    /// Where a file the job names by URL is read from.
    public enum FileLocation {
        /// A file of a directory origin.
        case local(URL)
        /// The network (or an HTTP mirror), with range requests.
        case remote(RemoteFile)
        /// Nowhere: an archive origin serves tiles only, or the URL leaves its directory.
        case unsupported(String)
    }

    /// Where the file at canonical `url` is read from: a directory origin's file, or a remote file
    /// read with range requests through this router's HTTP fetcher (to a mirror when a route says so).
    /// `noun` and `consequence` word the failure of a file that changes while it is read.
    public func file(at url: String, noun: String, consequence: String) -> FileLocation {
        switch resolve(url).route {
        case .directory(let prefix, let directory)?:
            switch DirectoryOrigin(prefix: prefix, directory: directory).fileURL(for: resolve(url).url) {
            case .success(let file): return .local(file)
            case .failure(let failure): return .unsupported("\(failure)")
            }
        case .archive?, .remoteArchive?:
            return .unsupported("the origin of \(secrets.redact(url)) is a tile archive, which serves map tiles only")
        case .http?, nil:
            guard let http else { return .unsupported("no network transport to read \(secrets.redact(url))") }
            return .remote(RemoteFile(url: url, transportURL: transportURL(for: url), noun: noun, consequence: consequence,
                                      http: http, secrets: secrets))
        }
    }
}
