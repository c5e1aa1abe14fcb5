import Foundation
import ProvisionCodecs
import ProvisionStore

/// Writes small PNG, JPEG and WebP files from their specifications, so tests can check the
/// verifier against well-formed images and against each kind of damage.
enum ImageEncoders {
    // MARK: PNG

    /// The bytes of one pass of rows: a filter byte (cycling 0...4) then `rowBytes` pixel bytes.
    private static func rows(_ count: Int, rowBytes: Int, seed: Int) -> [UInt8] {
        var out: [UInt8] = []
        for r in 0..<count {
            out.append(UInt8(r % 5))
            out += (0..<rowBytes).map { UInt8(truncatingIfNeeded: $0 * 7 + r * 13 + seed) }
        }
        return out
    }

    /// The raw (filtered, uncompressed) image data IHDR implies.
    static func rawImageData(width: Int, height: Int, bitsPerPixel: Int, interlaced: Bool, seed: Int = 0) -> [UInt8] {
        guard interlaced else { return rows(height, rowBytes: (width * bitsPerPixel + 7) / 8, seed: seed) }
        var out: [UInt8] = []
        for (x0, y0, dx, dy) in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)] {
            let columns = width > x0 ? (width - x0 + dx - 1) / dx : 0
            let passRows = height > y0 ? (height - y0 + dy - 1) / dy : 0
            if columns > 0 && passRows > 0 { out += rows(passRows, rowBytes: (columns * bitsPerPixel + 7) / 8, seed: seed) }
        }
        return out
    }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(CRC32.checksum(typed))
    }

    /// A PNG of the given layout; `idat` replaces the compressed image data, `split` cuts it
    /// into that many IDAT chunks.
    static func png(width: Int = 5, height: Int = 3, bitDepth: UInt8 = 8, colorType: UInt8 = 6, interlaced: Bool = false,
                    raw: [UInt8]? = nil, split: Int = 1, seed: Int = 0) -> Data {
        let channels: [UInt8: Int] = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4]
        let bits = Int(bitDepth) * (channels[colorType] ?? 1)
        let pixels = raw ?? rawImageData(width: width, height: height, bitsPerPixel: bits, interlaced: interlaced, seed: seed)
        let compressed = [UInt8]((try? Zlib.deflate(Data(pixels))) ?? Data())
        var out = pngSignature
        out += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [bitDepth, colorType, 0, 0, interlaced ? 1 : 0])
        if colorType == 3 { out += chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255]) }
        out += chunk("tEXt", Array("Comment\u{0}test".utf8))
        let size = (compressed.count + split - 1) / split
        for start in stride(from: 0, to: compressed.count, by: max(size, 1)) {
            out += chunk("IDAT", Array(compressed[start..<min(start + size, compressed.count)]))
        }
        out += chunk("IEND", [])
        return Data(out)
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24)]
    }

    // MARK: JPEG

    /// A baseline JPEG's marker structure: SOI, APP0, DQT, SOF0, DHT, SOS, entropy-coded data
    /// (with a stuffed 0xFF and a restart marker), EOI. `progressive` adds a second scan.
    static func jpeg(width: UInt16 = 16, height: UInt16 = 8, progressive: Bool = false) -> Data {
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xff, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xff)] + body
        }
        var out: [UInt8] = [0xff, 0xd8]
        out += segment(0xe0, Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
        out += segment(0xdb, [0] + [UInt8](repeating: 1, count: 64))
        out += segment(progressive ? 0xc2 : 0xc0,
                       [8, UInt8(height >> 8), UInt8(height & 0xff), UInt8(width >> 8), UInt8(width & 0xff), 1, 1, 0x11, 0])
        out += segment(0xc4, [0x00] + [UInt8](repeating: 0, count: 15) + [1] + [0])
        let scan = segment(0xda, [1, 1, 0x00, 0, 63, 0])
        out += scan + [0x12, 0x34, 0xff, 0x00, 0x56, 0xff, 0xd0, 0x78, 0x9a]
        if progressive { out += segment(0xc4, [0x10] + [UInt8](repeating: 0, count: 15) + [1] + [0]) + scan + [0xab, 0xcd] }
        out += [0xff, 0xd9]
        return Data(out)
    }

    // MARK: WebP

    /// A RIFF/WEBP file around `chunks` (each a four-character code and a payload, padded to even).
    static func webp(_ chunks: [(String, [UInt8])]) -> Data {
        var body = Array("WEBP".utf8)
        for (tag, payload) in chunks {
            body += Array(tag.utf8) + littleEndian(UInt32(payload.count)) + payload
            if payload.count % 2 == 1 { body.append(0) }
        }
        return Data(Array("RIFF".utf8) + littleEndian(UInt32(body.count)) + body)
    }

    /// A VP8 key frame header (shown, version 0) of `width` x `height` and a few partition bytes.
    static func vp8(width: UInt16 = 16, height: UInt16 = 16) -> [UInt8] {
        let partition: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55]
        let tag = UInt32(0) | 1 << 4 | UInt32(partition.count) << 5
        return [UInt8(tag & 0xff), UInt8(tag >> 8 & 0xff), UInt8(tag >> 16 & 0xff), 0x9d, 0x01, 0x2a,
                UInt8(width & 0xff), UInt8(width >> 8), UInt8(height & 0xff), UInt8(height >> 8)] + partition
    }

    /// A VP8L header of `width` x `height` and a few stream bytes.
    static func vp8l(width: UInt32 = 16, height: UInt32 = 16) -> [UInt8] {
        let bits = (width - 1) | (height - 1) << 14 | 1 << 28
        return [0x2f] + littleEndian(bits) + [0x07, 0x00, 0x12]
    }

    /// The VP8X header: flags and the 24-bit canvas size minus one.
    static func vp8x(width: UInt32 = 16, height: UInt32 = 16, flags: UInt8 = 0x10) -> [UInt8] {
        [flags, 0, 0, 0] + Array(littleEndian(width - 1).prefix(3)) + Array(littleEndian(height - 1).prefix(3))
    }
}

/// CRC-32 (ISO 3309, as PNG uses it), written from the PNG specification's sample code.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xedb88320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xffffffff
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xff)] ^ (c >> 8) }
        return c ^ 0xffffffff
    }
}
