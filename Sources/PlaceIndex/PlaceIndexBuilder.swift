import Foundation
import ProvisionFoundation
import ProvisionLabels
import TileMath

/// Builds the entries of a place index from vector tiles, one tile at a time, in any order.
///
/// Features are grouped by what they are (layer, class, subclass, names; lines by layer and names
/// only, taking the most important class seen); within a group:
/// - points repeated across tiles and zooms merge when they lie within a few pixels (of the
///   coarser zoom) of the highest zoom's point, which gives the position;
/// - lines are kept only at the highest zoom the group appears at, cut to each tile's own square,
///   and pieces whose ends touch (within two pixels) join: one entry per connected part;
/// - polygons likewise at the highest zoom, pieces whose boxes touch join; the position is inside
///   the largest piece; a label point of the same group inside a polygon's box joins it.
/// Each named feature read waits in an `ExternalSorter` keyed by its group: memory holds at most
/// `PlaceIndexOptions.memoryBudget` bytes of them, the rest waits in sorted runs on disk, and
/// `finish` rebuilds one group at a time. Memory stays flat with the tile count.
/// The result does not depend on the order tiles are added in.
public final class PlaceIndexBuilder {
    struct GroupKey: Hashable, Comparable {
        var kind: PlaceKind
        var layer: String
        var featureClass: String
        var subclass: String
        var names: [String]

        static func < (a: GroupKey, b: GroupKey) -> Bool {
            if a.kind != b.kind { return a.kind < b.kind }
            if a.names != b.names { return a.names.lexicographicallyPrecedes(b.names) }
            return (a.layer, a.featureClass, a.subclass) < (b.layer, b.featureClass, b.subclass)
        }
    }

    struct ZoomPoint: Hashable {
        var zoom: Int
        var extent: Int
        var point: WorldPoint
    }

    struct Group {
        /// The most important class and subclass seen (lowest rank, then name order).
        var best: (rank: Int, featureClass: String, subclass: String)?
        var minZoom = Int.max
        var maxZoom = Int.min
        var rank = Int.max
        var points: Set<ZoomPoint> = []
        var lineZoom = -1
        var lineExtent = 4096
        var lines: Set<[WorldPoint]> = []
        var polygonZoom = -1
        var polygons: Set<[[WorldPoint]]> = []
    }

    public let options: PlaceIndexOptions
    private let sorter: ExternalSorter
    private var report = PlaceIndexReport()
    private var layersSeen: Set<String> = []
    private let layerNames: Set<String>

    public init(options: PlaceIndexOptions) {
        self.options = options
        self.layerNames = Set(options.schema.layers.keys)
        self.sorter = ExternalSorter(directory: options.sortDirectory ?? FileManager.default.temporaryDirectory,
                                     memoryBudget: options.memoryBudget)
    }

    /// Reads the named features of one (inflated) vector tile. A tile that is not a vector tile
    /// is counted in `malformedTiles` and adds nothing.
    ///
    /// - Throws: `ExternalSorter.FileError` when what is read cannot be set aside on disk.
    public func add(tile: TileID, data: Data) throws {
        report.tiles += 1
        var pending: [(GroupKey, Int, DecodedGeometry?, Int)] = []
        var seen: Set<String> = []
        var counts = (features: 0, named: 0, controls: 0, tooLong: 0)
        do {
            try VectorTileFeatures.forEachFeature(in: data, layers: layerNames, geometry: true) { layer, feature in
                seen.insert(layer)
                counts.features += 1
                guard let rule = options.schema.layers[layer] else { return }
                var names: [String] = []
                for field in options.nameFields {
                    guard case .string(let raw)? = feature.properties[field] else { continue }
                    switch NameCleaner.clean(raw, maxLength: options.maxNameLength) {
                    case .name(let name, let stripped):
                        if stripped { counts.controls += 1 }
                        if !names.contains(name) { names.append(name) }
                    case .tooLong: counts.tooLong += 1
                    case .empty: continue
                    }
                }
                guard !names.isEmpty else { return }
                counts.named += 1
                let key = GroupKey(kind: rule.kind, layer: layer, featureClass: Self.text(feature.properties[rule.classKey]),
                                   subclass: rule.subclassKey.map { Self.text(feature.properties[$0]) } ?? "", names: names)
                let geometry = TileGeometry.decode(feature.geometry, type: feature.geometryType, tile: tile, extent: feature.extent)
                pending.append((key, Self.rank(feature, rule, featureClass: key.featureClass), geometry, feature.extent))
            }
        } catch {
            report.malformedTiles.append(tile.description)
            return
        }
        layersSeen.formUnion(seen)
        report.features += counts.features
        report.namedFeatures += counts.named
        report.namesWithControlCharacters += counts.controls
        report.namesTooLong += counts.tooLong
        for (key, rank, geometry, extent) in pending {
            guard let geometry else {
                report.brokenGeometry += 1
                continue
            }
            // A street's class may change along it (primary, then secondary): its pieces join
            // whatever their class, and the entry takes the most important one.
            var groupKey = key
            if case .lines = geometry {
                groupKey.featureClass = ""
                groupKey.subclass = ""
            }
            let piece = PlacePiece(group: groupKey, rank: rank, featureClass: key.featureClass, subclass: key.subclass,
                                   zoom: tile.z, extent: extent, geometry: geometry)
            try sorter.append(key: piece.key, value: piece.value)
        }
    }

