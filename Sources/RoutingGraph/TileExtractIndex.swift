import Foundation

/// One entry of an extract's `index.bin`: 16 little-endian bytes, the offset of the tile's data in
/// the tar (uint64), the tile's graph id `level | index << 3` (uint32) and its size (uint32).
public struct TileExtractEntry: Hashable, Sendable {
    /// The byte size of an entry.
    public static let size = 16

    /// Where the tile's bytes start in the tar.
    public var offset: UInt64
    /// The tile's graph id as stored (32 bits).
    public var graphID: UInt32
    /// The tile's size in bytes.
    public var size: UInt32

    /// Creates an entry from its three fields.
    public init(offset: UInt64, graphID: UInt32, size: UInt32) {
        self.offset = offset
        self.graphID = graphID
        self.size = size
    }

    /// The entry's 16 bytes.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(TileExtractEntry.size)
        withUnsafeBytes(of: offset.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: graphID.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: size.littleEndian) { bytes += $0 }
        return bytes
    }

    /// The entries of an `index.bin` body, or nil when its size is not a multiple of 16.
    public static func decode(_ bytes: [UInt8]) -> [TileExtractEntry]? {
        guard bytes.count % size == 0 else { return nil }
        return bytes.withUnsafeBytes { raw in
            stride(from: 0, to: bytes.count, by: size).map { at in
                TileExtractEntry(offset: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self).littleEndian,
                                 graphID: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self).littleEndian,
                                 size: raw.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self).littleEndian)
            }
        }
    }
}

/// Why an extract cannot be written or read, naming the file and what is wrong.
public enum TileExtractError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed.
    case io(path: String, operation: String, errno: Int32)
    /// The file does not start with a valid tar header.
    case notATar(path: String)
    /// The first member is not `index.bin`.
    case firstMemberNotIndex(path: String, found: String)
    /// `index.bin`'s size is not a multiple of 16 bytes.
    case indexSizeInvalid(path: String, byteCount: Int)
    /// An entry's graph id names no tile of the hierarchy.
    case entryUnknownTile(path: String, entry: Int, graphID: UInt32)
    /// Two entries name one tile.
    case entryDuplicate(path: String, tile: GraphTileID)
    /// An entry's bytes reach past the end of the file.
    case entryPastEnd(path: String, tile: GraphTileID, end: UInt64, fileSize: UInt64)
    /// An entry's bytes start inside the tar's first member or not after a member header.
    case entryOffsetInvalid(path: String, tile: GraphTileID, offset: UInt64)
    /// The member header before an entry's bytes is missing, names another path or another size.
    case memberMismatch(path: String, tile: GraphTileID, found: String)
    /// A tile the reader was asked for is not in the extract.
    case tileAbsent(path: String, tile: GraphTileID)
    /// A tile's bytes given to the writer differ in size from what the layout was planned with.
    case bodySizeMismatch(tile: GraphTileID, planned: Int, given: Int)
    /// A tile's size does not fit the index's 32 bits, or a name the ustar field.
    case tileTooLarge(tile: GraphTileID, byteCount: Int)

    /// One line naming the file and what is wrong.
    public var description: String {
        switch self {
        case .io(let path, let operation, let code):
            return "\(path): \(operation) failed: \(String(cString: strerror(code)))"
        case .notATar(let path):
            return "\(path): not a tar file (no valid ustar header at byte 0)"
        case .firstMemberNotIndex(let path, let found):
            return "\(path): the first member is \"\(found)\", not index.bin"
        case .indexSizeInvalid(let path, let count):
            return "\(path): index.bin is \(count) bytes, not a multiple of \(TileExtractEntry.size)"
        case .entryUnknownTile(let path, let entry, let id):
            return "\(path): index.bin entry \(entry) has graph id \(id), no tile of levels 0…3"
        case .entryDuplicate(let path, let tile):
            return "\(path): index.bin names tile \(tile.path) twice"
        case .entryPastEnd(let path, let tile, let end, let size):
            return "\(path): index.bin puts \(tile.path) at bytes up to \(end), past the file's \(size) bytes"
        case .entryOffsetInvalid(let path, let tile, let offset):
            return "\(path): index.bin puts \(tile.path) at offset \(offset), not after a member header past index.bin"
        case .memberMismatch(let path, let tile, let found):
            return "\(path): index.bin's entry for \(tile.path) points at \(found)"
        case .tileAbsent(let path, let tile):
            return "\(path): no tile \(tile.path) in the extract"
        case .bodySizeMismatch(let tile, let planned, let given):
            return "tile \(tile.path) is \(given) bytes, the extract's layout was planned with \(planned)"
        case .tileTooLarge(let tile, let count):
            return "tile \(tile.path) is \(count) bytes, more than an index.bin entry holds"
        }
    }
}

