import Foundation

/// A minimal protobuf wire-format walker over borrowed bytes: the fields of a message in order,
/// with varint and fixed-width values read and length-delimited payloads as byte ranges.
///
/// Why here: the executor checks vector tiles and glyph ranges with it, and the glyph scan of a
/// `"glyphs": "used"` style pack decodes the labels of stored vector tiles with it; both sides
/// read the same wire format, so it is a codec. Inlinable, since the checks walk every integer
/// of every downloaded tile.
@frozen
public struct ProtobufReader {
    /// One field of a message: its number, wire type and, for length-delimited fields, the bytes.
    @frozen
    public struct Field {
        public var number: UInt64
        public var wireType: UInt8
        /// Byte range of a length-delimited payload inside the buffer.
        public var payload: Range<Int>?
        /// The value of a varint field, or the little-endian bits of a fixed64 (wire type 1) or
        /// fixed32 (wire type 5) field; 0 for length-delimited fields.
        public var value: UInt64 = 0

        /// A field as read from the wire.
        @inlinable
        public init(number: UInt64, wireType: UInt8, payload: Range<Int>?, value: UInt64 = 0) {
            self.number = number
            self.wireType = wireType
            self.payload = payload
            self.value = value
        }
    }

    /// Why the bytes are not a well-formed message.
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String

        /// A problem described by `description`.
        public init(description: String) { self.description = description }
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var position: Int
    @usableFromInline let end: Int

    /// A reader of the message in `range` of `bytes` (all of them when nil).
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    /// Whether every byte has been read.
    @inlinable public var isAtEnd: Bool { position >= end }

    /// The byte offset of the next read inside the buffer.
    @inlinable public var offset: Int { position }

    /// Reads the next field, skipping a length-delimited payload; nil at the end of the message.
    @inlinable @inline(__always)
    public mutating func nextField() throws -> Field? {
        guard position < end else { return nil }
        let key = try varint()
        let number = key >> 3
        let wireType = UInt8(key & 7)
        guard number > 0, number < (1 << 29) else { throw Malformed(description: "field number \(number)") }
        switch wireType {
        case 0:
            return Field(number: number, wireType: 0, payload: nil, value: try varint())
        case 1:
            return Field(number: number, wireType: 1, payload: nil, value: try fixed(8))
        case 2:
            let length = try varint()
            guard length <= UInt64(end - position) else {
                throw Malformed(description: "field \(number) length \(length) overruns the message")
            }
            let start = position
            position += Int(length)
            return Field(number: number, wireType: 2, payload: start..<position)
        case 5:
            return Field(number: number, wireType: 5, payload: nil, value: try fixed(4))
        default:
            throw Malformed(description: "wire type \(wireType) of field \(number)")
        }
    }

    /// Reads a little-endian fixed-width value of `count` bytes.
    @inlinable
    mutating func fixed(_ count: Int) throws -> UInt64 {
        guard end - position >= count else { throw Malformed(description: "fixed-width value overruns the message") }
        var value: UInt64 = 0
        for i in 0..<count { value |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += count
        return value
    }

    /// Reads one varint (as a packed repeated field holds them).
    @inlinable @inline(__always)
    public mutating func varint() throws -> UInt64 {
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
    @inlinable
    public mutating func skipVarints(_ count: UInt64) -> Bool {
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

    @inlinable
    mutating func multiByteVarint() throws -> UInt64 {
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

    /// The UTF-8 text of a length-delimited payload (invalid sequences repaired).
    @inlinable
    public func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
