/// A Web Mercator XYZ tile: zoom `z`, column `x` from the west, row `y` from the north.
public struct TileID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var z: Int
    public var x: Int
    public var y: Int

    public init(z: Int, x: Int, y: Int) {
        self.z = z
        self.x = x
        self.y = y
    }

    /// Orders by zoom, then column, then row: the order tiles are enumerated and stored in.
    public static func < (a: TileID, b: TileID) -> Bool {
        (a.z, a.x, a.y) < (b.z, b.x, b.y)
    }

    /// The row counted from the south, as TMS and MBTiles number it.
    public var tmsY: Int { (1 << z) - 1 - y }

    public var description: String { "\(z)/\(x)/\(y)" }
}
