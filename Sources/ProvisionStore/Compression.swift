import CZlib
import Foundation

/// zlib compression as MapLibre's offline database uses it.
///
/// `deflate` writes the zlib format (RFC 1950) at the default level, as MapLibre's
/// `util::compress` does; `inflate` reads zlib or gzip, and refuses output beyond a limit
/// so a small hostile input cannot exhaust memory.
public enum Compression {
    /// The default cap on inflated output: 64 MiB.
    public static let defaultLimit = 64 << 20

    /// Compresses `data` into a zlib stream (2-byte header, deflate, Adler-32).
    public static func deflate(_ data: Data) throws -> Data {
        guard data.count <= Int(UInt32.max) else {
            throw StoreError(.compression, "payload of \(data.count) bytes is too large to deflate")
        }
        var stream = z_stream()
        var rc = provision_deflate_init(&stream, Z_DEFAULT_COMPRESSION)
        guard rc == Z_OK else { throw zlibError("deflateInit", rc, stream) }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(data.count)))
        var output = Data(count: capacity)
        var produced = 0
        rc = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int32 in
            output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int32 in
                stream.next_in = UnsafeMutablePointer(
                    mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let result = CZlib.deflate(&stream, Z_FINISH)
                produced = out.count - Int(stream.avail_out)
                return result
            }
        }
        guard rc == Z_STREAM_END else { throw zlibError("deflate", rc, stream) }
        output.count = produced
        return output
    }

    /// Decompresses a zlib or gzip stream (auto-detected, windowBits 47).
    ///
    /// Throws when the input is not a complete stream, has trailing bytes, or would inflate
    /// beyond `limit` bytes.
    public static func inflate(_ data: Data, limit: Int = defaultLimit) throws -> Data {
        guard data.count <= Int(UInt32.max) else {
            throw StoreError(.compression, "payload of \(data.count) bytes is too large to inflate")
        }
        var stream = z_stream()
        var rc = provision_inflate_init2(&stream, 15 + 32)
        guard rc == Z_OK else { throw zlibError("inflateInit2", rc, stream) }
        defer { inflateEnd(&stream) }
        var output = Data()
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        rc = try data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int32 in
            stream.next_in = UnsafeMutablePointer(
                mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            while true {
                var status: Int32 = Z_OK
                let produced = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                if output.count + produced > limit {
                    throw StoreError(.compression, "inflated payload exceeds the limit of \(limit) bytes")
                }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    return status
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    throw StoreError(.compression, "compressed stream is truncated")
                default:
                    return status
                }
            }
        }
        guard rc == Z_STREAM_END else { throw zlibError("inflate", rc, stream) }
        guard stream.avail_in == 0 else {
            throw StoreError(.compression, "\(stream.avail_in) trailing bytes after the compressed stream")
        }
        return output
    }

    /// Whether `data` starts with the gzip magic bytes 1f 8b.
    public static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// `data` un-gzipped when it is gzip-wrapped (as MBTiles vector tiles often are), else unchanged.
    public static func gunzipIfNeeded(_ data: Data, limit: Int = defaultLimit) throws -> Data {
        isGzip(data) ? try inflate(data, limit: limit) : data
    }

    private static func zlibError(_ function: String, _ rc: Int32, _ stream: z_stream) -> StoreError {
        let detail = stream.msg.map { String(cString: $0) } ?? "code \(rc)"
        return StoreError(.compression, "\(function) failed: \(detail)", underlyingCode: rc)
    }
}
