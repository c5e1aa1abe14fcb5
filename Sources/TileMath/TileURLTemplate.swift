import Foundation

/// Expands tile URL templates the way MapLibre Native does (`{z} {x} {y} {quadkey}
/// {bbox-epsg-3857} {prefix} {ratio}`), so stored keys and requests match what a device asks for.
public enum TileURLTemplate {
    /// The template with the tile tokens replaced for the stored (post-TMS) tile `tile`; other
    /// tokens (`{s}`, `{a-c}`) are kept literally, as MapLibre does.
    public static func expand(_ template: String, tile: TileID, pixelRatio: Int) -> String {
        replaceTokens(template) { token in
            switch token {
            case "z": return String(tile.z)
            case "x": return String(tile.x)
            case "y": return String(tile.y)
            case "quadkey": return TileTokens.quadkey(tile)
            case "bbox-epsg-3857": return TileTokens.bboxEPSG3857(tile)
            case "prefix": return TileTokens.prefix(tile)
            case "ratio": return pixelRatio > 1 ? "@2x" : ""
            default: return nil
            }
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
        var i = 0
        while i < chars.count {
            guard chars[i] == "{" else {
                result.append(chars[i])
                i += 1
                continue
            }
            var j = i + 1
            while j < chars.count && chars[j] != "{" && chars[j] != "}" { j += 1 }
            if j < chars.count && chars[j] == "}" {
                let name = String(String.UnicodeScalarView(chars[(i + 1)..<j]))
                if let value = lookup(name) {
                    result.append(contentsOf: value.unicodeScalars)
                } else {
                    result.append(contentsOf: chars[i...j])
                }
                i = j + 1
            } else {
                result.append(contentsOf: chars[i..<j])
                i = j
            }
        }
        return String(result)
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
