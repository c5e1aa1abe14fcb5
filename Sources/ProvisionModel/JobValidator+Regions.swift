import Foundation
import ProvisionFoundation
import TileMath

extension JobValidator {
    /// The regions array (non-empty), or nil after reporting.
    mutating func regions(_ value: JSONValue, stylePackIDs: [String]) -> [Region]? {
        guard let items = collector.array(value, at: "/regions", expected: "a non-empty array of regions") else {
            return nil
        }
        if items.isEmpty {
            collector.report("/regions", "expected at least one region, found an empty array")
            return nil
        }
        var result: [Region] = []
        var seen: [String: String] = [:]
        for (i, item) in items.enumerated() {
            if let region = region(item, at: JSONPointer.appending("/regions", i), stylePackIDs: stylePackIDs,
                                   seen: &seen) {
                result.append(region)
            }
        }
        return result.count == items.count ? result : nil
    }

    private mutating func region(_ value: JSONValue, at pointer: String, stylePackIDs: [String],
                                 seen: inout [String: String]) -> Region? {
        guard let object = collector.object(value, at: pointer, expected: "a region object") else { return nil }
        collector.checkKeys(object, at: pointer, allowed: JobFileKeys.region, required: JobFileKeys.requiredRegion)
        let id = object["id"].flatMap { identifier($0, at: JSONPointer.appending(pointer, "id"), kind: "region",
                                                   seen: &seen) }
        let name = object["name"].flatMap { collector.string($0, at: JSONPointer.appending(pointer, "name"),
                                                              nonEmpty: true) }
        var area = self.area(object, at: pointer).map(Self.withoutOverlaps)
        if let value = object["buffer"] {
            let bufferPointer = JSONPointer.appending(pointer, "buffer")
            let metres = collector.number(value, at: bufferPointer, expected: "a distance in metres")
            if let metres, !(metres > 0 && metres <= Self.maxBufferMetres) {
                collector.report(bufferPointer, "expected a distance in metres above 0 and at most "
                                 + "\(Int(Self.maxBufferMetres)), found \(DiagnosticCollector.found(value))")
                area = nil
            } else if let metres, let shape = area {
                area = Self.buffered(shape, metres: metres)
            } else {
                area = nil
            }
        }
        let zoom = object["zoom"].flatMap { self.zoom($0, at: JSONPointer.appending(pointer, "zoom")) }
        let packs = stringList(object["stylePacks"], at: JSONPointer.appending(pointer, "stylePacks"),
                               what: "style pack ids").flatMap { self.styleReferences($0, stylePackIDs: stylePackIDs) }
        let tilesets = stringList(object["tilesets"], at: JSONPointer.appending(pointer, "tilesets"),
                                  what: "tileset URLs").flatMap { self.checkedTilesets($0) }
        let metadata = metadataObject(object["metadata"], at: JSONPointer.appending(pointer, "metadata"))
        let limitsPointer = JSONPointer.appending(pointer, "limits")
        let limits: Limits? = object["limits"].map { self.limits($0, at: limitsPointer) } ?? Limits()
        if let packs, let tilesets, packs.isEmpty, tilesets.isEmpty {
            collector.report(pointer, "expected at least one entry in \"stylePacks\" or \"tilesets\", found none: "
                             + "a region must draw with a style pack or a tileset")
        }
        guard let id, let name, let area, let zoom, let packs, let tilesets, let metadata, let limits else { return nil }
        return Region(id: id, name: name, area: area, minZoom: zoom.min, maxZoom: zoom.max, stylePacks: packs,
                      tilesets: tilesets, metadata: metadata, limits: limits)
    }

    /// The largest `buffer` a region may have, in metres.
    static let maxBufferMetres = 100_000.0

