import ProvisionModel

/// One glyph range file of a font stack: 256 code points, `start-end`.
public struct GlyphRange: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The first code point (a multiple of 256).
    public var start: Int

    /// The range whose first code point is `start`.
    public init(start: Int) { self.start = start }

    /// The last code point.
    public var end: Int { start + 255 }

    /// `start-end`, the value of the `{range}` token (`0-255`).
    public var description: String { "\(start)-\(end)" }

    /// Orders ranges by their first code point.
    public static func < (a: GlyphRange, b: GlyphRange) -> Bool { a.start < b.start }
}

/// The glyph range files a download fetches for each font stack.
public enum GlyphRanges {
    /// The 256 ranges of the Basic Multilingual Plane: 0-255 … 65280-65535.
    public static let all: [GlyphRange] = (0..<256).map { GlyphRange(start: $0 * 256) }

    /// The ranges fetched under `policy`, ascending.
    ///
    /// With `.ideographsLocal` a range is skipped when its first code point is one the device
    /// draws itself (MapLibre's `allowsFixedWidthGlyphGeneration`, tested on the range start
    /// only): ranges 78–159 (CJK Unified Ideographs) and 172–215 (Hangul Syllables), leaving 130.
    /// With `.used` only `0-255` is known before the labels are read (`GlyphScan` adds the rest).
    public static func ranges(for policy: GlyphPolicy) -> [GlyphRange] {
        switch policy {
        case .all: return all
        case .ideographsLocal: return all.filter { !allowsFixedWidthGlyphGeneration($0.start) }
        case .used: return [GlyphRange(start: 0)]
        }
    }

    /// Whether the device generates glyph `codePoint` locally: CJK Unified Ideographs
    /// (U+4E00–9FFF), Hangul Syllables (U+AC00–D7AF), Hiragana (U+3040–309F) or Katakana (U+30A0–30FF).
    public static func allowsFixedWidthGlyphGeneration(_ codePoint: Int) -> Bool {
        (0x4E00...0x9FFF).contains(codePoint) || (0xAC00...0xD7AF).contains(codePoint)
            || (0x3040...0x309F).contains(codePoint) || (0x30A0...0x30FF).contains(codePoint)
    }

    /// The glyph URL for one font stack and range: `{fontstack}` becomes the fonts joined with
    /// "," and percent-encoded, `{range}` becomes `start-end`; other tokens are left literally.
    public static func url(template: String, fontStack: [String], range: GlyphRange) -> String {
        URLTemplate.replaceTokens(template) { token in
            switch token {
            case "fontstack": return URLTemplate.percentEncode(fontStack.joined(separator: ","))
            case "range": return range.description
            default: return nil
            }
        }
    }

    /// Every glyph URL of `fontStacks` under `policy`: font stacks in order, ranges ascending.
    public static func urls(template: String, fontStacks: [[String]], policy: GlyphPolicy) -> [String] {
        let ranges = ranges(for: policy)
        return fontStacks.flatMap { stack in ranges.map { url(template: template, fontStack: stack, range: $0) } }
    }
}