/// The validated `index.bin` of a tile extract, read from the tar's first bytes wherever they come
/// from: a local file (``TileExtractReader``) or a server's byte ranges.
///
/// Why separate from the reader: an extract read over HTTP has no file to `pread`, yet its index
/// must pass the same checks before a tile is asked for; the member header before each tile is
/// checked when its bytes arrive (``checkMember(_:tile:entry:path:)``).
public struct TileExtractIndex: Sendable {
    /// The index entries by tile.
    public let entries: [GraphTileID: TileExtractEntry]
    /// The tiles, in index order.
    public let tiles: [GraphTileID]

    /// How many bytes from the tar's start hold `index.bin` with its header, read from its first
    /// 512 bytes (`head`, at least that many); `path` names the extract in errors.
    public static func headSize(_ head: [UInt8], path: String, fileSize: UInt64) throws(TileExtractError) -> Int {
        guard head.count >= TarHeader.blockSize, let header = TarHeader.decode(Array(head.prefix(TarHeader.blockSize))) else {
            throw .notATar(path: path)
        }
        guard header.name == TileExtractWriter.indexName else { throw .firstMemberNotIndex(path: path, found: header.name) }
        guard UInt64(TarHeader.blockSize + header.size) <= fileSize else {
            throw .indexSizeInvalid(path: path, byteCount: header.size)
        }
        return TarHeader.blockSize + header.size
    }

    /// Validates the index in `head` (the tar's first ``headSize(_:path:fileSize:)`` bytes or more)
    /// against a file of `fileSize` bytes: every entry a tile of levels 0…3, once, its bytes after
    /// `index.bin`, on a block boundary and inside the file; `checkEntry` (a local reader's member
    /// header check) runs on each entry in index order, after those checks.
    public init(head: [UInt8], path: String, fileSize: UInt64,
                checkEntry: (GraphTileID, TileExtractEntry) throws(TileExtractError) -> Void = { _, _ in }) throws(TileExtractError) {
        let size = try Self.headSize(head, path: path, fileSize: fileSize)
        guard head.count >= size, let list = TileExtractEntry.decode(Array(head[TarHeader.blockSize..<size])) else {
            throw .indexSizeInvalid(path: path, byteCount: size - TarHeader.blockSize)
        }
        let firstTileByte = UInt64(TarHeader.blockSize + TarHeader.padded(size - TarHeader.blockSize) + TarHeader.blockSize)
        var entries: [GraphTileID: TileExtractEntry] = [:]
        for (number, entry) in list.enumerated() {
            guard let tile = GraphTileID(graphID: UInt64(entry.graphID)), UInt64(entry.graphID) == tile.graphID else {
                throw .entryUnknownTile(path: path, entry: number, graphID: entry.graphID)
            }
            guard entries[tile] == nil else { throw .entryDuplicate(path: path, tile: tile) }
            let end = entry.offset + UInt64(entry.size)
            guard end <= fileSize else { throw .entryPastEnd(path: path, tile: tile, end: end, fileSize: fileSize) }
            guard entry.offset >= firstTileByte, entry.offset % UInt64(TarHeader.blockSize) == 0 else {
                throw .entryOffsetInvalid(path: path, tile: tile, offset: entry.offset)
            }
            try checkEntry(tile, entry)
            entries[tile] = entry
        }
        self.entries = entries
        tiles = entries.keys.sorted()
    }

    /// The size of a member header: the bytes just before each tile's.
    public static var memberHeaderSize: Int { TarHeader.blockSize }

    /// Checks that `block`, the 512 bytes before `entry`'s bytes, is the member header of `tile`'s
    /// path with the entry's size.
    public static func checkMember(_ block: [UInt8], tile: GraphTileID, entry: TileExtractEntry, path: String) throws(TileExtractError) {
        guard let member = TarHeader.decode(block), member.name == tile.path, member.size == Int(entry.size) else {
            let found = TarHeader.decode(block).map { "member \"\($0.name)\" of \($0.size) bytes" } ?? "no member header"
            throw .memberMismatch(path: path, tile: tile, found: found)
        }
    }
}