    /// `area` grown by `metres` along the Earth's surface (`GeodesicBuffer`), as the MultiPolygon
    /// the region definition records, so a device's own cover of it is what the bundle holds.
    static func buffered(_ area: RegionArea, metres: Double) -> RegionArea {
        var polygons: [Polygon] = [], lines: [[LngLat]] = [], points: [LngLat] = []
        switch area {
        case .bbox(let box):
            polygons = [Polygon(rings: [[LngLat(lng: box.west, lat: box.south), LngLat(lng: box.east, lat: box.south),
                                         LngLat(lng: box.east, lat: box.north), LngLat(lng: box.west, lat: box.north),
                                         LngLat(lng: box.west, lat: box.south)]])]
        case .geometry(let shapes, _): polygons = shapes
        case .paths(let l, let p, _): (lines, points) = (l, p)
        }
        let grown = GeodesicBuffer.polygons(lines: lines, points: points, polygons: polygons, metres: metres)
        return .geometry(grown, geoJSON: GeoJSONGeometry.geoJSON(grown, asMultiPolygon: true))
    }

    /// `area` with polygons that overlap (or share more than a point of their outlines) united
    /// by `CoveringUnion`, the rest as it is.
    ///
    /// Why: a MultiPolygon whose parts overlap is not a valid geometry, and the region
    /// definition MapLibre counts a region's tiles from must be one. Features of a GeoJSON file
    /// (or parts of a MultiPolygon) that do not overlap are recorded exactly as written.
    static func withoutOverlaps(_ area: RegionArea) -> RegionArea {
        guard case .geometry(let polygons, _) = area, polygons.count > 1, overlap(polygons) else { return area }
        let united = CoveringUnion.polygons(polygons, cell: 0)
        return .geometry(united, geoJSON: GeoJSONGeometry.geoJSON(united, asMultiPolygon: true))
    }

    /// Whether two of the polygons overlap or touch along more than points.
    static func overlap(_ polygons: [Polygon]) -> Bool {
        let boxes = polygons.map { polygon -> (west: Double, south: Double, east: Double, north: Double) in
            let shell = polygon.rings.first ?? []
            return (shell.map(\.lng).min() ?? 0, shell.map(\.lat).min() ?? 0, shell.map(\.lng).max() ?? 0, shell.map(\.lat).max() ?? 0)
        }
        func inside(_ polygon: Polygon, _ point: LngLat) -> Bool {
            guard let shell = polygon.rings.first, RingGeometry.contains(shell, point) == true else { return false }
            return !polygon.rings.dropFirst().contains { RingGeometry.contains($0, point) != false }
        }
        for i in polygons.indices {
            for j in polygons.indices where j > i {
                let (a, b) = (boxes[i], boxes[j])
                guard a.west <= b.east, b.west <= a.east, a.south <= b.north, b.south <= a.north else { continue }
                for ringA in polygons[i].rings {
                    for ringB in polygons[j].rings where RingGeometry.firstCrossing(ringA, ringB) != nil { return true }
                }
                if polygons[j].rings.first?.contains(where: { inside(polygons[i], $0) }) == true { return true }
                if polygons[i].rings.first?.contains(where: { inside(polygons[j], $0) }) == true { return true }
            }
        }
        return false
    }

    /// The one of `bbox`, `geometry` or `geojson` a region has, or nil after reporting.
    private mutating func area(_ object: JSONObject, at pointer: String) -> RegionArea? {
        let present = JobFileKeys.areaKeys.filter { object[$0] != nil }
        guard present.count == 1, let key = present.first, let value = object[key] else {
            let quoted = JobFileKeys.areaKeys.map { "\"\($0)\"" }
            let found = present.isEmpty ? "none" : present.map { "\"\($0)\"" }.joined(separator: " and ")
            collector.report(pointer,
                             "expected exactly one of \(quoted[0]), \(quoted[1]) or \(quoted[2]), found \(found)")
            return nil
        }
        let areaPointer = JSONPointer.appending(pointer, key)
        switch key {
        case "bbox":
            return bbox(value, at: areaPointer)
        case "geometry":
            return GeoJSONGeometry.regionArea(from: value, at: areaPointer, into: &collector)
        default:
            return geojsonFile(value, at: areaPointer)
        }
    }

