import Foundation
import ProvisionFoundation
import ProvisionModel

/// The structural check of a JPEG image: the marker chain a decoder walks, and its end.
///
/// SOI; then well-formed marker segments (a length of at least 2 that stays inside the data);
/// a frame header (SOF) with a non-zero size and one entry per component before the first scan
/// (SOS); entropy-coded data after each scan header, up to the next marker; EOI as the last
/// two bytes. A JPEG cut anywhere has no EOI and is refused.
enum JPEGCheck {
    /// Why `data` is not a usable JPEG, or nil when it is.
    static func problem(_ data: Data) -> String? {
        data.withUnsafeBytes { problem(in: $0) }
    }

    private static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return "not a JPEG: no SOI marker" }
        var offset = 2
        var hasFrame = false
        var hasScan = false
        while true {
            guard offset < bytes.count else { return "JPEG truncated at byte \(grouped(bytes.count)): no EOI marker" }
            guard bytes[offset] == 0xFF else { return "JPEG at byte \(grouped(offset)): expected a marker" }
            let start = offset
            while offset < bytes.count && bytes[offset] == 0xFF { offset += 1 }  // fill bytes
            guard offset < bytes.count else { return "JPEG truncated at byte \(grouped(bytes.count)): no EOI marker" }
            let marker = bytes[offset]
            offset += 1
            let name = "JPEG marker \(hex(marker)) at byte \(start)"
            switch marker {
            case 0xD9:
                guard hasScan else { return "\(name): EOI before any scan" }
                let trailing = bytes.count - offset
                return trailing == 0 ? nil : "JPEG: \(trailing) bytes after EOI"
            case 0xD8:
                return "\(name): a second SOI"
            case 0x01, 0xD0...0xD7:
                continue  // standalone markers
            case 0x00:
                return "\(name): not a marker"
            default:
                break
            }
            guard bytes.count - offset >= 2 else { return "\(name): truncated segment length" }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard length >= 2 else { return "\(name): segment length \(length)" }
            guard length <= bytes.count - offset else { return "\(name): segment length \(length) runs past the end (truncated)" }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[offset + 2..<offset + length])
            offset += length
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard segment.count >= 6 else { return "\(name): frame header of \(segment.count) bytes" }
                let height = Int(segment[1]) << 8 | Int(segment[2])
                let width = Int(segment[3]) << 8 | Int(segment[4])
                let components = Int(segment[5])
                guard width > 0, height > 0, components > 0 else {
                    return "\(name): frame of \(width)x\(height) with \(components) components"
                }
                guard segment.count == 6 + 3 * components else { return "\(name): frame header length does not fit \(components) components" }
                hasFrame = true
            case 0xDA:
                guard hasFrame else { return "\(name): scan before any frame header (SOF)" }
                guard let components = segment.first, components > 0, segment.count == 4 + 2 * Int(components) else {
                    return "\(name): malformed scan header"
                }
                guard let next = entropyDataEnd(bytes, from: offset) else {
                    return "JPEG truncated in the scan data after byte \(offset): no EOI marker"
                }
                offset = next
                hasScan = true
            default:
                continue
            }
        }
    }

    /// The offset of the marker ending the entropy-coded data that starts at `offset`: the first
    /// 0xFF not followed by a stuffed 0x00, a restart marker or another 0xFF; nil when there is none.
    private static func entropyDataEnd(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var i = offset
        while i < bytes.count {
            guard let hit = memchr(base + i, 0xFF, bytes.count - i) else { return nil }
            let j = base.distance(to: UnsafeRawPointer(hit))
            guard j + 1 < bytes.count else { return nil }
            switch bytes[j + 1] {
            case 0x00, 0xD0...0xD7: i = j + 2
            case 0xFF: i = j + 1
            default: return j
            }
        }
        return nil
    }

    private static func hex(_ byte: UInt8) -> String { String(format: "0x%02X", byte) }
}
