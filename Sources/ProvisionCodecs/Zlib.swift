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
    ///
    /// Why one call into one buffer: every tile an apply stores is inflated here to be verified,
    /// a million and more per run. A gzip member states its inflated size in its trailer, so the
    /// output usually fits a buffer of that size, filled by a single `inflate` (with `Z_FINISH`,
    /// zlib then needs no window either); other streams start from a guess and grow. A size the
    /// trailer gets wrong costs only a regrowth: zlib still checks the length and the CRC.
    public static func inflate(_ data: Data, framing: ZlibFraming = .zlib,
                               limit: Int = defaultInflateLimit) throws(CodecError) -> Data {
        // A gzip member that states its size, or a zlib stream, goes to libdeflate first when the system has it.
        let gzip = framing == .gzip || (framing == .zlibOrGzip && Gzip.isGzip(data))
        if gzip, let size = Gzip.statedSize(data), size > 0, size <= limit,
           let inflated = data.withUnsafeBytes({ Libdeflate.inflateGzip($0, size: size) }) {
            return inflated
        }
        if !gzip, data.count <= Int(UInt32.max),
           let inflated = data.withUnsafeBytes({ Libdeflate.inflateZlib($0, limit: limit) }) {
            return inflated
        }
        return try inflateWithZlib(data, framing: framing, limit: limit)
    }

    /// `inflate(_:framing:limit:)` by zlib alone.
    static func inflateWithZlib(_ data: Data, framing: ZlibFraming, limit: Int) throws(CodecError) -> Data {
        guard data.count <= Int(UInt32.max) else { throw .inputTooLarge(data.count) }
        return try withStream { stream throws(CodecError) in
            let started = provision_inflate_init2(stream, framing.windowBits)
            guard started == Z_OK else { throw .unavailable("inflateInit2", started) }
            defer { inflateEnd(stream) }
            return try inflate(data, framing: framing, limit: limit, stream: stream)
        }
    }

    /// `inflate(_:framing:limit:)` on a stream started for `framing`.
    private static func inflate(_ data: Data, framing: ZlibFraming, limit: Int,
                                stream: UnsafeMutablePointer<z_stream>) throws(CodecError) -> Data {
        // The most a DEFLATE stream can expand is about 1032 to 1: no hint may reserve more.
        let ceiling = min(limit, data.count &* 1032 &+ 64)
        // 258 bytes beyond the stated size: zlib decodes the last 258 output bytes of a buffer
        // with its slow loop, so a buffer that fits exactly would send every tile's end there.
        var capacity = max(1, min(ceiling, Gzip.statedSize(data).map { $0 + 258 } ?? max(4 * data.count, 4096)))
        guard var buffer = malloc(capacity) else { throw .unavailable("malloc", Z_MEM_ERROR) }
        var produced = 0
        var handedOver = false
        defer { if !handedOver { free(buffer) } }
        let status: Int32 = data.withUnsafeBytes { input in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            while true {
                let room = min(capacity - produced, Int(UInt32.max))
                stream.pointee.next_out = (buffer + produced).assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(room)
                let status = CZlib.inflate(stream, Z_FINISH)
                produced += room - Int(stream.pointee.avail_out)
                // Output full before the end: grow, up to one byte past the limit (which tells
                // a stream of exactly `limit` bytes from a longer one).
                guard (status == Z_OK || status == Z_BUF_ERROR), stream.pointee.avail_out == 0,
                      produced <= limit else { return status }
                let grown = min(max(capacity * 2, 4096), limit + 1)
                guard let larger = realloc(buffer, grown) else { return Z_MEM_ERROR }
                buffer = larger
                capacity = grown
            }
        }
        switch status {
        case Z_STREAM_END:
            if produced > limit { throw .tooLarge(framing, limit: limit) }
            let unused = Int(stream.pointee.avail_in)
            guard unused == 0 else { throw .trailingBytes(framing, count: unused) }
        case Z_OK, Z_BUF_ERROR:
            if produced > limit { throw .tooLarge(framing, limit: limit) }
            throw .truncated(framing)
        default:
            throw inflateError(status, framing: framing, stream: stream)
        }
        guard produced > 0 else { return Data() }
        if capacity - produced > 1024, let fitted = realloc(buffer, produced) { buffer = fitted }
        handedOver = true
        return Data(bytesNoCopy: buffer, count: produced, deallocator: .free)
    }

    /// The Adler-32 of `bytes` (the zlib trailer's checksum).
    public static func adler32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        Libdeflate.adler32(bytes) ?? zlibAdler32(bytes)
    }

    /// `adler32(_:)` by zlib alone.
    static func zlibAdler32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: adler32_z(adler32_z(0, nil, 0), bytes.baseAddress?.assumingMemoryBound(to: Bytef.self),
                                             bytes.count))
    }

    /// The CRC-32 of `bytes` (ISO 3309, as gzip and PNG use it).
    public static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        Libdeflate.crc32(bytes) ?? zlibCRC32(bytes)
    }

    /// `crc32(_:)` by zlib alone.
    static func zlibCRC32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
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
        return try withStream { stream throws(CodecError) in try deflate(data, framing: framing, stream: stream) }
    }

    /// `deflate(_:framing:)` on a fresh stream.
    private static func deflate(_ data: Data, framing: ZlibFraming,
                                stream: UnsafeMutablePointer<z_stream>) throws(CodecError) -> Data {
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

    /// Runs `body` with a zeroed `z_stream` at a fixed address (zlib keeps a pointer back to it).
    private static func withStream<T>(_ body: (UnsafeMutablePointer<z_stream>) throws(CodecError) -> T) throws(CodecError) -> T {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        return try body(stream)
    }

    /// The error an `inflate` call that returned `status` (not `Z_OK`, `Z_BUF_ERROR` or
    /// `Z_STREAM_END`) stands for: zlib's message when it has one.
    static func inflateError(_ status: Int32, framing: ZlibFraming, stream: UnsafeMutablePointer<z_stream>) -> CodecError {
        switch status {
        case Z_NEED_DICT: return .corrupt(framing, "the stream needs a preset dictionary")
        case Z_MEM_ERROR: return .unavailable("inflate", status)
        default: return .corrupt(framing, stream.pointee.msg.map { String(cString: $0) } ?? "zlib code \(status)")
        }
    }
}
