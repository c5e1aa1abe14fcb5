import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a Valhalla tile extract through its `index.bin`, validating the index before any tile is
/// trusted, and reads tiles by id with `pread` (no whole-file read, no memory map).
///
/// Validated when opened: the file starts with a ustar header of `index.bin`; its size is a
/// multiple of 16; every entry names a tile of levels 0…3, once; its bytes lie past `index.bin`
/// and inside the file; the member header just before them names that tile's path with that size.
/// Any failure is a ``TileExtractError`` naming the file and the entry. Tile bytes themselves are
/// checked by ``readChecked(_:)`` (``GraphTileHeader/check(_:expected:)``).
public final class TileExtractReader: Sendable {
    /// The extract's path.
    public let path: String
    /// The index entries by tile.
    public let entries: [GraphTileID: TileExtractEntry]
    /// The tiles, in index order.
    public let tiles: [GraphTileID]
    /// The file's size in bytes.
    public let fileSize: UInt64

    private let fd: Int32

    /// Opens and validates the extract at `url`.
    public init(url: URL) throws(TileExtractError) {
        path = url.path
        fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw .io(path: url.path, operation: "open", errno: errno) }
        do throws(TileExtractError) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw TileExtractError.io(path: path, operation: "fstat", errno: errno) }
            fileSize = UInt64(info.st_size)
            let first = try TileExtractReader.readBytes(fd: fd, path: path, offset: 0, count: TarHeader.blockSize)
            let headSize = try TileExtractIndex.headSize(first, path: path, fileSize: fileSize)
            let head = try TileExtractReader.readBytes(fd: fd, path: path, offset: 0, count: headSize)
            let fd = self.fd, path = self.path
            let index = try TileExtractIndex(head: head, path: path, fileSize: fileSize) { tile, entry throws(TileExtractError) in
                let memberBlock = try TileExtractReader.readBytes(fd: fd, path: path,
                                                                  offset: entry.offset - UInt64(TarHeader.blockSize),
                                                                  count: TarHeader.blockSize)
                try TileExtractIndex.checkMember(memberBlock, tile: tile, entry: entry, path: path)
            }
            let entries = index.entries
            self.entries = entries
            tiles = entries.keys.sorted()
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        close(fd)
    }

    /// The bytes of `tile`, read with `pread`.
    public func read(_ tile: GraphTileID) throws(TileExtractError) -> [UInt8] {
        guard let entry = entries[tile] else { throw .tileAbsent(path: path, tile: tile) }
        return try TileExtractReader.readBytes(fd: fd, path: path, offset: entry.offset, count: Int(entry.size))
    }

    /// The bytes of `tile` with its header checked against the tile asked for.
    public func readChecked(_ tile: GraphTileID) throws -> (bytes: [UInt8], header: GraphTileHeader) {
        let bytes = try read(tile)
        return (bytes, try GraphTileHeader.check(bytes, expected: tile))
    }

    static func readBytes(fd: Int32, path: String, offset: UInt64, count: Int) throws(TileExtractError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 { throw .io(path: path, operation: "pread", errno: errno) }
            if got == 0 { throw .io(path: path, operation: "pread (unexpected end of file)", errno: EIO) }
            done += got
        }
        return bytes
    }
}
