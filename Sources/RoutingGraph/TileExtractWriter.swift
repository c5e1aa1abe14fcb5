import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a reproducible Valhalla tile extract (`mjolnir.tile_extract`): an uncompressed ustar tar
/// whose first member is `index.bin`, then one member per tile.
///
/// Why reproducible: the same tiles give the same bytes whatever order they arrive in or whatever
/// history the store has, so an extract can be compared, hashed and merged. Members come in
/// ``GraphTileID`` order (level, then index: the order of the tile paths, which is also the order
/// `valhalla_build_extract` writes); every member has the one `mtime` given (0 unless a build time
/// is asked for), uid and gid 0, mode 0644, empty user and group names; the tar ends with two zero
/// blocks padded to a 10,240-byte record. `index.bin` holds one entry per tile in member order.
///
/// The layout is computed from the tile sizes before a byte is written, so `index.bin` is written
/// first and final (no seeking back) and tiles stream through one at a time. The tar is written to
/// a temporary file beside `destination`, flushed, and renamed over it: a reader never sees half
/// an extract.
public enum TileExtractWriter {
    /// The name of the index member.
    public static let indexName = "index.bin"

    /// The entries of the extract of tiles with `sizes`: offsets as ``write(to:sizes:mtime:body:)`` lays
    /// them out, in member order.
    public static func layout(sizes: [GraphTileID: Int]) throws(TileExtractError) -> [TileExtractEntry] {
        let tiles = sizes.keys.sorted()
        var offset = TarHeader.blockSize + TarHeader.padded(tiles.count * TileExtractEntry.size)
        var entries: [TileExtractEntry] = []
        entries.reserveCapacity(tiles.count)
        for tile in tiles {
            let size = sizes[tile] ?? 0
            guard size >= 0, size <= Int(UInt32.max), size < 0o77777777777 else {
                throw .tileTooLarge(tile: tile, byteCount: size)
            }
            offset += TarHeader.blockSize
            entries.append(TileExtractEntry(offset: UInt64(offset), graphID: UInt32(tile.graphID), size: UInt32(size)))
            offset += TarHeader.padded(size)
        }
        return entries
    }

    /// Writes the extract of the tiles in `sizes` to `destination`, asking `body` for each tile's
    /// bytes in member order; returns the index entries written.
    ///
    /// A body whose size differs from `sizes` stops the write (``TileExtractError/bodySizeMismatch``)
    /// and leaves `destination` as it was; so does any error `body` throws.
    @discardableResult
    public static func write(to destination: URL, sizes: [GraphTileID: Int], mtime: Int = 0,
                             body: (GraphTileID) throws -> [UInt8]) throws -> [TileExtractEntry] {
        let entries = try layout(sizes: sizes)
        let directory = destination.deletingLastPathComponent()
        let partial = directory.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).partial")
        let fd = open(partial.path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw TileExtractError.io(path: partial.path, operation: "open", errno: errno) }
        var renamed = false
        defer {
            close(fd)
            if !renamed { unlink(partial.path) }
        }
        var output = BufferedOutput(fd: fd, path: partial.path)
        let index = entries.flatMap(\.encoded)
        try output.member(TarHeader(name: indexName, size: index.count, mtime: mtime), bytes: index)
        for entry in entries {
            guard let tile = GraphTileID(graphID: UInt64(entry.graphID)) else { continue }
            let bytes = try body(tile)
            guard bytes.count == Int(entry.size) else {
                throw TileExtractError.bodySizeMismatch(tile: tile, planned: Int(entry.size), given: bytes.count)
            }
            try output.member(TarHeader(name: tile.path, size: bytes.count, mtime: mtime), bytes: bytes)
        }
        try output.end()
        guard fsync(fd) == 0 else { throw TileExtractError.io(path: partial.path, operation: "fsync", errno: errno) }
        guard rename(partial.path, destination.path) == 0 else {
            throw TileExtractError.io(path: destination.path, operation: "rename", errno: errno)
        }
        renamed = true
        return entries
    }

    /// A write buffer over a file descriptor that counts what it wrote.
    struct BufferedOutput {
        let fd: Int32
        let path: String
        var buffer: [UInt8] = []
        var written = 0

        init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
            buffer.reserveCapacity(1 << 20)
        }

        mutating func member(_ header: TarHeader, bytes: [UInt8]) throws(TileExtractError) {
            try append(header.encoded())
            try append(bytes)
            try append([UInt8](repeating: 0, count: TarHeader.padded(bytes.count) - bytes.count))
        }

        mutating func end() throws(TileExtractError) {
            let total = written + buffer.count + 2 * TarHeader.blockSize
            let padded = (total + TarHeader.recordSize - 1) / TarHeader.recordSize * TarHeader.recordSize
            try append([UInt8](repeating: 0, count: padded - written - buffer.count))
            try flush()
        }

        mutating func append(_ bytes: [UInt8]) throws(TileExtractError) {
            buffer += bytes
            if buffer.count >= 1 << 20 { try flush() }
        }

        mutating func flush() throws(TileExtractError) {
            var start = 0
            while start < buffer.count {
                let count = buffer[start...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { throw .io(path: path, operation: "write", errno: errno) }
                start += count
            }
            written += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif
