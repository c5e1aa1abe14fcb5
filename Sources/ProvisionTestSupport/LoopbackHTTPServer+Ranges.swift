import Foundation

extension LoopbackHTTPServer.Behaviour {
    /// The answer of a server with byte ranges to `request` for an object `data` with `etag`:
    /// 206 with `Content-Range` for a `Range: bytes=A-B` header (B clipped to the object's end),
    /// 416 for a range past the end, 200 with the whole object without a Range header.
    public static func ranges(of data: Data, etag: String, for request: LoopbackHTTPServer.LoggedRequest)
        -> LoopbackHTTPServer.Behaviour {
        let tag = LoopbackHTTPServer.Header("ETag", etag)
        guard let range = request.headers["range"].flatMap(byteRange) else {
            return .respond(status: 200, headers: [tag], body: data)
        }
        guard range.first < data.count else {
            return .respond(status: 416, headers: [.init("Content-Range", "bytes */\(data.count)")], body: Data())
        }
        let last = min(range.last, data.count - 1)
        return .respond(status: 206, headers: [tag, .init("Content-Range", "bytes \(range.first)-\(last)/\(data.count)")],
                        body: data.subdata(in: range.first..<(last + 1)))
    }

    /// `bytes=A-B` of a Range header; nil for any other form.
    public static func byteRange(_ header: String) -> (first: Int, last: Int)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first <= last else { return nil }
        return (first, last)
    }
}
