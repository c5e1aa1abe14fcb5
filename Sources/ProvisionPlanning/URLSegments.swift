/// The parts of a URL string, split the way MapLibre Native's `util::URL` and `util::Path` split it.
///
/// Why not Foundation's `URL`: canonical URLs hold `{tokens}` and `mapbox://` hosts that
/// Foundation rejects or re-encodes, and stored keys must match MapLibre byte for byte, so the
/// split follows MapLibre's own rules (query from the first `?` unless a `#` comes first, domain
/// after the scheme and any run of `:`/`/`, path up to the query). Offsets are UTF-8 byte offsets.
struct URLSegments {
    /// A half-open byte range `start ..< start + count`.
    struct Segment: Equatable {
        var start: Int
        var count: Int
        var end: Int { start + count }
    }

    let bytes: [UInt8]
    let query: Segment
    let scheme: Segment
    let domain: Segment
    let path: Segment

    init(_ string: String) {
        let bytes = Array(string.utf8)
        self.bytes = bytes
        let hash = bytes.firstIndex(of: UInt8(ascii: "#"))
        let question = bytes.firstIndex(of: UInt8(ascii: "?"))
        let query: Segment
        if let question, hash.map({ $0 > question }) ?? true {
            query = Segment(start: question, count: (hash ?? bytes.count) - question)
        } else {
            query = Segment(start: hash ?? bytes.count, count: 0)
        }
        self.query = query

        var scheme = Segment(start: 0, count: 0)
        if let first = bytes.first, URLSegments.isAlpha(first) {
            var end = 0
            while end < query.start && URLSegments.isSchemeCharacter(bytes[end]) { end += 1 }
            if end < bytes.count && bytes[end] == UInt8(ascii: ":") { scheme.count = end }
        }
        self.scheme = scheme

        var domainStart = scheme.end
        while domainStart < query.start
            && (bytes[domainStart] == UInt8(ascii: ":") || bytes[domainStart] == UInt8(ascii: "/")) {
            domainStart += 1
        }
        let isData = String(decoding: bytes[scheme.start..<scheme.end], as: UTF8.self) == "data"
        let separator = UInt8(ascii: isData ? "," : "/")
        let separatorIndex = bytes[min(domainStart, bytes.count)...].firstIndex(of: separator) ?? bytes.count
        let domain = Segment(start: domainStart, count: max(0, min(query.start, separatorIndex) - domainStart))
        self.domain = domain

        let pathStart = domain.end + (isData ? 1 : 0)
        self.path = Segment(start: pathStart, count: max(0, query.start - pathStart))
    }

    /// The text of a segment.
    func text(_ segment: Segment) -> String {
        String(decoding: bytes[segment.start..<segment.end], as: UTF8.self)
    }

    /// The text of a byte range.
    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// Directory, file name and extension of the path, as MapLibre's `util::Path` splits them.
    ///
    /// The extension starts at the last `.` of the path, and takes a `@2x` just before it along.
    func pathParts() -> (directory: Segment, filename: Segment, extension: Segment) {
        let start = path.start
        let end = path.end
        var slash: Int?
        var i = min(end, bytes.count - 1)
        while i >= 0 {
            if bytes[i] == UInt8(ascii: "/") { slash = i; break }
            i -= 1
        }
        let directory: Segment
        if let slash, slash >= start {
            directory = Segment(start: start, count: slash + 1 - start)
        } else {
            directory = Segment(start: start, count: 0)
        }

        var dot: Int?
        i = min(end, bytes.count - 1)
        while i >= 0 {
            if bytes[i] == UInt8(ascii: ".") { dot = i; break }
            i -= 1
        }
        if var d = dot, d >= 3, d < end, Array(bytes[(d - 3)..<d]) == Array("@2x".utf8) {
            d -= 3
            dot = d
        }
        let ext: Segment
        if let dot, dot >= directory.end {
            ext = Segment(start: dot, count: end - dot)
        } else {
            ext = Segment(start: end, count: 0)
        }
        let filename = Segment(start: directory.end, count: ext.start - directory.end)
        return (directory, filename, ext)
    }

    private static func isAlpha(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    private static func isSchemeCharacter(_ c: UInt8) -> Bool {
        isAlpha(c) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
            || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
    }
}
