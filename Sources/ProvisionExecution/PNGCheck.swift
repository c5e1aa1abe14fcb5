import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionCodecs

/// The structural check of a PNG image, deep enough that a file libpng cannot decode is refused.
///
/// The signature; IHDR first with valid fields; every chunk inside the data with a matching
/// CRC-32; no unknown critical chunk; a PLTE before the image data of a palette image; IDAT
/// chunks in one run whose data inflates (zlib) completely to exactly the size IHDR implies (a
/// filter byte of 0...4 per row plus the row's bytes, over the seven passes of an Adam7 image);
/// IEND last. The pixel data is inflated into a small scratch buffer, never kept.
enum PNGCheck {
    /// The most pixel data (filter bytes included) an image may need: far above any sprite sheet.
    static let maxImageBytes = 256 << 20

    static let signature: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

    /// Why `data` is not a usable PNG, or nil when it is.
    static func problem(_ data: Data) -> String? {
        data.withUnsafeBytes { problem(in: $0) }
    }

    private static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 8, signature.indices.allSatisfy({ bytes[$0] == signature[$0] }) else {
            return "not a PNG: no PNG signature"
        }
        var offset = 8
        var layout: RowLayout?
        var pixels: PixelStream?
        var idatRunEnded = false
        var hasPalette = false
        while offset < bytes.count {
            guard bytes.count - offset >= 12 else { return "PNG truncated at byte \(grouped(offset)): partial chunk header" }
            let length = Int(bigEndian32(bytes, offset))
            let type = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self)
            let name = "PNG chunk \(type) at byte \(grouped(offset))"
            guard (offset + 4..<offset + 8).allSatisfy({ isLetter(bytes[$0]) }) else {
                return "PNG chunk at byte \(grouped(offset)): type is not four letters"
            }
            guard length <= bytes.count - offset - 12 else { return "\(name): length \(grouped(Int(length))) runs past the end (truncated)" }
            let stored = bigEndian32(bytes, offset + 8 + length)
            let computed = Zlib.crc32(UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8 + length]))
            guard stored == computed else { return "\(name): CRC mismatch" }
            let body = UnsafeRawBufferPointer(rebasing: bytes[offset + 8..<offset + 8 + length])
            if offset == 8 && type != "IHDR" { return "\(name): the first chunk must be IHDR" }
            switch type {
            case "IHDR":
                guard layout == nil else { return "\(name): a second IHDR" }
                switch RowLayout.parse(body) {
                case .success(let parsed): layout = parsed
                case .failure(let why): return "\(name): \(why.message)"
                }
            case "PLTE":
                guard body.count % 3 == 0, (3...768).contains(body.count) else { return "\(name): \(body.count) bytes is not a palette" }
                hasPalette = true
            case "IDAT":
                guard let layout else { return "\(name): no IHDR" }
                if idatRunEnded { return "\(name): IDAT chunks are not consecutive" }
                if layout.colorType == 3 && !hasPalette { return "\(name): palette image without PLTE" }
                if pixels == nil {
                    guard let stream = PixelStream(layout: layout) else { return "\(name): zlib cannot start" }
                    pixels = stream
                }
                if let why = pixels?.feed(body) { return "\(name): \(why)" }
            case "IEND":
                guard let pixels else { return "\(name): no IDAT before IEND" }
                if let why = pixels.finish() { return "PNG image data: \(why)" }
                let trailing = bytes.count - offset - 12
                return trailing == 0 ? nil : "PNG: \(trailing) bytes after IEND"
            default:
                if bytes[offset + 4] & 0x20 == 0 { return "\(name): unknown critical chunk" }
                if pixels != nil { idatRunEnded = true }
            }
            offset += 12 + length
        }
        return "PNG truncated at byte \(grouped(bytes.count)): no IEND chunk"
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
    }

    /// Why IHDR is unusable.
    struct HeaderProblem: Error {
        var message: String
    }

    /// The rows IHDR implies: per pass, the bytes of a row (its filter byte included) and the row count.
    struct RowLayout {
        var colorType: UInt8
        var passes: [(stride: Int, rows: Int)]
        var totalBytes: Int

        /// Parses the 13 bytes of IHDR.
        static func parse(_ body: UnsafeRawBufferPointer) -> Result<RowLayout, HeaderProblem> {
            guard body.count == 13 else { return .failure(HeaderProblem(message: "length \(body.count), expected 13")) }
            let width = Int(bigEndian32(body, 0))
            let height = Int(bigEndian32(body, 4))
            let depth = body[8], colorType = body[9]
            guard (1...0x7fff_ffff).contains(width), (1...0x7fff_ffff).contains(height) else {
                return .failure(HeaderProblem(message: "size \(width)x\(height)"))
            }
            let channels: Int
            let depths: Set<UInt8>
            switch colorType {
            case 0: channels = 1; depths = [1, 2, 4, 8, 16]
            case 2: channels = 3; depths = [8, 16]
            case 3: channels = 1; depths = [1, 2, 4, 8]
            case 4: channels = 2; depths = [8, 16]
            case 6: channels = 4; depths = [8, 16]
            default: return .failure(HeaderProblem(message: "colour type \(colorType)"))
            }
            guard depths.contains(depth) else {
                return .failure(HeaderProblem(message: "bit depth \(depth) with colour type \(colorType)"))
            }
            guard body[10] == 0, body[11] == 0, body[12] <= 1 else {
                return .failure(HeaderProblem(message: "compression \(body[10]), filter \(body[11]), interlace \(body[12])"))
            }
            let bitsPerPixel = Int(depth) * channels
            // Adam7 passes as (x0, y0, dx, dy); a plain image is one pass over every pixel.
            let grid: [(Int, Int, Int, Int)] = body[12] == 0 ? [(0, 0, 1, 1)]
                : [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            var passes: [(stride: Int, rows: Int)] = []
            var total = 0
            for (x0, y0, dx, dy) in grid {
                let columns = width > x0 ? (width - x0 + dx - 1) / dx : 0
                let rows = height > y0 ? (height - y0 + dy - 1) / dy : 0
                guard columns > 0, rows > 0 else { continue }
                let stride = 1 + (columns * bitsPerPixel + 7) / 8
                let (bytes, overflow) = stride.multipliedReportingOverflow(by: rows)
                total += bytes
                guard !overflow, total <= maxImageBytes else {
                    return .failure(HeaderProblem(message: "a \(width)x\(height) image is over the cap of \(grouped(maxImageBytes)) bytes of pixel data"))
                }
                passes.append((stride, rows))
            }
            return .success(RowLayout(colorType: colorType, passes: passes, totalBytes: total))
        }
    }
}