    /// Adds one piece to its group (pieces come in the order they were read).
    private static func add(_ piece: PlacePiece, to group: inout Group) {
        let (rank, featureClass, subclass) = (piece.rank, piece.featureClass, piece.subclass)
        let (zoom, extent) = (piece.zoom, piece.extent)
        group.minZoom = min(group.minZoom, zoom)
        group.maxZoom = max(group.maxZoom, zoom)
        group.rank = min(group.rank, rank)
        if group.best.map({ (rank, featureClass, subclass) < $0 }) ?? true { group.best = (rank, featureClass, subclass) }
        switch piece.geometry {
        case .points(let points):
            // Held: one point per feature, at the highest zoom seen. A point within a few pixels (of
            // the coarser zoom) of a held one is the same feature: the higher zoom's stays.
            for point in points {
                let new = ZoomPoint(zoom: zoom, extent: extent, point: point)
                let near = group.points.filter { held in
                    let coarser = held.zoom < zoom ? held : new
                    return held.point.distance(to: point) <= 4 / (Double(1 << coarser.zoom) * Double(coarser.extent))
                }
                if near.contains(where: { $0.zoom >= zoom }) { continue }
                group.points.subtract(near)
                group.points.insert(new)
            }
        case .lines(let lines):
            if zoom > group.lineZoom {
                group.lineZoom = zoom
                group.lineExtent = extent
                group.lines = []
            }
            // A tile read twice adds nothing: its pieces are held once.
            if zoom == group.lineZoom { group.lines.formUnion(lines) }
        case .polygons(let polygons):
            if zoom > group.polygonZoom {
                group.polygonZoom = zoom
                group.polygons = []
            }
            if zoom == group.polygonZoom { group.polygons.formUnion(polygons) }
        }
    }

    /// The bytes of features held in memory now: at most about `options.memoryBudget`, whatever
    /// the number of tiles or zooms read.
    public var heldBytes: Int { sorter.heldBytes }

    /// The sorted runs of features set aside on disk so far.
    public var spilledRuns: Int { sorter.spilledRuns }

    /// The entries, sorted by kind, names, layer, class, subclass and position, and what was seen.
    ///
    /// - Throws: `ExternalSorter.FileError` when features set aside on disk cannot be read back.
    public func finish() throws -> (entries: [PlaceEntry], report: PlaceIndexReport) {
        var entries: [PlaceEntry] = []
        let report = try finish { entries.append($0) }
        return (entries, report)
    }

