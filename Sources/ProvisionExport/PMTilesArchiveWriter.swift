import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionCodecs
import ProvisionStore

/// Writes a PMTiles v3 archive: tiles added in ascending tile id (Hilbert) order, each distinct
/// content stored once, consecutive tiles with equal content as one run; gzip-compressed root
/// and leaf directories and metadata; clustered tile data.
///
/// Tile data goes to a temporary file as tiles arrive; `finish` writes the header, the root
/// directory, the metadata and the leaf directories into a second temporary file, appends the
/// tile data and renames it over the destination. Memory holds one directory entry (24 bytes)
/// per run and one 128-bit key per distinct content, nothing per byte of tile data. Equal input
/// gives equal bytes.
public final class PMTilesArchiveWriter {
    /// What the archive holds, for the report.
    public struct Summary: Equatable, Sendable {
        /// Tiles a reader finds (runs counted in full).
        public var tileCount: Int
        /// Distinct tile contents stored.
        public var contentCount: Int
        /// Directory entries pointing at tile data.
        public var entryCount: Int
        /// Leaf directories (0 when every entry fits the root).
        public var leafCount: Int
        /// The archive's size in bytes.
        public var byteCount: UInt64
    }

    private let destination: URL
    private let data: ExportFile
    private var entries: [PMTiles.Entry] = []
    /// For each distinct content, the index of the first entry that holds it.
    private var contents: [ArchiveTile.ContentKey: Int32] = [:]
    private var lastTileID: UInt64?
    private var lastKey: ArchiveTile.ContentKey?
    private var finished = false

    /// Starts an archive that `finish` moves to `destination`, with room for `expectedTiles`
    /// directory entries and contents made at once: grown as tiles come, the entries and the
    /// content keys would each be copied at every doubling, old and new copies held together (at
    /// 1M tiles the content keys' last growth alone held 20 MB more than the 40 MB they end at).
    public init(destination: URL, expectedTiles: Int = 0) throws {
        self.destination = destination
        data = try ExportFile(destination: destination, suffix: "data")
        entries.reserveCapacity(expectedTiles)
        contents.reserveCapacity(expectedTiles)
    }

    deinit {
        data.discard()
    }

    /// Adds a tile; ids must ascend strictly.
    public func add(tileID: UInt64, tile: ArchiveTile) throws {
        if let lastTileID, tileID <= lastTileID {
            throw StoreError(.invalidInput, "PMTiles tile ids must ascend: \(tileID) after \(lastTileID)",
                             path: destination.path)
        }
        defer {
            lastTileID = tileID
            lastKey = tile.key
        }
        if let last = entries.last, let lastKey, lastKey == tile.key, last.tileID + UInt64(last.runLength) == tileID,
           last.runLength < UInt32.max {
            entries[entries.count - 1].runLength += 1
            return
        }
        if let index = contents[tile.key] {
            let first = entries[Int(index)]
            entries.append(PMTiles.Entry(tileID: tileID, offset: first.offset, length: first.length, runLength: 1))
            return
        }
        guard let length = UInt32(exactly: tile.bytes.count) else {
            throw StoreError(.invalidInput, "a tile of \(grouped(tile.bytes.count)) bytes is too large for PMTiles", path: destination.path)
        }
        contents[tile.key] = Int32(entries.count)
        entries.append(PMTiles.Entry(tileID: tileID, offset: data.length, length: length, runLength: 1))
        try data.write(tile.bytes)
    }

    /// Writes the archive with a header saying what its tiles are: `tileType`, gzip-compressed
    /// when `gzipped`, at `zooms`, within `extent` and opening at its centre; `metadata` is JSON.
    func finish(tileType: PMTiles.TileType, gzipped: Bool, zooms: ClosedRange<Int>, extent: ExportExtent,
                metadata: Data) throws -> Summary {
        try finish(header: Self.header(tileType: tileType, gzipped: gzipped, zooms: zooms, extent: extent), metadata: metadata)
    }

    /// The header fields that describe the tiles; `finish` fills in the offsets and counts.
    static func header(tileType: PMTiles.TileType, gzipped: Bool, zooms: ClosedRange<Int>,
                       extent: ExportExtent) -> PMTiles.Header {
        var header = PMTiles.Header()
        header.tileType = tileType
        header.tileCompression = gzipped ? .gzip : .none
        header.minZoom = UInt8(zooms.lowerBound)
        header.maxZoom = UInt8(zooms.upperBound)
        header.minLonE7 = extent.west
        header.minLatE7 = extent.south
        header.maxLonE7 = extent.east
        header.maxLatE7 = extent.north
        header.centerZoom = UInt8(extent.centerZoom)
        (header.centerLonE7, header.centerLatE7) = extent.center
        return header
    }

    /// Writes the archive with `header`'s tile type, compression, zooms, bounds and centre (its
    /// offsets and counts are filled in here) and `metadata` (JSON, gzip-compressed here), and
    /// renames it over the destination.
    public func finish(header template: PMTiles.Header, metadata: Data) throws -> Summary {
        guard !finished else { throw StoreError(.invalidInput, "the archive is already finished", path: destination.path) }
        finished = true
        let root: Data, leaves: Data, packedMetadata: Data
        do {
            (root, leaves) = try PMTiles.directories(for: entries, compression: .gzip)
            packedMetadata = try Gzip.compress(metadata)
        } catch {
            throw StoreError(.compression, "cannot encode the PMTiles directories: \(error)", path: destination.path)
        }
        var header = template
        header.internalCompression = .gzip
        header.clustered = true
        header.rootDirectoryOffset = UInt64(PMTiles.headerSize)
        header.rootDirectoryLength = UInt64(root.count)
        header.metadataOffset = header.rootDirectoryOffset + header.rootDirectoryLength
        header.metadataLength = UInt64(packedMetadata.count)
        header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
        header.leafDirectoriesLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafDirectoriesOffset + header.leafDirectoriesLength
        header.tileDataLength = data.length
        header.addressedTilesCount = entries.reduce(0) { $0 + UInt64($1.runLength) }
        header.tileEntriesCount = UInt64(entries.count)
        header.tileContentsCount = UInt64(contents.count)

        let archive = try ExportFile(destination: destination)
        do {
            for part in [header.encoded(), root, packedMetadata, leaves] { try archive.write(part) }
            try archive.append(contentsOf: data)
            try archive.commit()
        } catch {
            archive.discard()
            throw error
        }
        data.discard()
        // The root was just encoded here; decoding it fails only if encoding did, which the write would have thrown.
        let leafCount = leaves.isEmpty ? 0 : (try? PMTiles.decodeDirectory(root, compression: .gzip).count) ?? 0
        return Summary(tileCount: Int(header.addressedTilesCount), contentCount: contents.count, entryCount: entries.count,
                       leafCount: leafCount, byteCount: archive.length)
    }

    /// Gives up: removes the temporary files.
    public func abandon() {
        data.discard()
    }
}
