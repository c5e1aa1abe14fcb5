import Foundation

/// The framing around DEFLATE data: which header and trailer a stream carries.
public enum ZlibFraming: Sendable, Equatable {
    /// RFC 1950: a 2-byte header and an Adler-32 trailer (what MapLibre's offline database stores).
    case zlib
    /// RFC 1952: a gzip header and a CRC-32 and size trailer (MBTiles tiles, `Content-Encoding: gzip`).
    case gzip
    /// Either, told apart by the header (inflating only).
    case zlibOrGzip

    /// zlib's `windowBits` for this framing with a 32 KiB window.
    var windowBits: Int32 {
        switch self {
        case .zlib: return 15
        case .gzip: return 15 + 16
        case .zlibOrGzip: return 15 + 32
        }
    }

    /// The framing's name in messages.
    public var name: String {
        switch self {
        case .zlib: return "zlib"
        case .gzip: return "gzip"
        case .zlibOrGzip: return "zlib or gzip"
        }
    }
}

/// Why compressing or inflating failed.
public enum CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a valid stream of the framing (zlib's message).
    case corrupt(ZlibFraming, String)
    /// The input ends before the stream does.
    case truncated(ZlibFraming)
    /// Bytes follow the end of the stream (a second gzip member, or garbage).
    case trailingBytes(ZlibFraming, count: Int)
    /// The inflated bytes would exceed the caller's limit.
    case tooLarge(ZlibFraming, limit: Int)
    /// The input is too large for one zlib call (over 4 GiB).
    case inputTooLarge(Int)
    /// zlib could not start (out of memory, or an invalid parameter); the function and code.
    case unavailable(String, Int32)

    /// The failure in one line, naming the framing.
    public var description: String {
        switch self {
        case .corrupt(let framing, let message): return "corrupt \(framing.name) stream (\(message))"
        case .truncated(let framing): return "truncated \(framing.name) stream"
        case .trailingBytes(let framing, let count): return "\(count) trailing bytes after the \(framing.name) stream"
        case .tooLarge(let framing, let limit): return "\(framing.name) stream inflates beyond \(limit) bytes (the limit)"
        case .inputTooLarge(let count): return "payload of \(count) bytes is too large for zlib"
        case .unavailable(let function, let code): return "\(function) failed (zlib code \(code))"
        }
    }
}