    /// Calls `body` with the entries in the order `finish()` returns them, one group of equal kind
    /// and names at a time, and returns what was seen. The groups are rebuilt one at a time from
    /// the sorted features, so neither the groups nor the entries are ever all held at once; the
    /// builder is spent after.
    ///
    /// Why by kind and names: the groups are sorted by them first, so the entries of one run of equal
    /// kind and names sorted (stably, in group order) are exactly that run of all entries sorted.
    ///
    /// - Throws: `ExternalSorter.FileError` when features set aside on disk cannot be read back, or
    ///   what `body` throws.
    public func finish(_ body: (PlaceEntry) throws -> Void) throws -> PlaceIndexReport {
        var count = 0
        var run: [PlaceEntry] = []
        func flush() throws {
            run.sort(by: Self.precedes)
            for entry in run { try body(entry) }
            count += run.count
            run.removeAll(keepingCapacity: true)
        }
        var current: (bytes: [UInt8], key: GroupKey, group: Group)?
        func close() throws {
            guard let (_, key, group) = current else { return }
            if let first = run.first, first.kind != key.kind || first.names != key.names { try flush() }
            run += Self.entries(key, group, regions: options.regions)
        }
        try sorter.forEachSorted { keyBytes, value in
            // Compared in place: a copy of `current` would share the group's sets, and the add
            // below would then copy them for every piece.
            if current?.bytes.elementsEqual(keyBytes) == true {
                Self.add(PlacePiece(group: current!.key, value: value), to: &current!.group)
                return
            }
            try close()
            let key = PlacePiece.group(keyBytes)
            current = (Array(keyBytes), key, Group())
            Self.add(PlacePiece(group: key, value: value), to: &current!.group)
        }
        try close()
        try flush()
        var report = self.report
        report.entries = count
        report.malformedTiles.sort()
        report.missingLayers = layerNames.subtracting(layersSeen).sorted()
        return report
    }

    /// The entries' order: kind, names, layer, class, subclass, position.
    private static func precedes(_ a: PlaceEntry, _ b: PlaceEntry) -> Bool {
        if a.kind != b.kind { return a.kind < b.kind }
        if a.names != b.names { return a.names.lexicographicallyPrecedes(b.names) }
        return (a.layer, a.featureClass, a.subclass, a.position.lng, a.position.lat)
            < (b.layer, b.featureClass, b.subclass, b.position.lng, b.position.lat)
    }

    // MARK: Merging

    private static func entries(_ key: GroupKey, _ group: Group, regions: [PlaceRegion]) -> [PlaceEntry] {
        var made: [(shape: PlaceShape, position: WorldPoint, box: [WorldPoint])] = []
        // Polygons: pieces whose boxes touch are one feature.
        var polygonBoxes: [(min: WorldPoint, max: WorldPoint)] = []
        if !group.polygons.isEmpty {
            let pieces = group.polygons.sorted { $0[0].lexicographicallyPrecedes($1[0]) }
            let boxes = pieces.map { box($0[0]) }
            let parts = components(count: pieces.count) { i, j in
                boxes[i].min.x <= boxes[j].max.x && boxes[j].min.x <= boxes[i].max.x
                    && boxes[i].min.y <= boxes[j].max.y && boxes[j].min.y <= boxes[i].max.y
            }
            for part in parts {
                let largest = part.max { PlaceGeometry.area(pieces[$0]) < PlaceGeometry.area(pieces[$1]) }!
                guard let inside = PlaceGeometry.interiorPoint(pieces[largest]) else { continue }
                let vertices = part.flatMap { pieces[$0][0] }
                made.append((.polygon, inside, vertices))
                polygonBoxes.append(box(vertices))
            }
        }
        // Lines: pieces whose ends touch are one feature.
        if !group.lines.isEmpty {
            let pieces = group.lines.sorted { $0.lexicographicallyPrecedes($1) }
            let tolerance = 2 / (Double(1 << group.lineZoom) * Double(group.lineExtent))
            let parts = components(pieces: pieces, tolerance: tolerance)
            for part in parts {
                let lines = part.map { pieces[$0] }
                made.append((.line, PlaceGeometry.midpoint(lines), lines.flatMap { $0 }))
            }
        }
        // Points: the highest zoom's points first; a point joins the first kept point within a few
        // pixels of its own zoom, or a polygon of the group whose box holds it.
        var kept: [(zoom: Int, point: WorldPoint)] = []
        let points = group.points.sorted { ($1.zoom, $0.point.x, $0.point.y) < ($0.zoom, $1.point.x, $1.point.y) }
        for p in points {
            if polygonBoxes.contains(where: { p.point.x >= $0.min.x && p.point.x <= $0.max.x && p.point.y >= $0.min.y && p.point.y <= $0.max.y }) {
                continue
            }
            let tolerance = 4 / (Double(1 << p.zoom) * Double(p.extent))
            if kept.contains(where: { $0.point.distance(to: p.point) <= tolerance }) { continue }
            kept.append((p.zoom, p.point))
        }
        for p in kept { made.append((.point, p.point, [p.point])) }

        return made.map { shape, position, vertices in
            let b = box(vertices)
            let lngLat = position.lngLat
            let northWest = b.min.lngLat, southEast = b.max.lngLat
            return PlaceEntry(
                names: key.names, kind: key.kind, layer: key.layer, featureClass: group.best?.featureClass ?? key.featureClass,
                subclass: group.best?.subclass ?? key.subclass,
                shape: shape, position: lngLat,
                extent: BoundingBox(west: northWest.lng, south: southEast.lat, east: southEast.lng, north: northWest.lat),
                rank: group.rank, minZoom: group.minZoom, maxZoom: group.maxZoom,
                regions: regions.filter { $0.contains(lngLat) }.map(\.id).sorted())
        }
    }

