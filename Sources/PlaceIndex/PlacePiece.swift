import Foundation

/// One named feature as read from one tile, as it waits in the builder's sorter.
///
/// The sort key is the piece's group (kind, names, layer, class, subclass), written so that
/// bytewise order is the group order: kind by its declaration order, then each string as its
/// NFC UTF-8 bytes with `00` escaped as `00 01` and ended by `00 00` (a prefix sorts first),
/// names as a list ended by `00 00` (names are never empty). NFC bytes compare as Swift compares
/// strings (by canonical equivalence, in the order of the NFC scalars), so the groups come out
/// in `GroupKey` order and canonically equal names fall in one group. The value holds the rest.
struct PlacePiece {
    var group: PlaceIndexBuilder.GroupKey
    var rank: Int
    var featureClass: String
    var subclass: String
    var zoom: Int
    var extent: Int
    var geometry: DecodedGeometry

    var key: [UInt8] { Self.bytes(of: group) }

    /// The sort key of `group`.
    static func bytes(of group: PlaceIndexBuilder.GroupKey) -> [UInt8] {
        var key: [UInt8] = [UInt8(PlaceKind.allCases.firstIndex(of: group.kind)!)]
        for name in group.names { Self.appendOrdered(name, to: &key) }
        key += [0, 0]
        for text in [group.layer, group.featureClass, group.subclass] { Self.appendOrdered(text, to: &key) }
        return key
    }

    var value: [UInt8] {
        var out = ByteWriter()
        out.integer(rank)
        out.string(featureClass)
        out.string(subclass)
        out.integer(zoom)
        out.integer(extent)
        switch geometry {
        case .points(let points):
            out.integer(1)
            out.points(points)
        case .lines(let lines):
            out.integer(2)
            out.integer(lines.count)
            for line in lines { out.points(line) }
        case .polygons(let polygons):
            out.integer(3)
            out.integer(polygons.count)
            for rings in polygons {
                out.integer(rings.count)
                for ring in rings { out.points(ring) }
            }
        }
        return out.bytes
    }

    /// The group a key names.
    static func group(_ key: UnsafeRawBufferPointer) -> PlaceIndexBuilder.GroupKey {
        var index = 1
        var names: [String] = []
        while !(key[index] == 0 && key[index + 1] == 0) { names.append(readOrdered(key, &index)) }
        index += 2
        let layer = readOrdered(key, &index)
        let featureClass = readOrdered(key, &index)
        let subclass = readOrdered(key, &index)
        return PlaceIndexBuilder.GroupKey(kind: PlaceKind.allCases[Int(key[0])], layer: layer,
                                          featureClass: featureClass, subclass: subclass, names: names)
    }

    /// The piece of `group` a value holds.
    init(group: PlaceIndexBuilder.GroupKey, value: UnsafeRawBufferPointer) {
        var input = ByteReader(bytes: value)
        self.group = group
        rank = input.integer()
        featureClass = input.string()
        subclass = input.string()
        zoom = input.integer()
        extent = input.integer()
        switch input.integer() {
        case 1: geometry = .points(input.points())
        case 2: geometry = .lines((0..<input.integer()).map { _ in input.points() })
        default:
            geometry = .polygons((0..<input.integer()).map { _ in (0..<input.integer()).map { _ in input.points() } })
        }
    }

    init(group: PlaceIndexBuilder.GroupKey, rank: Int, featureClass: String, subclass: String, zoom: Int, extent: Int,
         geometry: DecodedGeometry) {
        self.group = group
        self.rank = rank
        self.featureClass = featureClass
        self.subclass = subclass
        self.zoom = zoom
        self.extent = extent
        self.geometry = geometry
    }

    // MARK: Ordered strings

    private static func appendOrdered(_ text: String, to bytes: inout [UInt8]) {
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        for byte in (ascii ? text : text.precomposedStringWithCanonicalMapping).utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(1) }
        }
        bytes += [0, 0]
    }

    private static func readOrdered(_ key: UnsafeRawBufferPointer, _ index: inout Int) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = key[index]
            if byte == 0 {
                index += 2
                if key[index - 1] == 0 { break }
            } else {
                index += 1
            }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Appends integers (zigzag LEB128), strings (length first) and points (raw doubles).
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func integer(_ value: Int) {
        var zigzag = UInt64(bitPattern: Int64(value << 1) ^ Int64(value >> 63))
        while zigzag >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: zigzag) | 0x80)
            zigzag >>= 7
        }
        bytes.append(UInt8(zigzag))
    }

    mutating func string(_ text: String) {
        integer(text.utf8.count)
        bytes += text.utf8
    }

    mutating func points(_ points: [WorldPoint]) {
        integer(points.count)
        for point in points {
            withUnsafeBytes(of: point.x.bitPattern.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: point.y.bitPattern.littleEndian) { bytes += $0 }
        }
    }
}

/// Reads what `ByteWriter` wrote.
private struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func integer() -> Int {
        var value: UInt64 = 0, shift: UInt64 = 0
        while true {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return Int(Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
    }

    mutating func string() -> String {
        let count = integer()
        defer { index += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]), as: UTF8.self)
    }

    mutating func points() -> [WorldPoint] {
        (0..<integer()).map { _ in WorldPoint(x: double(), y: double()) }
    }

    private mutating func double() -> Double {
        var bits: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) {
            bits |= UInt64(bytes[index]) << UInt64(shift)
            index += 1
        }
        return Double(bitPattern: bits)
    }
}
