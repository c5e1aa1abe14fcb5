import Foundation

/// The tiles of one zoom level that a bounding box or polygons cover, streamed in ``TileID`` order.
///
/// Semantics follow MapLibre Native's offline `util::TileCover`: a tile belongs to the cover when
/// the area reaches into the tile's interior. Touching a tile's edge or corner is not enough, so
/// every edge is half-open:
/// - A bbox covers columns `floor(xW) ..< ceil(xE)` and rows `floor(yN) ..< ceil(yS)` in fractional
///   tile coordinates (``WebMercator``): an east or south edge lying exactly on a tile boundary does
///   not pull in the neighbouring tile, a west or north edge on a boundary includes the tile inside.
///   Latitudes are clamped to ±85.0511°; south and north are taken in either order.
/// - Polygons cover the tiles whose interior meets the interior of their union (holes excluded),
///   with edges drawn as straight lines in Mercator space. This is what MapLibre's scan-line
///   computes, except where its row-span merge keeps the later of two nested spans and so drops
///   tiles next to thin spikes; the exact rule is kept here (the fixtures check it with shapely).
///
/// Choices where MapLibre has no answer or a surprising one:
/// - A bbox whose `west` is greater than its `east` crosses the antimeridian (MapLibre's bounds
///   hull would swap them and cover the other side of the world instead). Longitudes beyond ±180°
///   wrap, as MapLibre's unwrapped tile ids do; a box 360° or more wide covers every column.
/// - A bbox of zero width or height still covers the one column or row its edge lies in (the tile
///   east or south of it when the edge is on a boundary), where MapLibre gives none at a boundary.
/// - A polygon ring is oriented by its area before filling, so a hole is a hole whichever way it
///   winds (MapLibre's non-zero rule fills a hole wound like its outer ring). Rings with fewer than
///   three distinct vertices or no area cover nothing (MapLibre covers the tiles such a line touches).
///
/// Enumeration is lazy, column by column: memory is bounded by one column's row spans (bbox: O(1);
/// polygons: O(vertices)), so a z22 cover can be merge-joined against sorted store data.
public struct TileCover: Sequence, Sendable {
    /// The area this cover was computed for.
    public let area: CoverArea
    /// The zoom level of every tile in the cover.
    public let zoom: Int
    /// The tileset bounds the cover is clipped to, if any.
    public let bounds: TileBounds?

    let plan: Plan

    enum Plan: Sendable {
        /// Canonical column ranges (sorted, disjoint, at most two) times one row range.
        case rectangle(columns: [Range<Int>], rows: Range<Int>)
        /// Projected polygon edges, swept column by column, then clipped to a rectangle if any.
        case polygons(PolygonEdges, clip: TileRect?)
        /// The columns of lines and points, computed up front (``PathCover``), already clipped.
        case cells([Column])
        case empty
    }

    /// Prepares the cover of `area` at `zoom`, which must be in 0...``TileID/maxZoom``.
    ///
    /// Only the bbox ranges or the projected polygon edges are computed here; tiles are produced
    /// while iterating.
    ///
    /// With `bounds`, the cover keeps only the tiles inside the bounds' tile range at `zoom`
    /// (``TileBounds/rect(zoom:)``, MapLibre's `TileRange`): a bbox stays a rectangle, so its
    /// count is still arithmetic.
    public init(_ area: CoverArea, zoom: Int, bounds: TileBounds? = nil) {
        precondition(zoom >= 0 && zoom <= TileID.maxZoom, "zoom \(zoom) is outside 0...\(TileID.maxZoom)")
        self.area = area
        self.zoom = zoom
        self.bounds = bounds
        let clip = bounds?.rect(zoom: zoom)
        switch area {
        case .bbox(let box):
            plan = TileCover.clipped(TileCover.rectanglePlan(box, zoom: zoom), to: clip)
        case .polygons(let polygons):
            let edges = PolygonEdges(polygons, zoom: zoom)
            plan = edges.isEmpty || clip?.count == 0 ? .empty : .polygons(edges, clip: clip)
        case .paths(let lines, let points):
            var columns = PathCover.columns(lines: lines, points: points, zoom: zoom)
            if let clip {
                columns = columns.compactMap { column in
                    guard clip.columns.contains(column.x) else { return nil }
                    let rows = column.rows.map { $0.clamped(to: clip.rows) }.filter { !$0.isEmpty }
                    return rows.isEmpty ? nil : Column(x: column.x, rows: rows)
                }
            }
            plan = columns.isEmpty ? .empty : .cells(columns)
        }
    }

