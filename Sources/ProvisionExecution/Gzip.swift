import CZlib
import Foundation

/// Inflates gzip-wrapped bodies with zlib, refusing output beyond a bound.
public enum Gzip {
    /// Why inflating failed.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The stream is not valid gzip (zlib's message).
        case corrupt(String)
        /// The stream ends before its trailer.
        case truncated
        /// The inflated bytes would exceed the bound.
        case tooLarge(Int)

        public var description: String {
            switch self {
            case .corrupt(let message): return "corrupt gzip stream (\(message))"
            case .truncated: return "truncated gzip stream"
            case .tooLarge(let limit): return "gzip stream inflates beyond \(limit) bytes"
            }
        }
    }

    /// Whether `data` starts with the gzip magic bytes 1f 8b.
    public static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// Inflates one gzip member, failing when the output would exceed `limit` bytes.
    public static func inflate(_ data: Data, limit: Int = 64 << 20) throws(Failure) -> Data {
        var stream = z_stream()
        // 16 + MAX_WBITS: expect a gzip header and trailer.
        guard provision_inflate_init2(&stream, 16 + 15) == Z_OK else { throw .corrupt("inflateInit2 failed") }
        defer { inflateEnd(&stream) }

        var output = Data()
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var outcome: Result<Void, Failure> = .success(())
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            guard let base = input.bindMemory(to: Bytef.self).baseAddress else {
                outcome = .failure(.truncated)
                return
            }
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = uInt(input.count)
            while true {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunkSize - Int(stream.avail_out)
                if output.count + produced > limit {
                    outcome = .failure(.tooLarge(limit))
                    return
                }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    return
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress possible: the input ended before the stream did.
                    outcome = .failure(.truncated)
                    return
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    outcome = .failure(.corrupt(message))
                    return
                }
            }
        }
        try outcome.get()
        return output
    }
}
