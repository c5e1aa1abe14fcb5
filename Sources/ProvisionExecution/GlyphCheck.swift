import Foundation
import ProvisionCodecs

/// The check of a glyph range PBF against what MapLibre Native reads from it (glyphs.proto).
///
/// The top level is repeated `stacks = 1` (fontstack messages) and nothing else. A fontstack has
/// `name = 1` and `range = 2` (strings, each once) and repeated `glyphs = 3` (glyph messages). A
/// glyph has `id = 1` (uint32), `bitmap = 2` (bytes), `width = 3`, `height = 4` (uint32), `left = 5`,
/// `top = 6` (sint32) and `advance = 7` (uint32). Known fields of the wrong wire type are refused;
/// unknown fields inside a fontstack or glyph are skipped, as MapLibre's reader does.
///
/// Why more than the wire format: MapLibre's parser (`parseGlyphPBF`) silently drops a glyph that
/// lacks a metric, whose metrics are out of bounds (width, height, advance below 256; left and
/// top in -128..<128), whose id is outside the range it asked for, or whose bitmap is not
/// (width + 6) × (height + 6) bytes (a 3-pixel border): a store holding such a range would draw
/// labels with characters missing, so it is refused as damaged. A fontstack must name its font
/// in UTF-8 without control characters and carry `range` ("0-255"): the range it was asked for
/// when that is known, so that a server answering every range with one file (or a body from
/// another protocol that happens to parse, such as 1,000 nested messages) is not stored as good.
/// An empty body is a range with no glyphs, which MapLibre accepts.
enum GlyphCheck {
    /// Why `data` is not a usable glyph PBF, or nil when it is. `expected` is the range the
    /// request asked for (`requestedRange(in:)`), when known. Empty data is not checked here.
    static func problem(_ data: Data, expected: ClosedRange<UInt32>? = nil) -> String? {
        data.withUnsafeBytes { bytes in
            var glyphs = ProtobufReader(bytes)
            var stackNumber = 0
            do {
                while let field = try glyphs.nextField() {
                    guard field.number == 1, field.wireType == 2, let stack = field.payload else {
                        return "not a glyph PBF: top-level field \(field.number) (wire type \(field.wireType))"
                    }
                    stackNumber += 1
                    if let problem = try stackProblem(bytes, stack, expected: expected) {
                        return "glyph PBF fontstack \(stackNumber): \(problem)"
                    }
                }
            } catch {
                return "not a glyph PBF: \(error)"
            }
            return nil
        }
    }

    /// The glyph range a glyph URL asks for: the last path segment of the form `START-END`
    /// (an extension such as `.pbf` aside) with START a multiple of 256 and END = START + 255,
    /// as MapLibre's `{range}` token writes it; nil when there is none.
    static func requestedRange(in url: String) -> ClosedRange<UInt32>? {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        for segment in path.split(separator: "/").reversed() {
            let name = segment.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
            if let range = parseRange(name) { return range }
        }
        return nil
    }