    /// `[west, south, east, north]`, or nil after reporting. A box whose west is east of its east
    /// crosses the antimeridian (RFC 7946 §5.2): it becomes the two boxes either side of it, as a
    /// geometry, because MapLibre would decode it as a tile pyramid spanning the whole band between.
    private mutating func bbox(_ value: JSONValue, at pointer: String) -> RegionArea? {
        let expected = "an array of 4 numbers [west, south, east, north]"
        guard let items = collector.array(value, at: pointer, expected: expected) else { return nil }
        guard items.count == 4 else {
            collector.report(pointer, "expected \(expected), found \(DiagnosticCollector.found(value))")
            return nil
        }
        var numbers: [Double] = []
        for (i, item) in items.enumerated() {
            let isLongitude = i % 2 == 0
            let range: ClosedRange<Double> = isLongitude ? -180...180 : -90...90
            if let number = item.doubleValue, number.isFinite, range.contains(number) {
                numbers.append(number)
            } else {
                let what = isLongitude ? "a longitude from -180 to 180" : "a latitude from -90 to 90"
                collector.report(JSONPointer.appending(pointer, i),
                                 "expected \(what), found \(DiagnosticCollector.found(item))")
            }
        }
        guard numbers.count == 4 else { return nil }
        let (west, south, east, north) = (numbers[0], numbers[1], numbers[2], numbers[3])
        let f = JSONValue.format(double:)
        var ok = true
        if south > north {
            collector.report(pointer, "expected south <= north, found south \(f(south)) > north \(f(north))")
            ok = false
        } else if south == north {
            collector.report(pointer, "expected a box with height, found south == north (\(f(south)))")
            ok = false
        }
        if west == east {
            collector.report(pointer, "expected a box with width, found west == east (\(f(west)))")
            ok = false
        } else if west > east && (west == 180 || east == -180) {
            collector.report(pointer, "expected a box with width on both sides of the antimeridian, found west "
                             + "\(f(west)) and east \(f(east))")
            ok = false
        }
        guard ok else { return nil }
        guard west > east else { return .bbox(BoundingBox(west: west, south: south, east: east, north: north)) }
        func rectangle(_ w: Double, _ e: Double) -> Polygon {
            Polygon(rings: [[LngLat(lng: w, lat: south), LngLat(lng: e, lat: south), LngLat(lng: e, lat: north),
                             LngLat(lng: w, lat: north), LngLat(lng: w, lat: south)]])
        }
        let halves = [rectangle(west, 180), rectangle(-180, east)]
        return .geometry(halves, geoJSON: GeoJSONGeometry.geoJSON(halves, asMultiPolygon: true))
    }

    /// `[min, max]` zoom levels, or nil after reporting.
    private mutating func zoom(_ value: JSONValue, at pointer: String) -> (min: Int, max: Int)? {
        let expected = "an array of 2 integers [min, max]"
        guard let items = collector.array(value, at: pointer, expected: expected) else { return nil }
        guard items.count == 2 else {
            collector.report(pointer, "expected \(expected), found \(DiagnosticCollector.found(value))")
            return nil
        }
        let low = collector.integer(items[0], at: JSONPointer.appending(pointer, 0), in: 0...22)
        let high = collector.integer(items[1], at: JSONPointer.appending(pointer, 1), in: 0...22)
        guard let low, let high else { return nil }
        guard low <= high else {
            collector.report(pointer, "expected min <= max, found min \(low) > max \(high)")
            return nil
        }
        return (low, high)
    }

    /// Style pack references that all name a declared style pack, or nil after reporting.
    private mutating func styleReferences(_ entries: [(text: String, pointer: String)],
                                          stylePackIDs: [String]) -> [String]? {
        var ok = true
        for (text, pointer) in entries where !stylePackIDs.contains(text) {
            let suggestion = Suggestions.didYouMean(text, among: stylePackIDs)
            let hint: String
            if !suggestion.isEmpty {
                hint = suggestion
            } else if stylePackIDs.isEmpty {
                hint = "; the job declares no style packs"
            } else {
                hint = "; expected one of " + stylePackIDs.map { "\"\($0)\"" }.joined(separator: ", ")
            }
            collector.report(pointer, "unknown style pack \(DiagnosticCollector.quoted(text))\(hint)")
            ok = false
        }
        return ok ? entries.map(\.text) : nil
    }

