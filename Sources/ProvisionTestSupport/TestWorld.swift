import Foundation
import TileMath

/// A small part of Helsinki written as OpenMapTiles vector tiles at zooms 12 to 14, with the true
/// positions of everything named in it: the tiles the place index and search pack tests (and
/// `provision search`'s end-to-end tests) index.
public enum TestWorld {
    public static let area = BoundingBox(west: 24.90, south: 60.15, east: 24.98, north: 60.20)
    public static let zooms = 12...14

    public static func p(_ lng: Double, _ lat: Double) -> LngLat { LngLat(lng: lng, lat: lat) }

    /// The longitude of a z14 tile edge inside the area: a point there is in two tiles' buffers.
    public static var edgeLongitude: Double {
        WebMercator.lng(tileX: WebMercator.tileX(lng: 24.94, zoom: 14).rounded(.up), zoom: 14)
    }

    public static func street(_ name: String, _ cls: String, _ line: [LngLat], minZoom: Int = 12) -> TestFeature {
        TestFeature(layer: "transportation_name", properties: ["name": .string(name), "class": .string(cls)],
                    geometry: .line(line), minZoom: minZoom)
    }

    public static func poi(_ name: String, _ cls: String, _ at: LngLat, rank: Int, minZoom: Int = 14) -> TestFeature {
        TestFeature(layer: "poi", properties: ["name": .string(name), "class": .string(cls), "subclass": .string(cls),
                                               "rank": .int(rank)], geometry: .point(at), minZoom: minZoom)
    }

    public static func place(_ name: String, _ cls: String, _ at: LngLat, rank: Int, minZoom: Int, en: String? = nil) -> TestFeature {
        var properties: [String: TestValue] = ["name": .string(name), "class": .string(cls), "rank": .int(rank)]
        if let en { properties["name:en"] = .string(en) }
        return TestFeature(layer: "place", properties: properties, geometry: .point(at), minZoom: minZoom)
    }

    public static func park(_ name: String, _ rings: [[LngLat]]) -> TestFeature {
        TestFeature(layer: "park", properties: ["name": .string(name), "class": .string("park")],
                    geometry: .polygon(rings), minZoom: 12)
    }

    public static let features: [TestFeature] = [
        place("Helsinki", "city", p(24.9384, 60.1699), rank: 1, minZoom: 0, en: "Helsinki"),
        place("Kallio", "suburb", p(24.9497, 60.1841), rank: 10, minZoom: 13),
        place("Kalliola", "town", p(24.9600, 60.1580), rank: 5, minZoom: 12),
        place("Töölö", "suburb", p(24.9230, 60.1800), rank: 10, minZoom: 13),
        place("Käpylä", "suburb", p(24.9520, 60.1970), rank: 10, minZoom: 13),
        poi("Café Ekberg", "cafe", p(24.9385, 60.1636), rank: 3),
        poi("Stockmann", "department_store", p(24.9420, 60.1686), rank: 1, minZoom: 12),
        poi("Kiasma", "museum", p(24.9368, 60.1717), rank: 2, minZoom: 13),
        poi("Ateneum", "museum", p(24.9440, 60.1700), rank: 2, minZoom: 13),
        poi("R-kioski", "shop", p(24.9300, 60.1600), rank: 20),
        poi("R-kioski", "shop", p(24.9700, 60.1900), rank: 20),
        poi("Rajakivi", "monument", p(edgeLongitude, 60.1650), rank: 9, minZoom: 12),
        TestFeature(layer: "water_name", properties: ["name": .string("Töölönlahti"), "name:en": .string("Töölö Bay"),
                                                      "class": .string("lake")], geometry: .point(p(24.9340, 60.1760))),
        TestFeature(layer: "mountain_peak", properties: ["name": .string("Vartiovuori"), "class": .string("peak"),
                                                         "rank": .int(1)], geometry: .point(p(24.9050, 60.1950)), minZoom: 13),
        TestFeature(layer: "aerodrome_label", properties: ["name": .string("Malmin lentoasema"), "class": .string("public")],
                    geometry: .point(p(24.9700, 60.1980)), minZoom: 12),
        street("Hämeentie", "primary", [p(24.905, 60.160), p(24.930, 60.170), p(24.955, 60.180), p(24.975, 60.195)]),
        street("Mannerheimintie", "primary", [p(24.935, 60.152), p(24.925, 60.175), p(24.915, 60.198)]),
        street("Aleksanterinkatu", "minor", [p(24.9440, 60.1690), p(24.9470, 60.1692)], minZoom: 14),
        street("Rantatie", "minor", [p(24.902, 60.185), p(24.912, 60.186)], minZoom: 13),
        street("Rantatie", "minor", [p(24.960, 60.155), p(24.975, 60.156)], minZoom: 13),
        street("Sörnäisten rantatie", "secondary", [p(24.950, 60.175), p(24.965, 60.185), p(24.970, 60.190)]),
        street("Itäväylä", "motorway", [p(24.962, 60.199), p(24.978, 60.199), p(24.978, 60.151)]),
        TestFeature(layer: "waterway", properties: ["name": .string("Vantaanjoki"), "class": .string("river")],
                    geometry: .line([p(24.901, 60.199), p(24.920, 60.190), p(24.940, 60.196)]), minZoom: 12),
        park("Kaivopuisto", [[p(24.945, 60.155), p(24.965, 60.155), p(24.965, 60.162), p(24.945, 60.162)]]),
        park("Hesperian puisto", [[p(24.915, 60.180), p(24.930, 60.180), p(24.930, 60.192), p(24.926, 60.192),
                                   p(24.926, 60.184), p(24.919, 60.184), p(24.919, 60.192), p(24.915, 60.192)]]),
        park("Sinebrychoffin puisto", [[p(24.928, 60.156), p(24.936, 60.156), p(24.936, 60.161), p(24.928, 60.161)],
                                       [p(24.930, 60.157), p(24.934, 60.157), p(24.934, 60.160), p(24.930, 60.160)]]),
    ]

