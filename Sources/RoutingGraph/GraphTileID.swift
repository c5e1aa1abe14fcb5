import Foundation

/// One tile of Valhalla's routing graph: a level and a cell index on that level's grid.
///
/// A Valhalla graph id is 64 bits: the level in the lowest 3 bits, the tile index in the next 22,
/// the id of an object inside the tile in the 21 above; a tile's own id has object id 0, so it is
/// `level | index << 3` and fits in the 46 bits a tile header stores (and the 32 bits an extract's
/// `index.bin` entry stores). Tiles order by level, then index: the order of their paths.
public struct GraphTileID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The hierarchy level.
    public let level: GraphLevel
    /// The cell index on the level's grid: row × columns + column.
    public let index: Int

    /// The low 46 bits of a tile header's first word: level, tile index and object id.
    public static let headerIDMask: UInt64 = (1 << 46) - 1

    /// The tile `index` of `level`, or nil when the index is outside the level's grid.
    public init?(level: GraphLevel, index: Int) {
        guard index >= 0, index <= level.maxIndex else { return nil }
        self.level = level
        self.index = index
    }

    init(uncheckedLevel level: GraphLevel, index: Int) {
        self.level = level
        self.index = index
    }

    /// The tile a graph id names (the object id bits above bit 25 ignored), or nil when its level or
    /// index is outside the hierarchy.
    public init?(graphID: UInt64) {
        guard let level = GraphLevel(Int(graphID & 7)) else { return nil }
        self.init(level: level, index: Int((graphID >> 3) & 0x3F_FFFF))
    }

    /// The tile's graph id: `level | index << 3` (object id 0).
    public var graphID: UInt64 { UInt64(level.level) | UInt64(index) << 3 }

    /// The cell's column and row on its level's grid.
    public var column: Int { index % level.columns }
    /// The cell's row, south to north.
    public var row: Int { index / level.columns }

    /// The cell's south-west corner (lng, lat) in degrees.
    public var baseCorner: (lng: Double, lat: Double) { level.baseCorner(index: index) }

    /// The path of the tile under a tile directory, extract or `{tilePath}` URL: the level, then the
    /// index zero-padded to ``GraphLevel/pathDigits`` and cut into groups of three digits, then
    /// `.gph` (`2/000/864/819.gph`).
    public var path: String {
        let digits = level.pathDigits
        var bytes = [UInt8](repeating: UInt8(ascii: "/"), count: 2 + digits + digits / 3 - 1 + 4)
        bytes[0] = UInt8(ascii: "0") + UInt8(level.level)
        var value = index, position = bytes.count - 5
        for digit in 0..<digits {
            if digit > 0, digit % 3 == 0 { position -= 1 }  // skip the group's slash
            bytes[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            position -= 1
        }
        bytes.replaceSubrange((bytes.count - 4)..., with: Array(".gph".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses a tile path as ``path`` writes it; any other spelling (a missing or extra group, a
    /// group not of three ASCII digits, an unknown level, an index past the grid, another suffix, a
    /// leading or trailing slash) is refused with the reason.
    public static func parse(path: String) throws(GraphTilePathError) -> GraphTileID {
        let bytes = Array(path.utf8)
        guard bytes.count > 4, bytes.suffix(4).elementsEqual(".gph".utf8) else {
            throw .init(path: path, reason: "does not end in .gph")
        }
        let stem = bytes.dropLast(4)
        let parts = stem.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard let first = parts.first, first.count == 1, let digit = first.first,
              (UInt8(ascii: "0")...UInt8(ascii: "3")).contains(digit),
              let level = GraphLevel(Int(digit - UInt8(ascii: "0"))) else {
            throw .init(path: path, reason: "does not start with a level 0…3")
        }
        let groups = parts.dropFirst()
        guard groups.count == level.pathDigits / 3 else {
            throw .init(path: path, reason: "has \(groups.count) digit groups, \(level) has \(level.pathDigits / 3)")
        }
        var index = 0
        for group in groups {
            guard group.count == 3, group.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                throw .init(path: path, reason: "has the group \"\(String(decoding: group, as: UTF8.self))\", not three digits")
            }
            for byte in group { index = index * 10 + Int(byte - UInt8(ascii: "0")) }
        }
        guard let tile = GraphTileID(level: level, index: index) else {
            throw .init(path: path, reason: "names index \(index), past \(level)'s largest \(level.maxIndex)")
        }
        return tile
    }

    /// `level/index`, as in `2/864819`.
    public var description: String { "\(level.level)/\(index)" }

    /// Level first, then index: the order of tile paths and of an extract's members.
    public static func < (lhs: GraphTileID, rhs: GraphTileID) -> Bool {
        (lhs.level.level, lhs.index) < (rhs.level.level, rhs.index)
    }
}

/// A tile path that is not one ``GraphTileID/path`` writes.
public struct GraphTilePathError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path as given.
    public var path: String
    /// What is wrong with it.
    public var reason: String

    /// `not a graph tile path "x": reason`.
    public var description: String { "not a graph tile path \"\(path)\": it \(reason)" }
}
