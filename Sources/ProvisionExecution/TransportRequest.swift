import Foundation
import ProvisionFoundation
import ProvisionModel

/// `count` bytes of a remote object from `offset`: what an HTTP range request asks for.
public struct ByteRange: Hashable, Sendable, CustomStringConvertible {
    /// The first byte.
    public var offset: UInt64
    /// How many bytes (at least 1).
    public var count: UInt64

    public init(offset: UInt64, count: UInt64) {
        self.offset = offset
        self.count = max(1, count)
    }

    /// The last byte.
    public var last: UInt64 { offset + count - 1 }

    /// `bytes a-b`, as HTTP writes a range.
    public var description: String { "bytes \(offset)-\(last)" }
}

/// One request as the transport carries it out: the URL fetched and, for a read of a remote
/// archive, which bytes of which version of it.
struct TransportRequest: Sendable {
    /// The request results are reported for.
    var request: FetchRequest
    /// The URL actually fetched (may hold keys; never printed).
    var url: String
    /// The bytes asked for with a `Range` header; nil for the whole object.
    var range: ByteRange?
    /// The archive version every answer to a range request must match.
    var archive: ArchiveVersion?
    /// Whether the body is delivered as received, without the checks for its kind: an archive's
    /// header and directories, which the archive origin checks itself.
    var isRaw = false
}

/// What a transport source hands the fetch loop when it has room for work.
enum TransportPull {
    /// The next request to fetch.
    case request(TransportRequest)
    /// Nothing now: more comes once an answer in flight arrives (a tile waiting for its archive
    /// directory).
    case later
    /// Nothing ever again.
    case done
}

/// Where the fetch loop pulls its work from.
protocol TransportSource {
    /// The next piece of work, pulled only when a transfer slot is free.
    mutating func pull() -> TransportPull
}

/// The requests of an iterator, each fetched whole from the URL `transportURL` gives for it.
struct PlainTransportSource<Base: IteratorProtocol>: TransportSource where Base.Element == FetchRequest {
    var base: Base
    let transportURL: (FetchRequest) -> String

    mutating func pull() -> TransportPull {
        guard let request = base.next() else { return .done }
        return .request(TransportRequest(request: request, url: transportURL(request)))
    }
}

/// The version of a remote archive that a run reads, pinned by the first answer: its `ETag`
/// (else its `Last-Modified`) and its size from `Content-Range`. Every later range answer must
/// carry the same, so bytes of two versions of an archive are never mixed: a directory read
/// from one version points at the wrong bytes of the next.
final class ArchiveVersion: Sendable {
    /// The archive URL as messages show it (redacted).
    let displayURL: String
    private struct Pin: Equatable {
        var etag: String?
        var lastModified: String?
        var size: UInt64
    }
    private let pin = Mutex<Pin?>(nil)
    /// What the object is, as messages name it (`the PMTiles archive`, `the tile extract`).
    let noun: String
    /// Why reading on after a change is wrong, as the change's message says it.
    let consequence: String

    init(displayURL: String, noun: String = "the PMTiles archive",
         consequence: String = "its directories no longer match its tiles") {
        self.displayURL = displayURL
        self.noun = noun
        self.consequence = consequence
    }

    /// The archive's size, once pinned.
    var size: UInt64? { pin.read { $0?.size } }

    /// The pinned version as one line (`ETag "x", 1,234 bytes`), once pinned.
    var text: String? {
        pin.read { pinned in
            pinned.map { pinned in
                (pinned.etag.map { "ETag \($0)" } ?? pinned.lastModified.map { "Last-Modified \($0)" } ?? "no validator")
                    + ", \(pinned.size) bytes"
            }
        }
    }

    /// Pins the first answer's validators, or checks a later answer against them: nil when it
    /// matches, else `.changed` naming the archive and what changed.
    func check(etag: String?, lastModified: String?, size: UInt64) -> FetchFailure? {
        pin.withLock { pinned -> FetchFailure? in
            let seen = Pin(etag: etag, lastModified: etag == nil ? lastModified : nil, size: size)
            guard let first = pinned else {
                pinned = seen
                return nil
            }
            var what: [String] = []
            if let before = first.etag, before != etag { what.append("ETag \(before) → \(etag ?? "none")") }
            if first.etag == nil, let before = first.lastModified, before != lastModified {
                what.append("Last-Modified \(before) → \(lastModified ?? "none")")
            }
            if first.size != size { what.append("size \(grouped(Int(clamping: first.size))) → \(grouped(Int(clamping: size))) bytes") }
            guard !what.isEmpty else { return nil }
            return .changed("\(noun) \(displayURL) changed while it was read (\(what.joined(separator: ", "))); "
                            + consequence)
        }
    }
}
