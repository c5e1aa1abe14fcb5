import Foundation
import ProvisionFoundation
import TileMath

extension GeoJSONGeometry {
    /// Every geometry type a region's inline `geometry` may have.
    static let regionTypes = ["Polygon", "MultiPolygon", "Point", "MultiPoint", "LineString", "MultiLineString",
                              "GeometryCollection"]

    /// A region's inline geometry: polygons (as `polygons(from:)` reads them), points, lines, or a
    /// GeometryCollection of one kind, flattened. Nil after reporting.
    ///
    /// Why a collection is flattened: MapLibre's offline region covers nothing for a
    /// GeometryCollection, so the definition written for devices is the MultiPolygon,
    /// MultiLineString or MultiPoint of its members; a collection mixing kinds has no such form.
    static func regionArea(from value: JSONValue, at pointer: String, into collector: inout DiagnosticCollector) -> RegionArea? {
        guard let object = value.objectValue, let type = object["type"]?.stringValue,
              ["Point", "MultiPoint", "LineString", "MultiLineString", "GeometryCollection"].contains(type) else {
            guard let read = polygons(from: value, at: pointer, into: &collector) else { return nil }
            return .geometry(read.polygons, geoJSON: geoJSON(read.polygons, asMultiPolygon: read.type == "MultiPolygon"))
        }
        var parts = Parts()
        guard collectParts(value, at: pointer, into: &collector, parts: &parts) else { return nil }
        switch (parts.polygons.isEmpty, parts.lines.isEmpty, parts.points.isEmpty) {
        case (false, true, true):
            return .geometry(parts.polygons, geoJSON: geoJSON(parts.polygons, asMultiPolygon: true))
        case (true, false, true):
            let json: JSONValue = type == "LineString"
                ? ["type": "LineString", "coordinates": positionsJSON(parts.lines[0])]
                : ["type": "MultiLineString", "coordinates": .array(parts.lines.map(positionsJSON))]
            return .paths(lines: parts.lines, points: [], geoJSON: json)
        case (true, true, false):
            let json: JSONValue = type == "Point"
                ? ["type": "Point", "coordinates": positionJSON(parts.points[0])]
                : ["type": "MultiPoint", "coordinates": positionsJSON(parts.points)]
            return .paths(lines: [], points: parts.points, geoJSON: json)
        case (true, true, true):
            collector.report(pointer, "expected a GeometryCollection with at least one geometry, found none")
            return nil
        default:
            collector.report(pointer, "expected a GeometryCollection of one kind (polygons, lines or points), found a mix: "
                             + "split it into one region per kind")
            return nil
        }
    }

    private struct Parts {
        var polygons: [Polygon] = []
        var lines: [[LngLat]] = []
        var points: [LngLat] = []
    }

    private static func collectParts(_ value: JSONValue, at pointer: String, into collector: inout DiagnosticCollector,
                                     parts: inout Parts) -> Bool {
        guard let object = collector.object(value, at: pointer, expected: "a GeoJSON geometry object") else { return false }
        guard let type = object["type"].flatMap({ collector.string($0, at: JSONPointer.appending(pointer, "type")) }) else {
            if object["type"] == nil { collector.report(pointer, "missing required key \"type\"") }
            return false
        }
        if type == "GeometryCollection" {
            let itemsPointer = JSONPointer.appending(pointer, "geometries")
            guard let itemsValue = object["geometries"] else {
                collector.report(pointer, "missing required key \"geometries\"")
                return false
            }
            guard let items = collector.array(itemsValue, at: itemsPointer) else { return false }
            var ok = true
            for (i, item) in items.enumerated() {
                ok = collectParts(item, at: JSONPointer.appending(itemsPointer, i), into: &collector, parts: &parts) && ok
            }
            return ok
        }
        if type == "Polygon" || type == "MultiPolygon" {
            guard let read = polygons(from: value, at: pointer, into: &collector) else { return false }
            parts.polygons += read.polygons
            return true
        }
        guard regionTypes.contains(type) else {
            collector.report(JSONPointer.appending(pointer, "type"), "expected a geometry of type "
                             + regionTypes.map { "\"\($0)\"" }.joined(separator: ", ") + ", found "
                             + DiagnosticCollector.quoted(type) + Suggestions.didYouMean(type, among: regionTypes))
            return false
        }
        let coordinatesPointer = JSONPointer.appending(pointer, "coordinates")
        guard let coordinates = object["coordinates"] else {
            collector.report(pointer, "missing required key \"coordinates\"")
            return false
        }
        switch type {
        case "Point":
            guard let point = positionList(.array([coordinates]), at: coordinatesPointer, into: &collector,
                                           single: true)?.first else { return false }
            parts.points.append(point)
        case "MultiPoint":
            guard let points = positionList(coordinates, at: coordinatesPointer, into: &collector), !points.isEmpty else {
                if coordinates.arrayValue?.isEmpty == true {
                    collector.report(coordinatesPointer, "expected at least one position, found an empty array")
                }
                return false
            }
            parts.points += points
        case "LineString":
            guard let line = lineString(coordinates, at: coordinatesPointer, into: &collector) else { return false }
            parts.lines.append(line)
        default:
            guard let items = collector.array(coordinates, at: coordinatesPointer, expected: "an array of line strings") else {
                return false
            }
            if items.isEmpty {
                collector.report(coordinatesPointer, "expected at least one line string, found an empty array")
                return false
            }
            var ok = true
            for (i, item) in items.enumerated() {
                if let line = lineString(item, at: JSONPointer.appending(coordinatesPointer, i), into: &collector) {
                    parts.lines.append(line)
                } else {
                    ok = false
                }
            }
            return ok
        }
        return true
    }

    private static func lineString(_ value: JSONValue, at pointer: String, into collector: inout DiagnosticCollector) -> [LngLat]? {
        guard let positions = positionList(value, at: pointer, into: &collector) else { return nil }
        guard positions.count >= 2 else {
            collector.report(pointer, "expected a line string of at least 2 positions, found \(positions.count)")
            return nil
        }
        return positions
    }

    static func positionJSON(_ p: LngLat) -> JSONValue { [.double(p.lng), .double(p.lat)] }

    static func positionsJSON(_ positions: [LngLat]) -> JSONValue { .array(positions.map(positionJSON)) }
}
