import Foundation

/// Expands tile URL templates the way MapLibre Native does (`{z} {x} {y} {quadkey}
/// {bbox-epsg-3857} {prefix} {ratio}`), so stored keys and requests match what a device asks for.
public enum TileURLTemplate {
    /// The template with the tile tokens replaced for the stored (post-TMS) tile `tile`; other
    /// tokens (`{s}`, `{a-c}`) are kept literally, as MapLibre does.
    public static func expand(_ template: String, tile: TileID, pixelRatio: Int) -> String {
        Compiled(template).expand(tile: tile, pixelRatio: pixelRatio)
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
            TileURLTemplate.scan(template) { scalars, token in
                let piece: Piece?
                switch token {
                case "z"?: piece = .z
                case "x"?: piece = .x
                case "y"?: piece = .y
                case "quadkey"?: piece = .quadkey
                case "bbox-epsg-3857"?: piece = .bbox
                case "prefix"?: piece = .prefix
                case "ratio"?: piece = .ratio
                default: piece = nil
                }
                guard let piece else {
                    text.append(contentsOf: scalars)
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
                switch piece {
                case .literal(let text): result.append(text)
                case .z: result.append(String(tile.z))
                case .x: result.append(String(tile.x))
                case .y: result.append(String(tile.y))
                case .quadkey: result.append(TileTokens.quadkey(tile))
                case .bbox: result.append(TileTokens.bboxEPSG3857(tile))
                case .prefix: result.append(TileTokens.prefix(tile))
                case .ratio: if pixelRatio > 1 { result.append("@2x") }
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
        var result = String.UnicodeScalarView()
        scan(template) { scalars, token in
            if let token, let value = lookup(token) {
                result.append(contentsOf: value.unicodeScalars)
            } else {
                result.append(contentsOf: scalars)
            }
        }
        return String(result)
    }

    /// Walks `template` in order, handing `piece` each run of literal scalars (token nil) and
    /// each `{name}` token (its scalars, braces included, and its name).
    static func scan(_ template: String, _ piece: (ArraySlice<Unicode.Scalar>, String?) -> Void) {
        let chars = Array(template.unicodeScalars)
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
                if literalStart < i { piece(chars[literalStart..<i], nil) }
                piece(chars[i...j], String(String.UnicodeScalarView(chars[(i + 1)..<j])))
                i = j + 1
                literalStart = i
            } else {
                i = j
            }
        }
        if literalStart < chars.count { piece(chars[literalStart...], nil) }
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