    /// A rectangle plan intersected with `clip`.
    static func clipped(_ plan: Plan, to clip: TileRect?) -> Plan {
        guard let clip, case .rectangle(let columns, let rows) = plan else { return plan }
        let kept = columns.map { $0.clamped(to: clip.columns) }.filter { !$0.isEmpty }
        let keptRows = rows.clamped(to: clip.rows)
        return kept.isEmpty || keptRows.isEmpty ? .empty : .rectangle(columns: kept, rows: keptRows)
    }

    /// The number of tiles in the cover: arithmetic for a bbox, a sum of row spans for polygons.
    public var count: Int {
        switch plan {
        case .empty:
            return 0
        case .rectangle(let columns, let rows):
            return columns.reduce(0) { $0 + $1.count } * rows.count
        case .polygons:
            var total = 0
            for column in columns {
                total += column.tileCount
            }
            return total
        case .cells(let columns):
            return columns.reduce(0) { $0 + $1.tileCount }
        }
    }

    /// The number of tiles that cover `area` at `zoom`, without enumerating them.
    public static func count(_ area: CoverArea, zoom: Int, bounds: TileBounds? = nil) -> Int {
        TileCover(area, zoom: zoom, bounds: bounds).count
    }

    /// The number of tiles that cover `area` over a range of zooms.
    public static func count(_ area: CoverArea, zooms: ClosedRange<Int>) -> Int {
        zooms.reduce(0) { $0 + count(area, zoom: $1) }
    }

    /// Whether `tile` is in the cover: O(1) for a bbox, one column's spans (O(edges)) for polygons.
    public func contains(_ tile: TileID) -> Bool {
        guard tile.z == zoom, tile.isValid else { return false }
        switch plan {
        case .empty:
            return false
        case .rectangle(let columns, let rows):
            return rows.contains(tile.y) && columns.contains { $0.contains(tile.x) }
        case .polygons(let edges, let clip):
            if let clip, !clip.contains(tile) { return false }
            return edges.rows(inWorldColumn: tile.x).contains { $0.contains(tile.y) }
        case .cells(let columns):
            return columns.first { $0.x == tile.x }?.rows.contains { $0.contains(tile.y) } ?? false
        }
    }

    /// The cover column by column, west to east, each with its sorted, disjoint row ranges.
    public var columns: Columns {
        Columns(cover: self)
    }

    /// Returns an iterator over the tiles in ``TileID`` order: by column, then by row.
    public func makeIterator() -> Iterator {
        Iterator(cover: self)
    }

    static func rectanglePlan(_ box: BoundingBox, zoom: Int) -> Plan {
        guard box.west.isFinite, box.east.isFinite, box.south.isFinite, box.north.isFinite else {
            return .empty
        }
        let n = 1 << zoom
        let yNorth = WebMercator.tileY(lat: Swift.max(box.north, box.south), zoom: zoom)
        let ySouth = WebMercator.tileY(lat: Swift.min(box.north, box.south), zoom: zoom)
        let firstRow = Swift.min(Swift.max(Int(floor(yNorth)), 0), n - 1)
        let endRow = Swift.min(Swift.max(Int(ceil(ySouth)), firstRow + 1), n)

        let east = box.east < box.west ? box.east + 360.0 : box.east
        let xWest = WebMercator.tileX(lng: box.west, zoom: zoom)
        let xEast = WebMercator.tileX(lng: east, zoom: zoom)
        // Columns are unwrapped here; a span of a world or more is every column.
        guard xEast - xWest < Double(n) else {
            return .rectangle(columns: [0..<n], rows: firstRow..<endRow)
        }
        let firstColumn = Int(floor(xWest))
        let width = Swift.max(Int(ceil(xEast)) - firstColumn, 1)
        if width >= n {
            return .rectangle(columns: [0..<n], rows: firstRow..<endRow)
        }
        let start = ((firstColumn % n) + n) % n
        let end = start + width
        let columns = end <= n ? [start..<end] : [0..<(end - n), start..<n]
        return .rectangle(columns: columns, rows: firstRow..<endRow)
    }
}

