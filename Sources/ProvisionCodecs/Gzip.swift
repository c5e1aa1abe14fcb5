import Foundation

/// gzip framing (RFC 1952): telling it apart, inflating it, and rewrapping it as zlib.
public enum Gzip {
    /// Whether `data` starts with the gzip magic bytes 1f 8b.
    public static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// Compresses `data` into one gzip member at the default level (no name, time zero).
    public static func compress(_ data: Data) throws(CodecError) -> Data {
        try Zlib.deflate(data, framing: .gzip)
    }

    /// Inflates one gzip member, failing when the output would exceed `limit` bytes or bytes
    /// follow the member.
    public static func inflate(_ data: Data, limit: Int = Zlib.defaultInflateLimit) throws(CodecError) -> Data {
        try Zlib.inflate(data, framing: .gzip, limit: limit)
    }

    /// The zlib stream (RFC 1950) of `payload` made from `gzip`, one member whose inflated bytes
    /// are `payload`, around the same deflate data; nil when `gzip` is not a single well-formed
    /// member of that size.
    ///
    /// Why: the offline database stores zlib streams, and tiles usually arrive gzip-compressed
    /// (from MBTiles archives and from servers sending `Content-Encoding: gzip`). Both formats
    /// carry the same DEFLATE data; only the framing differs (a zlib header and an Adler-32 of
    /// the payload instead of a gzip header, CRC-32 and size). Rewrapping costs one Adler-32
    /// pass; deflating the payload again would cost far more CPU for the same result.
    public static func zlibStream(fromGzip gzip: Data, payload: Data) -> Data? {
        gzip.withUnsafeBytes { bytes -> Data? in
            guard let range = deflateRange(bytes) else { return nil }
            let end = range.upperBound
            // ISIZE must match: a second member (or trailing garbage) would make the framing wrong.
            let size = UInt32(bytes[end + 4]) | UInt32(bytes[end + 5]) << 8 | UInt32(bytes[end + 6]) << 16
                | UInt32(bytes[end + 7]) << 24
            guard size == UInt32(truncatingIfNeeded: payload.count) else { return nil }
            let checksum = Zlib.adler32(payload)
            var out = Data(count: range.count + 6)
            out.withUnsafeMutableBytes { out in
                out[0] = 0x78  // deflate, 32 KiB window, default level; (0x789C % 31 == 0)
                out[1] = 0x9C
                UnsafeMutableRawBufferPointer(rebasing: out[2..<(2 + range.count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[range]))
                let trailer = 2 + range.count
                out[trailer] = UInt8(truncatingIfNeeded: checksum >> 24)
                out[trailer + 1] = UInt8(truncatingIfNeeded: checksum >> 16)
                out[trailer + 2] = UInt8(truncatingIfNeeded: checksum >> 8)
                out[trailer + 3] = UInt8(truncatingIfNeeded: checksum)
            }
            return out
        }
    }

    /// The inflated size a gzip member states in its trailer (ISIZE, the size modulo 2^32), or
    /// nil when `data` is not gzip or too short to hold a header and trailer.
    static func statedSize(_ data: Data) -> Int? {
        guard data.count >= 18, isGzip(data) else { return nil }
        return data.withUnsafeBytes { bytes in
            let end = bytes.count - 4
            return Int(UInt32(bytes[end]) | UInt32(bytes[end + 1]) << 8 | UInt32(bytes[end + 2]) << 16
                           | UInt32(bytes[end + 3]) << 24)
        }
    }

    /// Where the DEFLATE data of a single gzip member lies in `bytes`: after the header and its
    /// optional fields, before the 8-byte trailer; nil when `bytes` is not such a member.
    private static func deflateRange(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8 else { return nil }
        let flags = bytes[3]
        var offset = 10
        if flags & 0x04 != 0 {  // FEXTRA
            guard offset + 2 <= bytes.count else { return nil }
            offset += 2 + Int(bytes[offset]) + Int(bytes[offset + 1]) << 8
        }
        for flag in [UInt8(0x08), 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while offset < bytes.count && bytes[offset] != 0 { offset += 1 }
            offset += 1
        }
        if flags & 0x02 != 0 { offset += 2 }  // FHCRC
        let end = bytes.count - 8
        guard offset < end else { return nil }
        return offset..<end
    }

    /// One gzip member of `payload` made from `zlib`, a zlib stream whose inflated bytes are
    /// `payload`, around the same deflate data; nil when `zlib` is not a plain zlib stream (a
    /// preset dictionary, another method, too short).
    ///
    /// Why: an export to PMTiles or MBTiles states gzip tile compression, and the offline
    /// database holds most vector tiles as zlib streams. Rewrapping the deflate data costs one
    /// CRC-32 pass where compressing the payload again would cost far more CPU for the same
    /// bytes. The header is the one `compress` writes (no name, time zero, Unix), so the same
    /// stream always gives the same member.
    public static func member(fromZlib zlib: Data, payload: Data) -> Data? {
        guard zlib.count >= 6 else { return nil }
        let start = zlib.startIndex
        let cmf = zlib[start], flg = zlib[start + 1]
        // Method 8 (deflate) with a window of at most 32 KiB, a valid check, no preset dictionary.
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0, flg & 0x20 == 0 else {
            return nil
        }
        let crc = Zlib.crc32(payload)
        let size = UInt32(truncatingIfNeeded: payload.count)
        var out = Data(capacity: zlib.count + 12)
        out.append(contentsOf: [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])
        out.append(zlib[(start + 2)..<(zlib.endIndex - 4)])
        for value in [crc, size] {
            out.append(contentsOf: [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                                    UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)])
        }
        return out
    }
}
