import CZlib
import Foundation

/// A zlib inflate stream fed in pieces, handing each block of inflated bytes to the caller.
///
/// Why a stream: PNG image data arrives split over IDAT chunks and is checked row by row in a
/// small buffer, never kept whole; the one-shot `Zlib.inflate` is this loop with a size limit.
/// The `z_stream` lives at a fixed address (zlib keeps a pointer back to it).
public final class Inflater {
    /// Where a call to `inflate(_:output:)` left the stream.
    public enum Progress: Sendable, Equatable {
        /// Every input byte was consumed and the stream has not ended: feed the next piece.
        case needsInput
        /// The stream ended; `unusedInputCount` bytes of the last piece follow it.
        case finished
        /// `output` returned false; the stream must not be fed again.
        case stopped
    }

    /// The framing the stream is read with.
    public let framing: ZlibFraming
    /// Whether the stream has ended.
    public private(set) var isFinished = false
    /// The bytes of the last piece fed that follow the end of the stream.
    public private(set) var unusedInputCount = 0

    private let stream: UnsafeMutablePointer<z_stream>
    private let buffer: UnsafeMutableRawBufferPointer

    /// Starts a stream of `framing`, handing out inflated bytes in blocks of up to `blockSize`.
    public init(framing: ZlibFraming, blockSize: Int = 64 * 1024) throws(CodecError) {
        self.framing = framing
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        buffer = .allocate(byteCount: max(blockSize, 1), alignment: 1)
        let status = provision_inflate_init2(stream, framing.windowBits)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            buffer.deallocate()
            throw .unavailable("inflateInit2", status)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        buffer.deallocate()
    }

    /// Inflates `input`, calling `output` with each block of inflated bytes (valid only during
    /// the call; return false to stop). Throws when the bytes are not a valid stream.
    public func inflate(_ input: UnsafeRawBufferPointer,
                        output: (UnsafeRawBufferPointer) -> Bool) throws(CodecError) -> Progress {
        guard !isFinished else {
            unusedInputCount = input.count
            return .finished
        }
        guard input.count <= Int(UInt32.max) else { throw .inputTooLarge(input.count) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            stream.pointee.next_out = buffer.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(buffer.count)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = buffer.count - Int(stream.pointee.avail_out)
            if produced > 0 && !output(UnsafeRawBufferPointer(rebasing: buffer[0..<produced])) { return .stopped }
            switch status {
            case Z_STREAM_END:
                isFinished = true
                unusedInputCount = Int(stream.pointee.avail_in)
                return .finished
            case Z_OK, Z_BUF_ERROR:
                // All input read with room to spare, or no progress possible: zlib wants more input.
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return .needsInput }
                if status == Z_BUF_ERROR && produced == 0 { return .needsInput }
            default:
                throw Zlib.inflateError(status, framing: framing, stream: stream)
            }
        }
    }
}