    /// Tilesets: TileJSON URLs (any path, with or without an extension), or tile URL templates
    /// with `{z}`, `{x}` and `{y}` (or `{quadkey}`, or `{bbox-epsg-3857}`).
    private mutating func checkedTilesets(_ entries: [(text: String, pointer: String)]) -> [String]? {
        var ok = true
        for (text, pointer) in entries {
            guard remoteURL(.string(text), at: pointer, what: "a TileJSON URL or tile URL template") != nil else {
                ok = false
                continue
            }
            let placeholders = ["{z}", "{x}", "{y}"]
            let present = placeholders.filter { text.contains($0) }
            if !present.isEmpty && present.count < 3 && !text.contains("{quadkey}") && !text.contains("{bbox-epsg-3857}") {
                let missing = placeholders.filter { !text.contains($0) }.joined(separator: " and ")
                collector.report(pointer, "expected a tile URL template with {z}, {x} and {y}, found one without "
                                 + "\(missing): \(DiagnosticCollector.quoted(text))")
                ok = false
            }
        }
        return ok ? entries.map(\.text) : nil
    }

    /// An optional array of distinct strings (default empty) with their pointers, or nil after reporting.
    private mutating func stringList(_ value: JSONValue?, at pointer: String,
                                     what: String) -> [(text: String, pointer: String)]? {
        guard let value else { return [] }
        guard let items = collector.array(value, at: pointer, expected: "an array of \(what)") else { return nil }
        var result: [(text: String, pointer: String)] = []
        var ok = true
        for (i, item) in items.enumerated() {
            let itemPointer = JSONPointer.appending(pointer, i)
            guard let text = collector.string(item, at: itemPointer) else { ok = false; continue }
            if result.contains(where: { $0.text == text }) {
                collector.report(itemPointer,
                                 "expected each entry once, found \(DiagnosticCollector.quoted(text)) again")
                ok = false
                continue
            }
            result.append((text, itemPointer))
        }
        return ok ? result : nil
    }

    /// The polygons of a GeoJSON file, united into one MultiPolygon, or nil after reporting.
    private mutating func geojsonFile(_ value: JSONValue, at pointer: String) -> RegionArea? {
        guard let path = collector.string(value, at: pointer, nonEmpty: true,
                                          expected: "a path to a GeoJSON file") else { return nil }
        let url = resolve(path)
        guard checkExists(url, directory: false, what: "GeoJSON file", at: pointer) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            collector.report(pointer, "cannot read GeoJSON file \(url.path): \(error.localizedDescription)")
            return nil
        }
        let file = displayPath(of: path)
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            collector.append(contentsOf: [Diagnostic(file: file, pointer: "", message: "invalid JSON: \(error.message)",
                                                     line: error.line, column: error.column)])
            collector.report(pointer, "GeoJSON file \(url.path) is not valid JSON")
            return nil
        }
        var fileCollector = DiagnosticCollector(file: file)
        guard let polygons = GeoJSONGeometry.polygons(fromDocument: document, into: &fileCollector) else {
            collector.append(contentsOf: fileCollector.diagnostics)
            collector.report(pointer, "GeoJSON file \(url.path) has no usable Polygon or MultiPolygon geometry")
            return nil
        }
        return .geometry(polygons, geoJSON: GeoJSONGeometry.geoJSON(polygons, asMultiPolygon: true))
    }

    /// How to name a file the job refers to: relative to the job file's name as the user gave it.
    private func displayPath(of path: String) -> String {
        if path.hasPrefix("/") { return path }
        let directory = (displayName as NSString).deletingLastPathComponent
        return directory.isEmpty ? path : (directory as NSString).appendingPathComponent(path)
    }
}
