import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// The `bounds` and `center` of an exported tileset: the union of the exported regions'
/// extents, clamped to the tiles stored at the tileset's highest zoom, in whole 10^-7 degrees
/// (the precision of a PMTiles header, so both formats state the same numbers).
struct ExportExtent: Equatable {
    /// West, south, east and north in 10^-7 degrees.
    var west: Int32
    var south: Int32
    var east: Int32
    var north: Int32
    /// The zoom a viewer opens at: the tileset's lowest.
    var centerZoom: Int

    /// The centre longitude and latitude in 10^-7 degrees.
    var center: (lon: Int32, lat: Int32) {
        (Int32((Int64(west) + Int64(east)) / 2), Int32((Int64(south) + Int64(north)) / 2))
    }

    /// The extent of `regions` (MapLibre region definitions) clamped to `stored` (the box of the
    /// stored tiles); `stored` alone when no region has a usable extent or they miss it.
    init(definitions regions: [Data], stored: BoundingBox, minZoom: Int) {
        var union: BoundingBox?
        for definition in regions {
            guard let box = Self.extent(ofDefinition: definition) else { continue }
            union = union.map {
                BoundingBox(west: min($0.west, box.west), south: min($0.south, box.south),
                            east: max($0.east, box.east), north: max($0.north, box.north))
            } ?? box
        }
        var box = stored
        if let union {
            let clamped = BoundingBox(west: max(union.west, stored.west), south: max(union.south, stored.south),
                                      east: min(union.east, stored.east), north: min(union.north, stored.north))
            if clamped.west < clamped.east && clamped.south < clamped.north { box = clamped }
        }
        west = Self.e7(box.west)
        south = Self.e7(box.south)
        east = Self.e7(box.east)
        north = Self.e7(box.north)
        centerZoom = minZoom
    }

    /// The box of a region definition: its `bounds` ([south, west, north, east]) or the extent of
    /// its `geometry`'s coordinates; a box crossing the antimeridian spans every longitude.
    static func extent(ofDefinition data: Data) -> BoundingBox? {
        // Not JSON: no extent from it (the catalog warns about the row); the stored tiles' extent stands.
        guard let definition = try? JSONValue.parse(data) else { return nil }
        if let bounds = definition["bounds"]?.arrayValue?.compactMap(\.doubleValue), bounds.count == 4 {
            let (south, west, north, east) = (bounds[0], bounds[1], bounds[2], bounds[3])
            return west <= east ? BoundingBox(west: west, south: south, east: east, north: north)
                : BoundingBox(west: -180, south: south, east: 180, north: north)
        }
        var lons: [Double] = [], lats: [Double] = []
        func walk(_ value: JSONValue) {
            guard let items = value.arrayValue else { return }
            if items.count >= 2, let lon = items[0].doubleValue, let lat = items[1].doubleValue {
                lons.append(lon)
                lats.append(lat)
            } else {
                items.forEach(walk)
            }
        }
        func geometry(_ value: JSONValue) {
            if let coordinates = value["coordinates"] { walk(coordinates) }
            value["geometries"]?.arrayValue?.forEach(geometry)
        }
        if let value = definition["geometry"] { geometry(value) }
        guard let west = lons.min(), let east = lons.max(), let south = lats.min(), let north = lats.max() else { return nil }
        return BoundingBox(west: west, south: south, east: east, north: north)
    }

    /// The box of the stored tiles (XYZ) between columns `minX...maxX` and rows `minY...maxY` at zoom `z`.
    static func box(zoom z: Int, minX: Int, minY: Int, maxX: Int, maxY: Int) -> BoundingBox {
        let northWest = TileID(z: z, x: minX, y: minY).bounds
        let southEast = TileID(z: z, x: maxX, y: maxY).bounds
        return BoundingBox(west: northWest.west, south: southEast.south, east: southEast.east, north: northWest.north)
    }

    /// Degrees as whole 10^-7 degrees, rounded half away from zero.
    static func e7(_ degrees: Double) -> Int32 {
        Int32((degrees * 10_000_000).rounded())
    }

    /// 10^-7 degrees as decimal text without trailing zeros (`-74.2812700` → `-74.28127`).
    static func text(_ e7: Int32) -> String {
        let magnitude = abs(Int64(e7))
        var fraction = String(magnitude % 10_000_000)
        fraction = String(repeating: "0", count: 7 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (e7 < 0 ? "-" : "") + String(magnitude / 10_000_000) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// `west,south,east,north`, as MBTiles and TileJSON write `bounds`.
    var boundsText: String { [west, south, east, north].map(Self.text).joined(separator: ",") }

    /// `lon,lat,zoom`, as MBTiles writes `center`.
    var centerText: String { "\(Self.text(center.lon)),\(Self.text(center.lat)),\(centerZoom)" }
}
