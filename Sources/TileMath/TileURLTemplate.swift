import Foundation

/// Expands tile URL templates the way MapLibre Native does (`{z} {x} {y} {quadkey}
/// {bbox-epsg-3857} {prefix} {ratio}`), so stored keys and requests match what a device asks for.
public enum TileURLTemplate {
    /// The template with the tile tokens replaced for the stored (post-TMS) tile `tile`; other
    /// tokens (`{s}`, `{a-c}`) are kept literally, as MapLibre does.
    public static func expand(_ template: String, tile: TileID, pixelRatio: Int) -> String {
        replaceTokens(template) { Compiled.Piece(token: $0)?.value(tile: tile, pixelRatio: pixelRatio) }
    }

    /// A template split once into literal text and tile tokens, for expanding it for many tiles.
    ///
    /// Why: an apply expands its template for every tile it requests (a million and more); scanning
    /// the template's characters and looking each token up by name every time cost about a tenth
    /// of the CPU of an apply from a local origin. The pieces follow `replaceTokens`' rules exactly
    /// (unknown tokens and unclosed braces stay literal).
    public struct Compiled: Sendable, Equatable {
        /// A piece of the template: text copied as is, or a tile token.
        enum Piece: Sendable, Equatable {
            case literal(String)
            case z, x, y, quadkey, bbox, prefix, ratio

            /// The tile token named `token` (`{z}` is named `z`); nil for any other name.
            init?(token: String) {
                switch token {
                case "z": self = .z
                case "x": self = .x
                case "y": self = .y
                case "quadkey": self = .quadkey
                case "bbox-epsg-3857": self = .bbox
                case "prefix": self = .prefix
                case "ratio": self = .ratio
                default: return nil
                }
            }

            /// The text this piece stands for in the URL of `tile`.
            func value(tile: TileID, pixelRatio: Int) -> String {
                switch self {
                case .literal(let text): return text
                case .z: return String(tile.z)
                case .x: return String(tile.x)
                case .y: return String(tile.y)
                case .quadkey: return TileTokens.quadkey(tile)
                case .bbox: return TileTokens.bboxEPSG3857(tile)
                case .prefix: return TileTokens.prefix(tile)
                case .ratio: return pixelRatio > 1 ? "@2x" : ""
                }
            }
        }

        /// The template this was compiled from.
        public let template: String
        let pieces: [Piece]
        private let literalCount: Int

        /// Splits `template` into its pieces.
        public init(_ template: String) {
            self.template = template
            var pieces: [Piece] = []
            var text = String.UnicodeScalarView()
            let chars = Array(template.unicodeScalars)
            TileURLTemplate.scan(chars) { range, token in
                guard let piece = token.flatMap(Piece.init(token:)) else {
                    text.append(contentsOf: chars[range])
                    return
                }
                if !text.isEmpty { pieces.append(.literal(String(text))) }
                text = String.UnicodeScalarView()
                pieces.append(piece)
            }
            if !text.isEmpty { pieces.append(.literal(String(text))) }
            self.pieces = pieces
            literalCount = pieces.reduce(0) { count, piece in
                if case .literal(let text) = piece { return count + text.utf8.count }
                return count
            }
        }

        /// The template with the tile tokens replaced for the stored (post-TMS) tile `tile`.
        public func expand(tile: TileID, pixelRatio: Int) -> String {
            var result = ""
            result.reserveCapacity(literalCount + 24)
            for piece in pieces {
                if case .literal(let text) = piece {
                    result.append(text)
                } else {
                    result.append(piece.value(tile: tile, pixelRatio: pixelRatio))
                }
            }
            return result
        }
    }

    /// Whether `text` is a tile URL template rather than a TileJSON URL: it has a `{z}`,
    /// `{quadkey}` or `{bbox-epsg-3857}` token (the tokens that say which tile is meant).
    public static func isTemplate(_ text: String) -> Bool {
        text.contains("{z}") || text.contains("{quadkey}") || text.contains("{bbox-epsg-3857}")
    }

    /// Replaces each `{name}` in `template` by `lookup(name)`.
    ///
    /// A token is a `{`, then any characters but `{` and `}`, then `}`. When `lookup` returns nil
    /// the token is kept literally, so `{s}` and `{a-c}` survive untouched (MapLibre does not
    /// support subdomain tokens).
    public static func replaceTokens(_ template: String, _ lookup: (String) -> String?) -> String {
        let chars = Array(template.unicodeScalars)
        var result = String.UnicodeScalarView()
        scan(chars) { range, token in
            if let token, let value = lookup(token) {
                result.append(contentsOf: value.unicodeScalars)
            } else {
                for index in range { result.append(chars[index]) }
            }
        }
        return String(result)
    }

    /// Walks the scalars of a template in order, handing `piece` the range of each run of
    /// literal scalars (token nil) and of each `{name}` token (braces included) with its name.
    static func scan(_ chars: [Unicode.Scalar], _ piece: (Range<Int>, String?) -> Void) {
        var i = 0
        var literalStart = 0
        while i < chars.count {
            guard chars[i] == "{" else {
                i += 1
                continue
            }
            var j = i + 1
            while j < chars.count && chars[j] != "{" && chars[j] != "}" { j += 1 }
            if j < chars.count && chars[j] == "}" {
                if literalStart < i { piece(literalStart..<i, nil) }
                piece(i..<(j + 1), String(String.UnicodeScalarView(chars[(i + 1)..<j])))
                i = j + 1
                literalStart = i
            } else {
                i = j
            }
        }
        if literalStart < chars.count { piece(literalStart..<chars.count, nil) }
    }

    /// The lower-case hex digits.
    static let hexDigits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)
}

/// Values of the tile tokens that need more than the tile's numbers.
enum TileTokens {
    /// One digit per level, most significant first: x bit + 2 × y bit.
    static func quadkey(_ tile: TileID) -> String {
        var key = ""
        var level = tile.z
        while level > 0 {
            let mask = 1 << (level - 1)
            let digit = (tile.x & mask != 0 ? 1 : 0) + (tile.y & mask != 0 ? 2 : 0)
            key.append(Character(Unicode.Scalar(UInt8(ascii: "0") + UInt8(digit))))
            level -= 1
        }
        return key
    }

    /// The hex digit of x % 16 followed by that of y % 16.
    static func prefix(_ tile: TileID) -> String {
        let digits = TileURLTemplate.hexDigits
        var text = String.UnicodeScalarView()
        text.append(digits[((tile.x % 16) + 16) % 16])
        text.append(digits[((tile.y % 16) + 16) % 16])
        return String(text)
    }

    /// `minx,miny,maxx,maxy` in EPSG:3857 metres, computed as MapLibre does (the row is
    /// flipped internally) and formatted as MapLibre formats doubles.
    static func bboxEPSG3857(_ tile: TileID) -> String {
        let circumference = 2 * Double.pi * 6378137.0
        let resolution = (circumference / 256) / pow(2, Double(tile.z))
        let flippedY = (1 << tile.z) - tile.y - 1
        func merc(_ pixel: Int) -> Double { Double(pixel) * resolution - circumference / 2 }
        let values = [merc(tile.x * 256), merc(flippedY * 256), merc((tile.x + 1) * 256), merc((flippedY + 1) * 256)]
        return values.map(MapLibreNumberFormat.string).joined(separator: ",")
    }
}
