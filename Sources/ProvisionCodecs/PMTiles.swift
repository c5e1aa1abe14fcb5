import Foundation

/// The PMTiles v3 wire format: the fixed header and the directories, as the specification
/// (protomaps/PMTiles `spec/v3/spec.md`) lays them out. Both the exporter (which writes
/// archives) and the archive origin (which reads them, locally or by HTTP range) use it.
///
/// An archive is: the 127-byte header, the root directory, JSON metadata, leaf directories and
/// tile data, at the offsets the header gives. A directory is a sorted list of entries; an entry
/// with a run length of 0 points at a leaf directory instead of tile data.
public enum PMTiles {
    /// The header's size in bytes.
    public static let headerSize = 127
    /// How many bytes a reader fetches first: the header and the root directory must fit in them.
    public static let rootFetchSize = 16_384

    /// How directories, metadata or tiles are compressed.
    public enum Compression: UInt8, Sendable, Equatable, CaseIterable {
        case unknown = 0, none = 1, gzip = 2, brotli = 3, zstd = 4

        /// The name the specification and `pmtiles show` use.
        public var name: String {
            switch self {
            case .unknown: return "unknown"
            case .none: return "none"
            case .gzip: return "gzip"
            case .brotli: return "brotli"
            case .zstd: return "zstd"
            }
        }
    }

    /// What the tiles are.
    public enum TileType: UInt8, Sendable, Equatable, CaseIterable {
        case unknown = 0, mvt = 1, png = 2, jpeg = 3, webp = 4, avif = 5
    }

    /// Why bytes are not a PMTiles v3 header or directory.
    public enum FormatError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The bytes do not start with `PMTiles` and version 3 (the version found, if any).
        case notPMTiles(version: UInt8?)
        /// Fewer bytes than the structure needs.
        case truncated(String)
        /// A value the format does not allow (what, and why).
        case invalid(String)
        /// The directory's compression cannot be undone here (brotli, zstd, unknown).
        case unsupportedCompression(Compression)
        /// The compressed directory does not inflate.
        case codec(CodecError)

