import Foundation

/// A minimal reader of the protobuf framing of a Mapbox Vector Tile, to check that a stored
/// payload is a raw (not gzipped, not zlib) tile: every top-level field is `layers` (3,
/// length-delimited), and every layer has a name (field 1).
enum VectorTileShape {
    /// The layer names of `bytes`, or nil when the bytes are not an MVT.
    static func layerNames(_ bytes: [UInt8]) -> [String]? {
        guard !bytes.isEmpty else { return nil }
        var names: [String] = []
        var reader = Reader(bytes: bytes[...])
        while !reader.isAtEnd {
            guard let (field, wire) = reader.key(), field == 3, wire == 2, let layer = reader.lengthDelimited() else {
                return nil
            }
            var inner = Reader(bytes: layer)
            var name: String?
            while !inner.isAtEnd {
                guard let (field, wire) = inner.key() else { return nil }
                if field == 1 && wire == 2 {
                    guard let text = inner.lengthDelimited() else { return nil }
                    name = String(decoding: text, as: UTF8.self)
                } else if !inner.skip(wire) {
                    return nil
                }
            }
            guard let name else { return nil }
            names.append(name)
        }
        return names
    }

    /// Bytes from hexadecimal text (as `sqlite3`'s `hex()` prints them).
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = bytes.popFirst() {
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
                if shift > 63 { return nil }
            }
            return nil
        }

        mutating func key() -> (field: UInt64, wire: UInt64)? {
            guard let key = varint(), key >> 3 > 0 else { return nil }
            return (key >> 3, key & 7)
        }

        mutating func lengthDelimited() -> ArraySlice<UInt8>? {
            guard let length = varint(), length <= UInt64(bytes.count) else { return nil }
            let start = bytes.startIndex
            let body = bytes[start..<start + Int(length)]
            bytes = bytes[(start + Int(length))...]
            return body
        }

        mutating func skip(_ wire: UInt64) -> Bool {
            switch wire {
            case 0: return varint() != nil
            case 1, 5:
                let size = wire == 1 ? 8 : 4
                guard bytes.count >= size else { return false }
                bytes = bytes.dropFirst(size)
                return true
            case 2: return lengthDelimited() != nil
            default: return false
            }
        }
    }
}
