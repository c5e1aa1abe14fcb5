import Foundation

/// Walks a tile extract's members one header after another without trusting its `index.bin`:
/// what can still be read of an extract whose index is damaged or replaced, or whose end is cut off.
public enum TileExtractScan {
    /// A member named by a tile's path, where its bytes lie.
    public struct Member: Equatable, Sendable {
        public var tile: GraphTileID
        public var offset: UInt64
        public var size: Int
    }

    /// The tile members of the extract at `url`, in file order, up to the first block that is not a
    /// member header or the first member that runs past the end of the file. Members whose name is
    /// not a tile path (`index.bin`, a pax header) are passed over.
    public static func members(_ url: URL) throws -> [Member] {
        let data = try Data(contentsOf: url, options: .alwaysMapped)
        var members: [Member] = []
        var offset = 0
        while offset + TarHeader.blockSize <= data.count,
              let header = TarHeader.decode([UInt8](data[offset ..< offset + TarHeader.blockSize])) {
            let start = offset + TarHeader.blockSize
            guard start + header.size <= data.count else { break }
            // A member that is not a tile's path is none of the tiles a reader looks for.
            if let tile = try? GraphTileID.parse(path: header.name) {
                members.append(Member(tile: tile, offset: UInt64(start), size: header.size))
            }
            offset = start + TarHeader.padded(header.size)
        }
        return members
    }
}
