import Foundation
import ProvisionFoundation
import TileMath

/// Reads GeoJSON Polygon and MultiPolygon geometries into `Polygon`s, checking every ring.
///
/// A ring must have at least 4 positions, be closed, hold only finite longitudes in
/// −180…180 and latitudes in −90…90, enclose a non-zero area and not cross itself.
/// Holes are allowed. Positions are reduced to `[longitude, latitude]` (an altitude is dropped).
enum GeoJSONGeometry {
    /// Geometry types a region may be drawn from.
    static let polygonTypes = ["Polygon", "MultiPolygon"]

    /// At most this many bad positions are reported per ring; the rest are counted.
    static let maxPositionReportsPerRing = 10

    /// The polygons of a `Polygon` or `MultiPolygon` geometry object at `pointer`, or nil after
    /// reporting; `type` is the geometry type read.
    static func polygons(from value: JSONValue, at pointer: String,
                         into collector: inout DiagnosticCollector) -> (type: String, polygons: [Polygon])? {
        guard let object = collector.object(value, at: pointer,
                                            expected: "a GeoJSON Polygon or MultiPolygon object") else { return nil }
        var missing = false
        for key in ["type", "coordinates"] where object[key] == nil {
            collector.report(pointer, "missing required key \"\(key)\"")
            missing = true
        }
        guard !missing, let typeValue = object["type"], let coordinates = object["coordinates"] else { return nil }
        let typePointer = JSONPointer.appending(pointer, "type")
        guard let type = collector.string(typeValue, at: typePointer,
                                          expected: "\"Polygon\" or \"MultiPolygon\"") else { return nil }
        let coordinatesPointer = JSONPointer.appending(pointer, "coordinates")
        switch type {
        case "Polygon":
            guard let polygon = polygon(coordinates, at: coordinatesPointer, into: &collector) else { return nil }
            return (type, [polygon])
        case "MultiPolygon":
            guard let items = collector.array(coordinates, at: coordinatesPointer,
                                              expected: "an array of polygons") else { return nil }
            if items.isEmpty {
                collector.report(coordinatesPointer, "expected at least one polygon, found an empty array")
                return nil
            }
            var result: [Polygon] = []
            var ok = true
            for (i, item) in items.enumerated() {
                if let polygon = polygon(item, at: JSONPointer.appending(coordinatesPointer, i), into: &collector) {
                    result.append(polygon)
                } else {
                    ok = false
                }
            }
            return ok ? (type, result) : nil
        default:
            let suggestion = Suggestions.didYouMean(type, among: regionTypes)
            collector.report(typePointer, "expected a geometry of type "
                             + regionTypes.map { "\"\($0)\"" }.joined(separator: ", ")
                             + ", found \(DiagnosticCollector.quoted(type))\(suggestion)")
            return nil
        }
    }

    /// The polygons of every Polygon and MultiPolygon in a GeoJSON document: a Feature, a
    /// FeatureCollection, a GeometryCollection or a bare geometry. Other geometry types, and
    /// a document without any polygon, are reported.
    static func polygons(fromDocument value: JSONValue, into collector: inout DiagnosticCollector) -> [Polygon]? {
        var result: [Polygon] = []
        let ok = collect(value, at: "", into: &collector, result: &result)
        guard ok else { return nil }
        if result.isEmpty {
            collector.report("", "expected at least one Polygon or MultiPolygon geometry, found none")
            return nil
        }
        return result
    }

    private static func collect(_ value: JSONValue, at pointer: String, into collector: inout DiagnosticCollector,
                                result: inout [Polygon]) -> Bool {
        guard let object = collector.object(value, at: pointer, expected: "a GeoJSON object") else { return false }
        guard let typeValue = object["type"] else {
            collector.report(pointer, "missing required key \"type\"")
            return false
        }
        guard let type = collector.string(typeValue, at: JSONPointer.appending(pointer, "type")) else { return false }
        switch type {
        case "FeatureCollection", "GeometryCollection":
            let key = type == "FeatureCollection" ? "features" : "geometries"
            guard let itemsValue = object[key] else {
                collector.report(pointer, "missing required key \"\(key)\"")
                return false
            }
            let itemsPointer = JSONPointer.appending(pointer, key)
            guard let items = collector.array(itemsValue, at: itemsPointer) else { return false }
            var ok = true
            for (i, item) in items.enumerated() {
                ok = collect(item, at: JSONPointer.appending(itemsPointer, i), into: &collector, result: &result) && ok
            }
            return ok
        case "Feature":
            let geometryPointer = JSONPointer.appending(pointer, "geometry")
            guard let geometry = object["geometry"], geometry != .null else {
                collector.report(geometryPointer, "expected a Polygon or MultiPolygon geometry, found "
                                 + (object["geometry"] == nil ? "no \"geometry\" key" : "null"))
                return false
            }
            return collect(geometry, at: geometryPointer, into: &collector, result: &result)
        case "Polygon", "MultiPolygon":
            guard let read = polygons(from: value, at: pointer, into: &collector) else { return false }
            result.append(contentsOf: read.polygons)
            return true
        default:
            collector.report(JSONPointer.appending(pointer, "type"),
                             "expected a Polygon or MultiPolygon geometry, found a \(DiagnosticCollector.quoted(type))")
            return false
        }
    }