        public var description: String {
            switch self {
            case .notPMTiles(let version?): return "not a PMTiles v3 archive (version \(version))"
            case .notPMTiles(nil): return "not a PMTiles archive (no PMTiles magic)"
            case .truncated(let what): return "truncated PMTiles \(what)"
            case .invalid(let what): return "invalid PMTiles \(what)"
            case .unsupportedCompression(let c): return "PMTiles directories compressed with \(c.name) are not supported"
            case .codec(let error): return "PMTiles directory: \(error)"
            }
        }
    }

    /// The 127-byte header.
    public struct Header: Sendable, Equatable {
        public var rootDirectoryOffset: UInt64 = 0
        public var rootDirectoryLength: UInt64 = 0
        public var metadataOffset: UInt64 = 0
        public var metadataLength: UInt64 = 0
        public var leafDirectoriesOffset: UInt64 = 0
        public var leafDirectoriesLength: UInt64 = 0
        public var tileDataOffset: UInt64 = 0
        public var tileDataLength: UInt64 = 0
        /// Tiles a reader can address (runs counted in full).
        public var addressedTilesCount: UInt64 = 0
        /// Directory entries that point at tile data.
        public var tileEntriesCount: UInt64 = 0
        /// Distinct tile contents stored.
        public var tileContentsCount: UInt64 = 0
        /// Whether tile data is laid out in tile id order with no gaps.
        public var clustered = false
        public var internalCompression: Compression = .gzip
        public var tileCompression: Compression = .unknown
        public var tileType: TileType = .unknown
        public var minZoom: UInt8 = 0
        public var maxZoom: UInt8 = 0
        /// Bounds and centre in degrees × 10^7.
        public var minLonE7: Int32 = 0
        public var minLatE7: Int32 = 0
        public var maxLonE7: Int32 = 0
        public var maxLatE7: Int32 = 0
        public var centerZoom: UInt8 = 0
        public var centerLonE7: Int32 = 0
        public var centerLatE7: Int32 = 0

        public init() {}

        /// Reads a header from the first 127 bytes of `data`.
        public init(decoding data: Data) throws(FormatError) {
            let bytes = [UInt8](data.prefix(PMTiles.headerSize))
            guard bytes.count >= 8, bytes[0..<7].elementsEqual("PMTiles".utf8) else {
                throw bytes.count < 7 ? .truncated("header") : .notPMTiles(version: nil)
            }
            guard bytes[7] == 3 else { throw .notPMTiles(version: bytes[7]) }
            guard bytes.count == PMTiles.headerSize else { throw .truncated("header") }
            var reader = LittleEndianReader(bytes: bytes, offset: 8)
            rootDirectoryOffset = reader.uint64()
            rootDirectoryLength = reader.uint64()
            metadataOffset = reader.uint64()
            metadataLength = reader.uint64()
            leafDirectoriesOffset = reader.uint64()
            leafDirectoriesLength = reader.uint64()
            tileDataOffset = reader.uint64()
            tileDataLength = reader.uint64()
            addressedTilesCount = reader.uint64()
            tileEntriesCount = reader.uint64()
            tileContentsCount = reader.uint64()
            clustered = reader.uint8() == 1
            internalCompression = Compression(rawValue: reader.uint8()) ?? .unknown
            tileCompression = Compression(rawValue: reader.uint8()) ?? .unknown
            tileType = TileType(rawValue: reader.uint8()) ?? .unknown
            minZoom = reader.uint8()
            maxZoom = reader.uint8()
            minLonE7 = reader.int32()
            minLatE7 = reader.int32()
            maxLonE7 = reader.int32()
            maxLatE7 = reader.int32()
            centerZoom = reader.uint8()
            centerLonE7 = reader.int32()
            centerLatE7 = reader.int32()
            guard minZoom <= maxZoom else { throw .invalid("header: min zoom \(minZoom) above max zoom \(maxZoom)") }
        }

        /// The header's 127 bytes.
        public func encoded() -> Data {
            var out = Data("PMTiles".utf8)
            out.append(3)
            for value in [rootDirectoryOffset, rootDirectoryLength, metadataOffset, metadataLength,
                          leafDirectoriesOffset, leafDirectoriesLength, tileDataOffset, tileDataLength,
                          addressedTilesCount, tileEntriesCount, tileContentsCount] {
                withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
            }
            out.append(contentsOf: [clustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue,
                                    tileType.rawValue, minZoom, maxZoom])
            for value in [minLonE7, minLatE7, maxLonE7, maxLatE7] {
                withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
            }
            out.append(centerZoom)
            for value in [centerLonE7, centerLatE7] {
                withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
            }
            return out
        }
    }

    /// One directory entry: a run of `runLength` tiles from `tileID` sharing the bytes at
    /// `offset` (relative to the tile data section), or, when `runLength` is 0, a leaf directory
    /// at `offset` (relative to the leaf directories section).
    public struct Entry: Sendable, Equatable {
        public var tileID: UInt64
        public var offset: UInt64
        public var length: UInt32
        public var runLength: UInt32

        public init(tileID: UInt64, offset: UInt64, length: UInt32, runLength: UInt32) {
            self.tileID = tileID
            self.offset = offset
            self.length = length
            self.runLength = runLength
        }

        /// Whether the entry points at a leaf directory.
        public var isLeaf: Bool { runLength == 0 }
    }

    // MARK: Directories

    /// The uncompressed bytes of a directory: the entry count, then the tile id deltas, run
    /// lengths, lengths and offsets as varints (an offset that follows on from the previous
    /// entry's data is written as 0, any other as offset + 1).
    public static func serialize(_ entries: [Entry]) -> Data {
        // Built in an array, not a `Data`: appending a byte to `Data` costs a call and a
        // uniqueness check each, and a directory of 200,000 entries takes a million bytes.
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 8 + 10)
        func append(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                out.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            out.append(UInt8(value))
        }
        append(UInt64(entries.count))
        var last: UInt64 = 0
        for entry in entries {
            append(entry.tileID &- last)
            last = entry.tileID
        }
        for entry in entries { append(UInt64(entry.runLength)) }
        for entry in entries { append(UInt64(entry.length)) }
        for (i, entry) in entries.enumerated() {
            if i > 0, entry.offset == entries[i - 1].offset + UInt64(entries[i - 1].length) {
                append(0)
            } else {
                append(entry.offset + 1)
            }
        }
        return Data(out)
    }

    /// Reads uncompressed directory bytes; entries must be in ascending tile id order.
    public static func deserialize(_ data: Data) throws(FormatError) -> [Entry] {
        var reader = VarintReader(bytes: [UInt8](data))
        let count = try reader.next()
        // Each entry takes at least four bytes, so a count beyond that is a lie, not a big directory.
        guard count <= UInt64(data.count) / 4 + 1 else { throw .invalid("directory: \(count) entries in \(data.count) bytes") }
        var entries = [Entry](repeating: Entry(tileID: 0, offset: 0, length: 0, runLength: 0), count: Int(count))
        var last: UInt64 = 0
        for i in entries.indices {
            let delta = try reader.next()
            guard i == 0 || delta > 0 else { throw .invalid("directory: tile ids not ascending") }
            let (sum, overflow) = last.addingReportingOverflow(delta)
            guard !overflow else { throw .invalid("directory: tile id beyond 64 bits") }
            last = sum
            entries[i].tileID = last
        }
        for i in entries.indices { entries[i].runLength = try reader.uint32("run length") }
        for i in entries.indices { entries[i].length = try reader.uint32("length") }
        for i in entries.indices {
            let value = try reader.next()
            if value == 0 {
                guard i > 0 else { throw .invalid("directory: first offset follows on from nothing") }
                entries[i].offset = entries[i - 1].offset + UInt64(entries[i - 1].length)
            } else {
                entries[i].offset = value - 1
            }
        }
        guard reader.isAtEnd else { throw .invalid("directory: \(reader.remaining) bytes after the entries") }
        return entries
    }

    /// A directory's bytes as stored, compressed with `compression` (none or gzip).
    public static func encodeDirectory(_ entries: [Entry], compression: Compression) throws(FormatError) -> Data {
        let raw = serialize(entries)
        switch compression {
        case .none: return raw
        case .gzip:
            do { return try Gzip.compress(raw) } catch { throw .codec(error) }
        default: throw .unsupportedCompression(compression)
        }
    }

    /// Entries from a stored directory compressed with `compression`; `limit` caps the inflated size.
    public static func decodeDirectory(_ data: Data, compression: Compression,
                                       limit: Int = 64 << 20) throws(FormatError) -> [Entry] {
        switch compression {
        case .none: return try deserialize(data)
        case .gzip:
            let raw: Data
            do { raw = try Gzip.inflate(data, limit: limit) } catch { throw .codec(error) }
            return try deserialize(raw)
        default: throw .unsupportedCompression(compression)
        }
    }

    /// The entry of a sorted directory that holds `tileID`: a tile entry whose run covers it, or
    /// the leaf entry to descend into; nil when the directory has neither.
    public static func find(_ tileID: UInt64, in entries: [Entry]) -> Entry? {
        var low = 0, high = entries.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if entries[mid].tileID < tileID {
                low = mid + 1
            } else if entries[mid].tileID > tileID {
                high = mid - 1
            } else {
                return entries[mid]
            }
        }
        // `high` is now the last entry with a smaller id.
        guard high >= 0 else { return nil }
        let entry = entries[high]
        if entry.isLeaf { return entry }
        return tileID - entry.tileID < UInt64(entry.runLength) ? entry : nil
    }

    /// The root directory and the leaf directories for `entries` (sorted tile entries), laid out
    /// as go-pmtiles does: everything in the root when it fits beside the header in
    /// ``rootFetchSize`` bytes, else leaves of `leafSize` entries (doubled until the root of leaf
    /// pointers fits) stored one after another. Leaf entry offsets are relative to the leaves.
    public static func directories(for entries: [Entry], compression: Compression,
                                   leafSize startLeafSize: Int = 4096) throws(FormatError) -> (root: Data, leaves: Data) {
        let budget = rootFetchSize - headerSize
        let root = try encodeDirectory(entries, compression: compression)
        if root.count <= budget { return (root, Data()) }
        var leafSize = max(1, startLeafSize)
        while true {
            var leaves = Data()
            var pointers: [Entry] = []
            var start = 0
            while start < entries.count {
                let end = min(start + leafSize, entries.count)
                let leaf = try encodeDirectory(Array(entries[start..<end]), compression: compression)
                pointers.append(Entry(tileID: entries[start].tileID, offset: UInt64(leaves.count),
                                      length: UInt32(leaf.count), runLength: 0))
                leaves.append(leaf)
                start = end
            }
            let root = try encodeDirectory(pointers, compression: compression)
            if root.count <= budget { return (root, leaves) }
            leafSize *= 2
        }
    }

    // MARK: Varints
}

/// Reads LEB128 varints from a byte array, failing on truncation and on values over 64 bits.
private struct VarintReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func next() throws(PMTiles.FormatError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw .truncated("directory") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw .invalid("directory: varint beyond 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func uint32(_ what: String) throws(PMTiles.FormatError) -> UInt32 {
        let value = try next()
        guard let narrow = UInt32(exactly: value) else { throw .invalid("directory: \(what) \(value) beyond 32 bits") }
        return narrow
    }
}

/// Reads little-endian integers from a byte array the caller has checked is long enough.
private struct LittleEndianReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func uint8() -> UInt8 {
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return value
    }

    mutating func int32() -> Int32 {
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return Int32(bitPattern: value)
    }
}
