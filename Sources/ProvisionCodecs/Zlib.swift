import CZlib
import Foundation

/// zlib compression as MapLibre's offline database uses it, and zlib's checksums.
///
/// `deflate` writes the zlib format (RFC 1950) at the default level, as MapLibre's
/// `util::compress` does; `inflate` reads one whole stream of the framing asked for and refuses
/// output beyond a limit, so a small hostile input cannot exhaust memory.
public enum Zlib {
    /// The default cap on inflated output: 64 MiB.
    public static let defaultInflateLimit = 64 << 20

    /// Compresses `data` into a zlib stream (2-byte header, deflate, Adler-32).
    public static func deflate(_ data: Data) throws(CodecError) -> Data {
        try deflate(data, framing: .zlib)
    }

    /// Decompresses one whole stream of `framing`.
    ///
    /// Throws when the input is not a complete stream, has bytes after it (a second gzip member
    /// included), or would inflate beyond `limit` bytes.
    public static func inflate(_ data: Data, framing: ZlibFraming = .zlib,
                               limit: Int = defaultInflateLimit) throws(CodecError) -> Data {
        let inflater = try Inflater(framing: framing)
        var output = Data()
        var exceeded = false
        let progress = try data.withUnsafeBytes { raw in
            Result { () throws(CodecError) -> Inflater.Progress in
                try inflater.inflate(raw) { block in
                    guard output.count + block.count <= limit else {
                        exceeded = true
                        return false
                    }
                    if let base = block.baseAddress {
                        output.append(base.assumingMemoryBound(to: UInt8.self), count: block.count)
                    }
                    return true
                }
            }
        }.get()
        switch progress {
        case .stopped where exceeded: throw .tooLarge(framing, limit: limit)
        case .finished where inflater.unusedInputCount > 0:
            throw .trailingBytes(framing, count: inflater.unusedInputCount)
        case .finished: return output
        case .needsInput, .stopped: throw .truncated(framing)
        }
    }

    /// The Adler-32 of `bytes` (the zlib trailer's checksum).
    public static func adler32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: adler32_z(adler32_z(0, nil, 0), bytes.baseAddress?.assumingMemoryBound(to: Bytef.self),
                                             bytes.count))
    }

    /// The CRC-32 of `bytes` (ISO 3309, as gzip and PNG use it).
    public static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: crc32_z(crc32_z(0, nil, 0), bytes.baseAddress?.assumingMemoryBound(to: Bytef.self),
                                           bytes.count))
    }

    /// The Adler-32 of `data`.
    public static func adler32(_ data: Data) -> UInt32 { data.withUnsafeBytes { adler32($0) } }

    /// The CRC-32 of `data`.
    public static func crc32(_ data: Data) -> UInt32 { data.withUnsafeBytes { crc32($0) } }

    /// Compresses `data` at the default level into one stream of `framing` (`.zlib` or `.gzip`;
    /// a gzip header carries no name and a zero time, so equal input gives equal bytes).
    static func deflate(_ data: Data, framing: ZlibFraming) throws(CodecError) -> Data {
        guard data.count <= Int(UInt32.max) else { throw .inputTooLarge(data.count) }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        let bits: Int32 = framing == .gzip ? ZlibFraming.gzip.windowBits : ZlibFraming.zlib.windowBits
        let started = provision_deflate_init2(stream, Z_DEFAULT_COMPRESSION, bits)
        guard started == Z_OK else { throw .unavailable("deflateInit2", started) }
        defer { deflateEnd(stream) }
        var output = Data(count: Int(deflateBound(stream, uLong(data.count))))
        var produced = 0
        let status = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int32 in
            output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int32 in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(out.count)
                let result = CZlib.deflate(stream, Z_FINISH)
                produced = out.count - Int(stream.pointee.avail_out)
                return result
            }
        }
        guard status == Z_STREAM_END else { throw .unavailable("deflate", status) }
        output.count = produced
        return output
    }
}
