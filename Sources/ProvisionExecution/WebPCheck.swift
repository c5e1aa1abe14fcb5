import Foundation
import ProvisionFoundation
import ProvisionModel

/// The structural check of a WebP image: its RIFF container and the header of its bitstream.
///
/// `RIFF`, a size equal to the bytes after it, `WEBP`; a first chunk VP8, VP8L or VP8X; every
/// chunk (with its padding byte) inside the body; a VP8 key frame's start code and non-zero size,
/// or a VP8L signature byte and version 0; and, for an extended file (VP8X), image data in a
/// VP8, VP8L or animation frame chunk.
enum WebPCheck {
    /// Why `data` is not a usable WebP image, or nil when it is.
    static func problem(_ data: Data) -> String? {
        data.withUnsafeBytes { problem(in: $0) }
    }

    private static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 12, fourCC(bytes, 0) == "RIFF", fourCC(bytes, 8) == "WEBP" else {
            return "not a WebP image: no RIFF/WEBP header"
        }
        let riffSize = Int(littleEndian32(bytes, 4))
        guard riffSize == bytes.count - 8 else {
            return "WebP RIFF size \(grouped(Int(riffSize))) does not match the \(grouped(bytes.count - 8)) bytes that follow it"
        }
        var offset = 12
        var hasImage = false
        while offset < bytes.count {
            guard bytes.count - offset >= 8 else { return "WebP truncated at byte \(grouped(offset)): partial chunk header" }
            let tag = fourCC(bytes, offset)
            let size = Int(littleEndian32(bytes, offset + 4))
            let name = "WebP chunk \(tag.debugDescription) at byte \(grouped(offset))"
            guard size <= bytes.count - offset - 8 else { return "\(name): size \(grouped(Int(size))) runs past the end" }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[offset + 8..<offset + 8 + size])
            if offset == 12 && !["VP8 ", "VP8L", "VP8X"].contains(tag) {
                return "\(name): the first chunk must be VP8, VP8L or VP8X"
            }
            switch tag {
            case "VP8 ":
                if let why = vp8Problem(payload) { return "\(name): \(why)" }
                hasImage = true
            case "VP8L":
                if let why = vp8lProblem(payload) { return "\(name): \(why)" }
                hasImage = true
            case "VP8X":
                guard offset == 12 else { return "\(name): VP8X must be the first chunk" }
                guard size >= 10 else { return "\(name): \(size) bytes, expected 10" }
            case "ANMF":
                hasImage = true
            default:
                break
            }
            offset += 8 + size + (size & 1)
            guard offset <= bytes.count else { return "\(name): padding byte missing at the end" }
        }
        return hasImage ? nil : "WebP has no image data (no VP8, VP8L or ANMF chunk)"
    }

    /// A VP8 key frame: frame tag, start code 9d 01 2a, 14-bit width and height.
    private static func vp8Problem(_ payload: UnsafeRawBufferPointer) -> String? {
        guard payload.count >= 10 else { return "\(payload.count) bytes, too short for a VP8 frame header" }
        let tag = Int(payload[0]) | Int(payload[1]) << 8 | Int(payload[2]) << 16
        guard tag & 1 == 0 else { return "not a key frame" }
        guard tag >> 4 & 1 == 1 else { return "frame not shown" }
        guard tag >> 5 <= payload.count - 10 else { return "first partition of \(tag >> 5) bytes runs past the chunk" }
        guard payload[3] == 0x9d, payload[4] == 0x01, payload[5] == 0x2a else { return "no VP8 start code" }
        let width = (Int(payload[6]) | Int(payload[7]) << 8) & 0x3fff
        let height = (Int(payload[8]) | Int(payload[9]) << 8) & 0x3fff
        return width > 0 && height > 0 ? nil : "frame of \(width)x\(height)"
    }

    /// A VP8L stream: signature byte 0x2f, 14-bit width-1 and height-1, alpha bit, version 0.
    private static func vp8lProblem(_ payload: UnsafeRawBufferPointer) -> String? {
        guard payload.count >= 5 else { return "\(payload.count) bytes, too short for a VP8L header" }
        guard payload[0] == 0x2f else { return "no VP8L signature byte" }
        let bits = UInt32(payload[1]) | UInt32(payload[2]) << 8 | UInt32(payload[3]) << 16 | UInt32(payload[4]) << 24
        return bits >> 29 == 0 ? nil : "VP8L version \(bits >> 29)"
    }

    private static func fourCC(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 4]), as: UTF8.self)
    }

    private static func littleEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
