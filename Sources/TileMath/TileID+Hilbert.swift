/// PMTiles v3 tile ids: every tile of every zoom on one Hilbert curve.
///
/// A tile's id is the number of tiles on all lower zooms, (4^z − 1) / 3, plus the tile's position
/// on the Hilbert curve that fills its zoom's 2^z × 2^z grid, starting at the north-west corner.
/// So 0/0/0 is 0, and zoom 1 runs 1/0/0, 1/0/1, 1/1/1, 1/1/0 as 1…4. Ids are ordered by zoom, and
/// tiles near each other on the map get ids near each other, which keeps an archive's runs long.
extension TileID {
    /// The highest zoom with PMTiles ids: the ids of zoom 31 and above do not fit 64 bits.
    public static let maxPMTilesZoom = 26

    /// The first PMTiles id of zoom `z`: the number of tiles on zooms 0 to z − 1.
    public static func firstPMTilesID(zoom z: Int) -> UInt64 {
        ((UInt64(1) << (2 * UInt64(z))) - 1) / 3
    }

    /// The tile's PMTiles id, or nil when the tile is not valid or its zoom is over ``maxPMTilesZoom``.
    public var pmtilesID: UInt64? {
        guard isValid, z <= TileID.maxPMTilesZoom else { return nil }
        let n = UInt64(1) << UInt64(z)
        var x = UInt64(self.x), y = UInt64(self.y), d: UInt64 = 0
        var s = n >> 1
        while s > 0 {
            let rx: UInt64 = x & s != 0 ? 1 : 0
            let ry: UInt64 = y & s != 0 ? 1 : 0
            d += s * s * ((3 * rx) ^ ry)
            TileID.rotate(size: n, x: &x, y: &y, rx: rx, ry: ry)
            s >>= 1
        }
        return TileID.firstPMTilesID(zoom: z) + d
    }

    /// The tile with PMTiles id `id`, or nil when the id lies beyond zoom ``maxPMTilesZoom``.
    public init?(pmtilesID id: UInt64) {
        var z = 0
        while z <= TileID.maxPMTilesZoom, id >= TileID.firstPMTilesID(zoom: z + 1) { z += 1 }
        guard z <= TileID.maxPMTilesZoom else { return nil }
        var t = id - TileID.firstPMTilesID(zoom: z)
        var x: UInt64 = 0, y: UInt64 = 0, s: UInt64 = 1
        let n = UInt64(1) << UInt64(z)
        while s < n {
            let rx = 1 & (t / 2)
            let ry = 1 & (t ^ rx)
            TileID.rotate(size: s, x: &x, y: &y, rx: rx, ry: ry)
            x += s * rx
            y += s * ry
            t /= 4
            s <<= 1
        }
        self.init(z: z, x: Int(x), y: Int(y))
    }

    /// The Hilbert curve's turn within a square of side `size` (x and y below `size`).
    private static func rotate(size: UInt64, x: inout UInt64, y: inout UInt64, rx: UInt64, ry: UInt64) {
        guard ry == 0 else { return }
        if rx == 1 {
            x = size - 1 - x
            y = size - 1 - y
        }
        swap(&x, &y)
    }
}