extension TileCover {
    /// One column of a cover: its x and the rows covered in it, sorted, disjoint and not adjacent.
    public struct Column: Hashable, Sendable {
        /// The tile column.
        public let x: Int
        /// The covered rows as half-open ranges, north to south.
        public let rows: [Range<Int>]

        /// The number of tiles in this column.
        public var tileCount: Int { rows.reduce(0) { $0 + $1.count } }
    }

    /// The columns of a cover, west to east, computed one at a time.
    public struct Columns: Sequence, Sendable {
        let cover: TileCover

        /// Returns an iterator that computes each column's rows when it is reached.
        public func makeIterator() -> Iterator {
            Iterator(cover: cover)
        }

        /// Produces the columns of a cover in ascending x.
        public struct Iterator: IteratorProtocol {
            var rectangle: (columns: [Range<Int>], rows: Range<Int>, index: Int, x: Int)?
            var sweep: PolygonColumnMerger?
            var cells: IndexingIterator<[Column]>?
            var clip: TileRect?

            init(cover: TileCover) {
                switch cover.plan {
                case .empty:
                    break
                case .cells(let columns):
                    cells = columns.makeIterator()
                case .rectangle(let columns, let rows):
                    rectangle = (columns, rows, 0, columns.first?.lowerBound ?? 0)
                case .polygons(let edges, let clip):
                    sweep = PolygonColumnMerger(edges: edges)
                    self.clip = clip
                }
            }

            /// The next non-empty column, or nil after the last one.
            public mutating func next() -> Column? {
                if var state = rectangle {
                    guard state.index < state.columns.count else { return nil }
                    let column = Column(x: state.x, rows: [state.rows])
                    state.x += 1
                    if state.x >= state.columns[state.index].upperBound {
                        state.index += 1
                        if state.index < state.columns.count {
                            state.x = state.columns[state.index].lowerBound
                        }
                    }
                    rectangle = state
                    return column
                }
                if cells != nil { return cells?.next() }
                guard let clip else { return sweep?.next() }
                while let column = sweep?.next() {
                    if column.x >= clip.columns.upperBound { return nil }
                    guard column.x >= clip.columns.lowerBound else { continue }
                    let rows = column.rows.map { $0.clamped(to: clip.rows) }.filter { !$0.isEmpty }
                    if !rows.isEmpty { return Column(x: column.x, rows: rows) }
                }
                return nil
            }
        }
    }

    /// Produces the tiles of a cover in ``TileID`` order without holding more than one column.
    public struct Iterator: IteratorProtocol {
        let zoom: Int
        var columns: Columns.Iterator
        var column: Column?
        var rangeIndex = 0
        var y = 0

        init(cover: TileCover) {
            zoom = cover.zoom
            columns = cover.columns.makeIterator()
            advanceColumn()
        }

        private mutating func advanceColumn() {
            column = columns.next()
            rangeIndex = 0
            y = column?.rows.first?.lowerBound ?? 0
        }

        /// The next tile, or nil after the last one.
        public mutating func next() -> TileID? {
            while let current = column {
                if rangeIndex < current.rows.count {
                    let tile = TileID(z: zoom, x: current.x, y: y)
                    y += 1
                    if y >= current.rows[rangeIndex].upperBound {
                        rangeIndex += 1
                        if rangeIndex < current.rows.count {
                            y = current.rows[rangeIndex].lowerBound
                        }
                    }
                    return tile
                }
                advanceColumn()
            }
            return nil
        }
    }
}
