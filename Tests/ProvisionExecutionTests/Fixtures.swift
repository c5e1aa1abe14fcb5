import Foundation

/// Small byte fixtures and a protobuf encoder for building tiles and glyph PBFs in tests.
enum Fixtures {
    /// A two-layer MVT (water polygon, roads line) encoded by Python's mapbox-vector-tile.
    static let pythonTile = Data(base64Encoded:
        "GjEKBXdhdGVyEhQSAgAAGAMiDAkAgEAaABMUAAAUDxoFY2xhc3MiBgoEbGFrZSiAIHgCGiwKBXJvYWRzEg8SAgAAGAIiBwkAgEAKCgkaBGtpbmQiBwoFbWlub3IogCB4Ag==")!
    /// `pythonTile` gzip-wrapped by Python's gzip module.
    static let pythonTileGzip = Data(base64Encoded:
        "H4sIAAAAAAACA5My5GItTyxJLRISEWJiYJBgVuLhZGhwkGIQFmFgEOGXYk3OSSwuVmLjYslJzE7VaFCoYJLS4WItyk9MKRbiB2thUmIHaeHi4pRiyc7MS1Fi52LNzczLLwKrBgCcLuqEYQAAAA==")!

    /// A small well-formed PNG; `seed` varies its pixels.
    static func png(_ seed: Int = 0) -> Data { ImageEncoders.png(seed: seed) }
    static let jpeg = ImageEncoders.jpeg()
    static let webp = ImageEncoders.webp([("VP8 ", ImageEncoders.vp8())])

    /// A vector tile with one layer per name, each holding `seed` as an extent-like filler.
    static func tile(layers: [String], seed: Int = 0) -> Data {
        var tile = PB()
        for name in layers {
            var layer = PB()
            layer.string(1, name)
            layer.varint(5, UInt64(4096 + seed))
            layer.varint(15, 2)
            tile.message(3, layer)
        }
        return tile.bytes
    }

    /// A glyph PBF with one stack and one glyph ("A", 1×1 with its 3-pixel border).
    static func glyphs(stack: String = "Noto Sans Regular", range: String = "0-255") -> Data {
        var glyph = PB()
        glyph.varint(1, 65)
        glyph.bytesField(2, Data(repeating: 7, count: 49))
        for (field, value) in [(3, 1), (4, 1), (5, 0), (6, 0), (7, 3)] as [(Int, UInt64)] { glyph.varint(field, value) }
        var fontstack = PB()
        fontstack.string(1, stack)
        fontstack.string(2, range)
        fontstack.message(3, glyph)
        var glyphs = PB()
        glyphs.message(1, fontstack)
        return glyphs.bytes
    }

    static let style = Data(#"{"version":8,"sources":{"a":{"type":"vector","url":"https://x/a.json"}},"layers":[]}"#.utf8)
    static let tileJSON = Data(#"{"tilejson":"3.0.0","tiles":["https://x/{z}/{x}/{y}.pbf"]}"#.utf8)
    static let html = Data("<!DOCTYPE html>\n<html><body>Service temporarily unavailable</body></html>".utf8)
}

/// A tiny protobuf writer.
struct PB {
    var bytes = Data()

    mutating func key(_ field: Int, _ wireType: Int) { writeVarint(UInt64(field << 3 | wireType)) }

    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func varint(_ field: Int, _ value: UInt64) {
        key(field, 0)
        writeVarint(value)
    }

    mutating func bytesField(_ field: Int, _ data: Data) {
        key(field, 2)
        writeVarint(UInt64(data.count))
        bytes.append(data)
    }

    mutating func string(_ field: Int, _ text: String) { bytesField(field, Data(text.utf8)) }
    mutating func message(_ field: Int, _ message: PB) { bytesField(field, message.bytes) }
}