    /// One polygon's coordinates (an array of rings), or nil after reporting.
    private static func polygon(_ value: JSONValue, at pointer: String,
                                into collector: inout DiagnosticCollector) -> Polygon? {
        guard let ringValues = collector.array(value, at: pointer, expected: "an array of linear rings") else {
            return nil
        }
        if ringValues.isEmpty {
            collector.report(pointer, "expected at least one linear ring, found an empty array")
            return nil
        }
        var rings: [[LngLat]] = []
        var ok = true
        for (i, ringValue) in ringValues.enumerated() {
            if let ring = ring(ringValue, at: JSONPointer.appending(pointer, i), into: &collector) {
                rings.append(ring)
            } else {
                ok = false
            }
        }
        guard ok else { return nil }
        for (h, hole) in rings.enumerated().dropFirst() {
            let holePointer = JSONPointer.appending(pointer, h)
            if let (outerEdge, holeEdge) = RingGeometry.firstCrossing(rings[0], hole) {
                collector.report(holePointer, "expected a hole inside its outer ring, found the hole's edge from position "
                                 + "\(holeEdge) crossing the outer ring's edge from position \(outerEdge)")
                ok = false
            } else if hole.lazy.compactMap({ RingGeometry.contains(rings[0], $0) }).first == false {
                collector.report(holePointer, "expected a hole inside its outer ring (ring 0), found one outside it")
                ok = false
            }
        }
        return ok ? Polygon(rings: rings) : nil
    }

    /// One linear ring, or nil after reporting.
    private static func ring(_ value: JSONValue, at pointer: String,
                             into collector: inout DiagnosticCollector) -> [LngLat]? {
        guard let positions = positionList(value, at: pointer, into: &collector, expected: "an array of positions (a linear ring)")
        else { return nil }
        guard positions.count >= 4 else {
            collector.report(pointer, "expected a linear ring of at least 4 positions, found \(positions.count)")
            return nil
        }
        if let first = positions.first, let last = positions.last, first != last {
            collector.report(pointer, "expected a closed ring (last position equal to the first), found first "
                             + "\(describe(first)) and last \(describe(last))")
            return nil
        }
        if let (a, b) = RingGeometry.firstSelfIntersection(positions) {
            collector.report(pointer, "expected a ring that does not cross itself, found the edge from position "
                             + "\(a) crossing the edge from position \(b)")
            return nil
        }
        if abs(RingGeometry.area(positions)) < RingGeometry.zeroArea {
            collector.report(pointer, "expected a ring that encloses an area, found a ring with zero area")
            return nil
        }
        return positions
    }

    /// An array of positions (or, with `single`, one position at `pointer`), each checked, or nil
    /// after reporting; at most `maxPositionReportsPerRing` bad positions are reported.
    static func positionList(_ value: JSONValue, at pointer: String, into collector: inout DiagnosticCollector,
                             single: Bool = false, expected: String = "an array of positions") -> [LngLat]? {
        let items: [JSONValue]
        if single {
            items = value.arrayValue ?? []
        } else {
            guard let array = collector.array(value, at: pointer, expected: expected) else { return nil }
            items = array
        }
        var positions: [LngLat] = []
        var problems = 0
        func problem(_ pointer: String, _ message: String) {
            problems += 1
            if problems <= maxPositionReportsPerRing { collector.report(pointer, message) }
        }
        for (i, item) in items.enumerated() {
            let positionPointer = single ? pointer : JSONPointer.appending(pointer, i)
            guard let pair = item.arrayValue, pair.count >= 2 else {
                problem(positionPointer,
                        "expected a position [longitude, latitude], found \(DiagnosticCollector.found(item))")
                continue
            }
            let lng = pair[0].doubleValue
            let lat = pair[1].doubleValue
            var good = true
            if lng == nil || !(lng ?? 0).isFinite || !(-180...180).contains(lng ?? 0) {
                problem(JSONPointer.appending(positionPointer, 0),
                        "expected a longitude from -180 to 180, found \(DiagnosticCollector.found(pair[0]))")
                good = false
            }
            if lat == nil || !(lat ?? 0).isFinite || !(-90...90).contains(lat ?? 0) {
                problem(JSONPointer.appending(positionPointer, 1),
                        "expected a latitude from -90 to 90, found \(DiagnosticCollector.found(pair[1]))")
                good = false
            }
            if good, let lng, let lat { positions.append(LngLat(lng: lng, lat: lat)) }
        }
        if problems > maxPositionReportsPerRing {
            collector.report(pointer, "\(problems - maxPositionReportsPerRing) more invalid positions in this ring")
        }
        return problems == 0 ? positions : nil
    }

    /// `[lng, lat]` as written in GeoJSON.
    static func describe(_ p: LngLat) -> String {
        "[\(JSONValue.format(double: p.lng)), \(JSONValue.format(double: p.lat))]"
    }

    /// The normalised GeoJSON geometry for `polygons`: only `type` and `coordinates`, positions as
    /// `[longitude, latitude]` doubles (always written with a fraction).
    static func geoJSON(_ polygons: [Polygon], asMultiPolygon: Bool) -> JSONValue {
        func coordinates(_ polygon: Polygon) -> JSONValue {
            .array(polygon.rings.map { ring in .array(ring.map { .array([.double($0.lng), .double($0.lat)]) }) })
        }
        if !asMultiPolygon, polygons.count == 1, let polygon = polygons.first {
            return .object(JSONObject([("type", "Polygon"), ("coordinates", coordinates(polygon))]))
        }
        return .object(JSONObject([("type", "MultiPolygon"), ("coordinates", .array(polygons.map(coordinates)))]))
    }
}