    private static func box(_ points: [WorldPoint]) -> (min: WorldPoint, max: WorldPoint) {
        var lo = points[0], hi = points[0]
        for p in points {
            lo = WorldPoint(x: min(lo.x, p.x), y: min(lo.y, p.y))
            hi = WorldPoint(x: max(hi.x, p.x), y: max(hi.y, p.y))
        }
        return (lo, hi)
    }

    /// Connected parts of `count` items under `touches` (all pairs), each sorted, in order of their
    /// first item.
    private static func components(count: Int, touches: (Int, Int) -> Bool) -> [[Int]] {
        var union = UnionFind(count)
        for i in 0..<count {
            for j in (i + 1)..<max(count, i + 1) where touches(i, j) { union.join(i, j) }
        }
        return union.parts()
    }

    /// Connected parts of line pieces whose end points lie within `tolerance`: end points are
    /// bucketed in a grid of that cell size, so each is compared with its neighbours only.
    private static func components(pieces: [[WorldPoint]], tolerance: Double) -> [[Int]] {
        struct Cell: Hashable { var x: Int64, y: Int64 }
        var union = UnionFind(pieces.count)
        var grid: [Cell: [(Int, WorldPoint)]] = [:]
        for (index, piece) in pieces.enumerated() {
            for end in [piece[0], piece[piece.count - 1]] {
                let cell = Cell(x: Int64((end.x / tolerance).rounded(.down)), y: Int64((end.y / tolerance).rounded(.down)))
                for dx in -1...1 {
                    for dy in -1...1 {
                        for (other, point) in grid[Cell(x: cell.x + Int64(dx), y: cell.y + Int64(dy))] ?? []
                        where point.distance(to: end) <= tolerance {
                            union.join(index, other)
                        }
                    }
                }
                grid[cell, default: []].append((index, end))
            }
        }
        return union.parts()
    }

    private struct UnionFind {
        var parent: [Int]
        init(_ count: Int) { parent = Array(0..<count) }
        mutating func find(_ i: Int) -> Int {
            var i = i
            while parent[i] != i {
                parent[i] = parent[parent[i]]
                i = parent[i]
            }
            return i
        }
        mutating func join(_ a: Int, _ b: Int) {
            let ra = find(a), rb = find(b)
            if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
        }
        mutating func parts() -> [[Int]] {
            var byRoot: [Int: [Int]] = [:]
            for i in parent.indices { byRoot[find(i), default: []].append(i) }
            return byRoot.values.sorted { $0[0] < $1[0] }
        }
    }

    // MARK: Properties

    private static func text(_ value: ExpressionValue?) -> String {
        switch value {
        case .string(let s)?: return s
        case .number(let n)?: return n == n.rounded() ? String(Int(n)) : String(n)
        case .bool(let b)?: return b ? "true" : "false"
        default: return ""
        }
    }

    private static func rank(_ feature: TileFeature, _ rule: LayerRule, featureClass: String) -> Int {
        for key in rule.rankKeys {
            if case .number(let n)? = feature.properties[key], n.isFinite { return Int(max(min(n, 1e6), -1e6)) }
        }
        if let index = rule.classOrder.firstIndex(of: featureClass) { return index + 1 }
        return LayerRule.unrankedClass
    }
}
