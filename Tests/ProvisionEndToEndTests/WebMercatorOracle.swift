import Foundation

/// A tile address, for comparing sets.
struct TileAddress: Hashable, Comparable, CustomStringConvertible {
    var z: Int
    var x: Int
    var y: Int

    static func < (a: TileAddress, b: TileAddress) -> Bool { (a.z, a.x, a.y) < (b.z, b.x, b.y) }

    var description: String { "\(z)/\(x)/\(y)" }
}

/// The tile cover of a bounding box, computed here from the Web Mercator formulas as `mercantile`
/// and MapLibre do (independently of TileMath): columns floor(xWest)..<ceil(xEast), rows
/// floor(yNorth)..<ceil(ySouth), in fractional tile coordinates at zoom z.
enum WebMercatorOracle {
    /// Fractional tile column of a longitude.
    static func x(_ longitude: Double, zoom: Int) -> Double {
        (longitude + 180) / 360 * pow(2, Double(zoom))
    }

    /// Fractional tile row of a latitude (rows grow southwards).
    static func y(_ latitude: Double, zoom: Int) -> Double {
        let phi = latitude * .pi / 180
        return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * pow(2, Double(zoom))
    }

    /// The tiles covering `bbox` = [west, south, east, north] at each zoom of `zooms`.
    static func tiles(bbox: [Double], zooms: ClosedRange<Int>) -> Set<TileAddress> {
        var out = Set<TileAddress>()
        for z in zooms {
            let columns = Int(floor(x(bbox[0], zoom: z)))..<Int(ceil(x(bbox[2], zoom: z)))
            let rows = Int(floor(y(bbox[3], zoom: z)))..<Int(ceil(y(bbox[1], zoom: z)))
            for column in columns {
                for row in rows { out.insert(TileAddress(z: z, x: column, y: row)) }
            }
        }
        return out
    }

    /// How many tiles cover `bbox` at `zoom`.
    static func count(bbox: [Double], zoom: Int) -> Int {
        tiles(bbox: bbox, zooms: zoom...zoom).count
    }
}