    /// `START-END` with START a multiple of 256 up to 65280 and END = START + 255, or nil.
    static func parseRange(_ text: String) -> ClosedRange<UInt32>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 5 && $0.allSatisfy(\.isASCII) }),
              let start = UInt32(parts[0]), let end = UInt32(parts[1]),
              start % 256 == 0, start <= 65_280, end == start + 255 else { return nil }
        return start...end
    }

    private static func stackProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
                                     expected: ClosedRange<UInt32>?) throws -> String? {
        var stack = ProtobufReader(bytes, range: range)
        var glyphNumber = 0
        var name: String?
        var declared: String?
        var glyphRanges: [Range<Int>] = []
        while let field = try stack.nextField() {
            switch field.number {
            case 1, 2:
                let what = field.number == 1 ? "name" : "range"
                guard field.wireType == 2, let payload = field.payload else { return "\(what) has wire type \(field.wireType)" }
                guard (field.number == 1 ? name : declared) == nil else { return "\(what) appears twice" }
                guard let text = String(validatingUTF8Bytes: bytes[payload]) else { return "\(what) is not UTF-8" }
                guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                    return "\(what) holds control characters"
                }
                if field.number == 1 { name = text } else { declared = text }
            case 3:
                guard field.wireType == 2, let glyph = field.payload else { return "glyph has wire type \(field.wireType)" }
                glyphRanges.append(glyph)
            default:
                continue
            }
        }
        guard let name, !name.isEmpty else { return "no font name" }
        guard let declared else { return "\"\(name)\" has no range" }
        guard let range = parseRange(declared) else {
            return "\"\(name)\" has range \"\(declared)\", expected START-END of 256 code points (such as \"0-255\")"
        }
        if let expected, range != expected {
            return "\"\(name)\" has range \"\(declared)\" where \(expected.lowerBound)-\(expected.upperBound) was asked for"
        }
        for glyph in glyphRanges {
            glyphNumber += 1
            if let problem = try glyphProblem(bytes, glyph, range: range) { return "glyph \(glyphNumber) \(problem)" }
        }
        return nil
    }

    /// Why one glyph message is not one MapLibre keeps, or nil.
    private static func glyphProblem(_ bytes: UnsafeRawBufferPointer, _ glyph: Range<Int>,
                                     range: ClosedRange<UInt32>) throws -> String? {
        var reader = ProtobufReader(bytes, range: glyph)
        var values: [UInt64: UInt64] = [:]
        var bitmapSize = 0
        while let member = try reader.nextField() {
            let expectedType: UInt8? = member.number == 2 ? 2 : (1...7).contains(member.number) ? 0 : nil
            guard let expectedType else { continue }
            guard member.wireType == expectedType else { return "field \(member.number) has wire type \(member.wireType)" }
            if member.number == 2 {
                bitmapSize = member.payload?.count ?? 0
            } else {
                guard member.value <= UInt64(UInt32.max) else { return "field \(member.number) does not fit 32 bits" }
                values[member.number] = member.value
            }
        }
        let names: [(UInt64, String)] = [(1, "id"), (3, "width"), (4, "height"), (5, "left"), (6, "top"), (7, "advance")]
        if let missing = names.first(where: { values[$0.0] == nil }) { return "has no \(missing.1)" }
        let id = UInt32(values[1] ?? 0), width = values[3] ?? 0, height = values[4] ?? 0, advance = values[7] ?? 0
        let left = zigzag(values[5] ?? 0), top = zigzag(values[6] ?? 0)
        guard range.contains(id) else { return "has id \(id), outside the range \(range.lowerBound)-\(range.upperBound)" }
        guard width < 256, height < 256, advance < 256, (-128..<128).contains(left), (-128..<128).contains(top) else {
            return "(id \(id)) has metrics out of bounds: width \(width), height \(height), left \(left), top \(top), "
                + "advance \(advance)"
        }
        if width > 0 && height > 0 {
            let expectedSize = Int((width + 6) * (height + 6))
            guard bitmapSize == expectedSize else {
                return "(id \(id)) has a bitmap of \(bitmapSize) bytes, expected \(expectedSize) for \(width)×\(height) "
                    + "with its 3-pixel border"
            }
        }
        return nil
    }

    /// A sint32 from its zigzag varint.
    private static func zigzag(_ value: UInt64) -> Int64 {
        let bits = UInt32(truncatingIfNeeded: value)
        return Int64(Int32(bitPattern: (bits >> 1) ^ (0 &- (bits & 1))))
    }
}

extension String {
    /// The string these bytes are in UTF-8, or nil when they are not valid UTF-8.
    init?(validatingUTF8Bytes bytes: Slice<UnsafeRawBufferPointer>) {
        var iterator = bytes.makeIterator()
        var scalars = String.UnicodeScalarView()
        var decoder = UTF8()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self.init(scalars)
    }
}
