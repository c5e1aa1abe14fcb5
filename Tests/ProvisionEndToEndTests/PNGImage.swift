import Foundation
import ProvisionCodecs

/// A PNG decoded to RGBA, from the format's specification (chunks, zlib stream, the five row
/// filters): what the screenshot tests compare, independent of any image library.
struct PNGImage {
    var width: Int
    var height: Int
    /// Four bytes a pixel, row by row.
    var rgba: [UInt8]

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes an 8-bit, non-interlaced greyscale, RGB or RGBA (with or without alpha) PNG.
    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count > 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw DecodeError(description: "not a PNG")
        }
        func be32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        var offset = 8
        var header: (width: Int, height: Int, depth: UInt8, colour: UInt8, interlace: UInt8)?
        var compressed = Data()
        while offset + 8 <= bytes.count {
            let length = be32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = offset + 8
            guard body + length + 4 <= bytes.count else { throw DecodeError(description: "truncated \(type) chunk") }
            switch type {
            case "IHDR": header = (be32(body), be32(body + 4), bytes[body + 8], bytes[body + 9], bytes[body + 12])
            case "IDAT": compressed.append(contentsOf: bytes[body..<(body + length)])
            default: break
            }
            offset = body + length + 4
            if type == "IEND" { break }
        }
        guard let header, header.depth == 8, header.interlace == 0 else { throw DecodeError(description: "unsupported PNG header") }
        let channels: Int
        switch header.colour {
        case 0: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: throw DecodeError(description: "unsupported colour type \(header.colour)")
        }
        let stride = header.width * channels
        let raw = [UInt8](try Zlib.inflate(compressed, limit: (stride + 1) * header.height + 1))
        guard raw.count == (stride + 1) * header.height else { throw DecodeError(description: "wrong image data size") }
        var pixels = [UInt8](repeating: 0, count: stride * header.height)
        for row in 0..<header.height {
            let filter = raw[row * (stride + 1)]
            let source = row * (stride + 1) + 1, target = row * stride
            for i in 0..<stride {
                let a = i >= channels ? Int(pixels[target + i - channels]) : 0
                let b = row > 0 ? Int(pixels[target - stride + i]) : 0
                let c = row > 0 && i >= channels ? Int(pixels[target - stride + i - channels]) : 0
                let x = Int(raw[source + i])
                let value: Int
                switch filter {
                case 0: value = x
                case 1: value = x + a
                case 2: value = x + b
                case 3: value = x + (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    value = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
                default: throw DecodeError(description: "unknown filter \(filter) in row \(row)")
                }
                pixels[target + i] = UInt8(truncatingIfNeeded: value)
            }
        }
        width = header.width
        height = header.height
        rgba = [UInt8](repeating: 255, count: width * height * 4)
        for p in 0..<(width * height) {
            let s = p * channels
            switch channels {
            case 1, 2:
                rgba[p * 4] = pixels[s]; rgba[p * 4 + 1] = pixels[s]; rgba[p * 4 + 2] = pixels[s]
                if channels == 2 { rgba[p * 4 + 3] = pixels[s + 1] }
            default:
                rgba[p * 4] = pixels[s]; rgba[p * 4 + 1] = pixels[s + 1]; rgba[p * 4 + 2] = pixels[s + 2]
                if channels == 4 { rgba[p * 4 + 3] = pixels[s + 3] }
            }
        }
    }

    /// How two images of one size differ from row `fromRow` down: the share of pixels whose
    /// colour differs by more than `threshold` in some channel, and the mean absolute difference.
    func difference(from other: PNGImage, threshold: Int = 48, fromRow: Int = 0) -> (share: Double, mean: Double)? {
        guard width == other.width, height == other.height, fromRow < height else { return nil }
        var differing = 0, total = 0
        let start = fromRow * width * 4
        for p in stride(from: start, to: rgba.count, by: 4) {
            var worst = 0
            for c in 0..<3 {
                let d = abs(Int(rgba[p + c]) - Int(other.rgba[p + c]))
                total += d
                worst = max(worst, d)
            }
            if worst > threshold { differing += 1 }
        }
        let pixels = Double((rgba.count - start) / 4)
        return (Double(differing) / pixels, Double(total) / (pixels * 3))
    }
}