/// Inflates IDAT data block by block, checking each row's filter byte and the total size.
private final class PixelStream {
    private let inflater: Inflater
    private let layout: PNGCheck.RowLayout
    private var produced = 0
    private var pass = 0
    private var row = 0
    /// Offset in the inflated data of the next row's filter byte.
    private var nextFilter = 0

    init?(layout: PNGCheck.RowLayout) {
        // zlib fails to start only without memory; the caller says 'zlib cannot start'.
        guard let inflater = try? Inflater(framing: .zlib, blockSize: 32 * 1024) else { return nil }
        self.inflater = inflater
        self.layout = layout
    }

    /// Inflates one IDAT chunk's data; why it is unusable, or nil. Data after the end of the
    /// zlib stream is ignored.
    func feed(_ data: UnsafeRawBufferPointer) -> String? {
        var rowProblem: String?
        do {
            _ = try inflater.inflate(data) { block in
                rowProblem = walkRows(block)
                return rowProblem == nil
            }
        } catch .corrupt(_, let message) {
            return "IDAT data does not inflate (zlib: \(message))"
        } catch {
            return "IDAT data does not inflate (\(error))"
        }
        return rowProblem
    }

    /// Why the inflated data, once all IDAT chunks are read, is unusable; nil when it is whole.
    func finish() -> String? {
        guard inflater.isFinished else { return "IDAT data ends inside its zlib stream (truncated)" }
        guard produced == layout.totalBytes else {
            return "IDAT data inflates to \(produced) bytes, IHDR implies \(layout.totalBytes)"
        }
        return nil
    }

    private func walkRows(_ block: UnsafeRawBufferPointer) -> String? {
        let start = produced
        produced += block.count
        if produced > layout.totalBytes {
            return "IDAT data inflates beyond the \(grouped(layout.totalBytes)) bytes IHDR implies"
        }
        while pass < layout.passes.count && nextFilter < produced {
            let filter = block[nextFilter - start]
            if filter > 4 { return "filter type \(filter) at row \(row) of pass \(pass + 1)" }
            nextFilter += layout.passes[pass].stride
            row += 1
            if row == layout.passes[pass].rows {
                pass += 1
                row = 0
            }
        }
        return nil
    }
}