    /// What the tiles hold: the true features, but Mannerheimintie's class changes halfway (primary,
    /// then secondary), as streets' classes do; it is still one street.
    public static var tileFeatures: [TestFeature] {
        features.filter { name($0) != "Mannerheimintie" } + [
            street("Mannerheimintie", "primary", [p(24.935, 60.152), p(24.925, 60.175)]),
            street("Mannerheimintie", "secondary", [p(24.925, 60.175), p(24.915, 60.198)]),
        ]
    }

    public static func name(_ f: TestFeature) -> String {
        if case .string(let s)? = f.properties["name"] { return s }
        return ""
    }

    /// Every tile of the area at zooms 12 to 14.
    public static var tiles: [TileID] {
        zooms.flatMap { z -> [TileID] in
            let nw = WebMercator.tile(containing: p(area.west, area.north), zoom: z)
            let se = WebMercator.tile(containing: p(area.east, area.south), zoom: z)
            return (nw.x...se.x).flatMap { x in (nw.y...se.y).map { TileID(z: z, x: x, y: $0) } }
        }
    }

    public static func encodedTiles(_ features: [TestFeature] = tileFeatures) -> [(TileID, Data)] {
        tiles.map { ($0, VectorTileEncoder.encode($0, features: features)) }
    }

    // MARK: Truth

    /// Metres between a position and a feature's true geometry (0 inside a polygon).
    public static func error(_ position: LngLat, _ geometry: TestGeometry) -> Double {
        let k = cos(position.lat * .pi / 180) * 111_320.0, m = 110_574.0
        func xy(_ q: LngLat) -> (Double, Double) { ((q.lng - position.lng) * k, (q.lat - position.lat) * m) }
        func segment(_ a: LngLat, _ b: LngLat) -> Double {
            let (ax, ay) = xy(a), (bx, by) = xy(b)
            let dx = bx - ax, dy = by - ay
            let t = dx == 0 && dy == 0 ? 0 : max(0, min(1, -(ax * dx + ay * dy) / (dx * dx + dy * dy)))
            return hypot(ax + t * dx, ay + t * dy)
        }
        switch geometry {
        case .point(let q): return hypot(xy(q).0, xy(q).1)
        case .line(let line): return zip(line, line.dropFirst()).map { segment($0, $1) }.min()!
        case .polygon(let rings):
            var inside = false
            for ring in rings {
                var j = ring.count - 1
                for i in ring.indices {
                    let a = xy(ring[i]), b = xy(ring[j])
                    if (a.1 > 0) != (b.1 > 0), 0 < (b.0 - a.0) * (0 - a.1) / (b.1 - a.1) + a.0 { inside.toggle() }
                    j = i
                }
            }
            if inside { return 0 }
            return rings.flatMap { ring in ring.indices.map { segment(ring[$0], ring[($0 + 1) % ring.count]) } }.min()!
        case .raw: return .infinity
        }
    }
}
