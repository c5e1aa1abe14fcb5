import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

extension CoverageShape {
    /// The outline of the area a region's tiles are covered for.
    public init(area: CoverArea) {
        switch area {
        case .bbox(let box):
            // A box across the antimeridian runs east past 180°: drawn unwrapped, in one piece.
            let east = box.east < box.west ? box.east + 360 : box.east
            self.init(rings: [[LngLat(lng: box.west, lat: box.south), LngLat(lng: east, lat: box.south),
                               LngLat(lng: east, lat: box.north), LngLat(lng: box.west, lat: box.north)]])
        case .polygons(let polygons):
            self.init(rings: polygons.flatMap(\.rings))
        case .paths(let lines, let points):
            self.init(lines: lines, points: points)
        }
    }

    /// The area of a MapLibre region definition (`bounds` [south, west, north, east] or a GeoJSON
    /// `geometry`), read leniently: nil when it has neither in a usable form.
    public static func area(definition: JSONValue) -> CoverArea? {
        if let bounds = definition["bounds"]?.arrayValue?.compactMap(\.doubleValue), bounds.count == 4 {
            return .bbox(BoundingBox(west: bounds[1], south: bounds[0], east: bounds[3], north: bounds[2]))
        }
        guard let geometry = definition["geometry"] else { return nil }
        var polygons: [Polygon] = [], lines: [[LngLat]] = [], points: [LngLat] = []
        collect(geometry, polygons: &polygons, lines: &lines, points: &points)
        if !polygons.isEmpty { return .polygons(polygons) }
        if !lines.isEmpty || !points.isEmpty { return .paths(lines: lines, points: points) }
        return nil
    }

    private static func collect(_ geometry: JSONValue, polygons: inout [Polygon], lines: inout [[LngLat]],
                                points: inout [LngLat]) {
        let coordinates = geometry["coordinates"]
        switch geometry["type"]?.stringValue {
        case "Polygon": polygons += [Polygon(rings: rings(coordinates))].filter { !$0.rings.isEmpty }
        case "MultiPolygon": polygons += (coordinates?.arrayValue ?? []).map { Polygon(rings: rings($0)) }.filter { !$0.rings.isEmpty }
        case "LineString": lines.append(positions(coordinates))
        case "MultiLineString": lines += rings(coordinates)
        case "Point": points += positions(.array([coordinates ?? .null]))
        case "MultiPoint": points += positions(coordinates)
        case "GeometryCollection":
            for member in geometry["geometries"]?.arrayValue ?? [] {
                collect(member, polygons: &polygons, lines: &lines, points: &points)
            }
        default: return
        }
    }

    private static func rings(_ value: JSONValue?) -> [[LngLat]] {
        (value?.arrayValue ?? []).map(positions).filter { !$0.isEmpty }
    }

    private static func positions(_ value: JSONValue?) -> [LngLat] {
        (value?.arrayValue ?? []).compactMap { position in
            guard let pair = position.arrayValue, pair.count >= 2, let lng = pair[0].doubleValue, let lat = pair[1].doubleValue,
                  lng.isFinite, lat.isFinite else { return nil }
            return LngLat(lng: lng, lat: lat)
        }
    }
}
