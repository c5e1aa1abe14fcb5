import Foundation

/// A minimal protobuf wire-format walker: enough to check that bytes are plausibly a message
/// of a known shape without decoding it.
struct ProtobufReader {
    /// One field of a message: its number, wire type and, for length-delimited fields, the bytes.
    struct Field {
        var number: UInt64
        var wireType: UInt8
        /// Byte range of a length-delimited payload inside the buffer.
        var payload: Range<Int>?
        /// The value of a varint field (0 for other wire types).
        var value: UInt64 = 0
    }

    /// Why the bytes are not a well-formed message.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: UnsafeRawBufferPointer
    private var position: Int
    private let end: Int

    init(_ bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position >= end }

    /// The byte offset of the next read inside the buffer.
    var offset: Int { position }

    /// Reads the next field, skipping its value; nil at the end of the message.
    @inline(__always)
    mutating func nextField() throws -> Field? {
        guard position < end else { return nil }
        let key = try varint()
        let number = key >> 3
        let wireType = UInt8(key & 7)
        guard number > 0, number < (1 << 29) else { throw Malformed(description: "field number \(number)") }
        switch wireType {
        case 0:
            return Field(number: number, wireType: 0, payload: nil, value: try varint())
        case 1:
            try skip(8)
            return Field(number: number, wireType: 1, payload: nil)
        case 2:
            let length = try varint()
            guard length <= UInt64(end - position) else {
                throw Malformed(description: "field \(number) length \(length) overruns the message")
            }
            let start = position
            position += Int(length)
            return Field(number: number, wireType: 2, payload: start..<position)
        case 5:
            try skip(4)
            return Field(number: number, wireType: 5, payload: nil)
        default:
            throw Malformed(description: "wire type \(wireType) of field \(number)")
        }
    }

    private mutating func skip(_ count: Int) throws {
        guard end - position >= count else { throw Malformed(description: "fixed-width value overruns the message") }
        position += count
    }

    /// Reads one varint (as a packed repeated field holds them).
    @inline(__always)
    mutating func varint() throws -> UInt64 {
        // Fast path: most varints of a tile (small deltas, tag indexes) are one byte.
        if position < end, bytes[position] < 0x80 {
            position += 1
            return UInt64(bytes[position - 1])
        }
        return try multiByteVarint()
    }

    /// Skips `count` varints without decoding them; false when the message ends first.
    ///
    /// Eight bytes at a time while at least eight varints are left: a varint ends at each byte
    /// below 0x80, so a word's count of such bytes is how many varints end in it. Taking the
    /// whole word never passes the last varint wanted: with eight or more left, either more are
    /// left after the word, or all eight of its bytes ended one. (Geometry is most of a vector
    /// tile's bytes, and every tile an apply stores is checked.)
    mutating func skipVarints(_ count: UInt64) -> Bool {
        var remaining = count
        while remaining >= 8, end - position >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            remaining -= UInt64((~word & 0x8080_8080_8080_8080).nonzeroBitCount)
            position += 8
        }
        while remaining > 0 {
            guard position < end else { return false }
            if bytes[position] < 0x80 { remaining -= 1 }
            position += 1
        }
        return true
    }

    private mutating func multiByteVarint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift >= 64 { throw Malformed(description: "varint longer than 10 bytes") }
        }
        throw Malformed(description: "varint overruns the message")
    }
}
