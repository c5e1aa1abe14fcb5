import Foundation
import TileMath

/// A rectangle of the Web Mercator world in world units: `u` east from −180° (0…1, beyond 1 past
/// the antimeridian), `v` south from 85.05°N (0…1).
struct WorldRect: Equatable {
    var minU, minV, maxU, maxV: Double

    var width: Double { maxU - minU }
    var height: Double { maxV - minV }
    var extent: Double { max(width, height) }

    /// The smallest rectangle holding both.
    func union(_ other: WorldRect) -> WorldRect {
        WorldRect(minU: min(minU, other.minU), minV: min(minV, other.minV), maxU: max(maxU, other.maxU),
                  maxV: max(maxV, other.maxV))
    }

    /// The gap between two rectangles (0 when they touch or overlap), in world units.
    func gap(to other: WorldRect) -> Double {
        let du = max(0, max(other.minU - maxU, minU - other.maxU))
        let dv = max(0, max(other.minV - maxV, minV - other.maxV))
        return max(du, dv)
    }

    /// Grown by `fraction` of its extent (at least `minimum`) on every side, then widened or
    /// heightened about its centre to `aspect` (width ÷ height).
    func framed(padding fraction: Double, minimum: Double, aspect: Double) -> WorldRect {
        let pad = max(extent * fraction, minimum)
        var rect = WorldRect(minU: minU - pad, minV: minV - pad, maxU: maxU + pad, maxV: maxV + pad)
        if rect.width / rect.height < aspect {
            let grow = (rect.height * aspect - rect.width) / 2
            rect.minU -= grow
            rect.maxU += grow
        } else {
            let grow = (rect.width / aspect - rect.height) / 2
            rect.minV -= grow
            rect.maxV += grow
        }
        return rect
    }

    /// The world position of a longitude and latitude (longitudes are not wrapped).
    static func point(_ p: LngLat) -> (u: Double, v: Double) {
        ((p.lng + 180) / 360, WebMercator.tileY(lat: p.lat, zoom: 0))
    }

    /// The rectangle around a shape's positions; nil for an empty shape.
    init?(shape: CoverageShape) {
        let points = Array(shape.rings.joined()) + Array(shape.lines.joined()) + shape.points
        guard let first = points.first.map(WorldRect.point) else { return nil }
        var rect = WorldRect(minU: first.u, minV: first.v, maxU: first.u, maxV: first.v)
        for p in points.dropFirst() {
            let (u, v) = WorldRect.point(p)
            rect.minU = min(rect.minU, u)
            rect.maxU = max(rect.maxU, u)
            rect.minV = min(rect.minV, v)
            rect.maxV = max(rect.maxV, v)
        }
        self = rect
    }

    init(minU: Double, minV: Double, maxU: Double, maxV: Double) {
        self.minU = minU
        self.minV = minV
        self.maxU = maxU
        self.maxV = maxV
    }
}

/// One frame of a picture: a world rectangle drawn into a box of the SVG.
struct CoveragePanel: Equatable {
    /// The part of the world shown.
    var frame: WorldRect
    /// The box in SVG pixels.
    var x, y, width, height: Double
    /// Regions (indices) the panel was made for: every region for the overview, a cluster for an inset.
    var regions: [Int]

    /// Pixels per world unit.
    var scale: Double { width / frame.width }

    /// Panel-local pixels of a world position.
    func local(_ u: Double, _ v: Double) -> (x: Double, y: Double) {
        ((u - frame.minU) * scale, (v - frame.minV) * scale)
    }
}

/// Where the frames of a picture go: the overview of every region, and, when the regions lie in
/// places far apart for their size (three cities on two continents), one inset per place.
///
/// Why insets: a single frame around New York and Paris draws each city a pixel wide. Regions
/// closer to each other than half the larger one's extent form one place; each place gets an
/// inset framing it, drawing the overview's cells and outlines again (SVG `<use>`), so every
/// cell is still one element of the markup.
struct CoverageLayout: Equatable {
    static let width = 960.0
    static let gutter = 16.0
    static let insetTitle = 20.0
    /// More places than this get no insets: the overview alone.
    static let maxInsets = 12
    /// The smallest extent a region or place is framed at (about 600 m at the equator).
    static let minimumExtent = 1.0 / 65_536

    var overview: CoveragePanel
    var insets: [CoveragePanel]
    var height: Double

    init(regions: [CoverageRegion], fallback: WorldRect?) {
        let boxes = regions.map { WorldRect(shape: $0.shape) }
        let known = boxes.indices.filter { boxes[$0] != nil }
        let whole = known.compactMap { boxes[$0] }.reduce(nil) { (sum: WorldRect?, box) in sum?.union(box) ?? box }
            ?? fallback ?? WorldRect(minU: 0, minV: 0, maxU: 1, maxV: 1)
        let places = Self.places(known.map { ($0, boxes[$0] ?? whole) })
        let hasInsets = places.count > 1 && places.count <= Self.maxInsets
        let overviewHeight = hasInsets ? 360.0 : 600.0
        overview = CoveragePanel(frame: whole.framed(padding: 0.06, minimum: Self.minimumExtent,
                                                     aspect: Self.width / overviewHeight),
                                 x: 0, y: 0, width: Self.width, height: overviewHeight, regions: Array(regions.indices))
        insets = []
        height = overviewHeight
        guard hasInsets else { return }
        let columns = min(3, places.count)
        let insetWidth = (Self.width - Double(columns - 1) * Self.gutter) / Double(columns)
        let insetHeight = (insetWidth * 0.75).rounded()
        for (i, place) in places.enumerated() {
            let x = Double(i % columns) * (insetWidth + Self.gutter)
            let y = overviewHeight + Self.gutter + Double(i / columns) * (insetHeight + Self.insetTitle + Self.gutter)
                + Self.insetTitle
            insets.append(CoveragePanel(frame: place.box.framed(padding: 0.12, minimum: Self.minimumExtent,
                                                                aspect: insetWidth / insetHeight),
                                        x: x, y: y, width: insetWidth, height: insetHeight, regions: place.members))
        }
        height = (insets.last.map { $0.y + $0.height } ?? overviewHeight)
    }

    /// Groups regions into places: two regions (or places) are one when the gap between them is at
    /// most half the larger one's extent. In job order of their first region.
    static func places(_ regions: [(index: Int, box: WorldRect)]) -> [(members: [Int], box: WorldRect)] {
        var places = regions.map { (members: [$0.index], box: $0.box) }
        // Quadratic in the number of places; a job with hundreds of regions gets the overview alone.
        guard places.count <= 200 else { return [(places.flatMap(\.members), places.map(\.box).reduce(places[0].box) { $0.union($1) })] }
        var merged = true
        while merged {
            merged = false
            search: for i in places.indices {
                for j in places.indices where j > i {
                    let a = places[i].box, b = places[j].box
                    let reach = max(a.extent, b.extent, minimumExtent) * 0.5
                    if a.gap(to: b) <= reach {
                        places[i] = (places[i].members + places[j].members, a.union(b))
                        places.remove(at: j)
                        merged = true
                        break search
                    }
                }
            }
        }
        return places.map { ($0.members.sorted(), $0.box) }
    }
}

/// The graticule of a frame: meridians and parallels at a round step in degrees.
struct Graticule {
    var step: Double
    var longitudes: [Double]
    var latitudes: [Double]

    static let steps: [Double] = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45, 90]

    /// The lines of `frame`: the smallest step that draws at most `lines` across its wider side.
    init(frame: WorldRect, lines: Int = 6) {
        let west = frame.minU * 360 - 180, east = frame.maxU * 360 - 180
        let north = WebMercator.lat(tileY: max(0, frame.minV), zoom: 0)
        let south = WebMercator.lat(tileY: min(1, frame.maxV), zoom: 0)
        let span = max(east - west, north - south)
        let step = Self.steps.first { span / $0 <= Double(lines) } ?? 90
        self.step = step
        func multiples(_ low: Double, _ high: Double) -> [Double] {
            guard high > low else { return [] }
            let first = (low / step).rounded(.up), last = (high / step).rounded(.down)
            guard first <= last else { return [] }
            return stride(from: first, through: last, by: 1).map { $0 * step }
        }
        longitudes = multiples(west, east)
        latitudes = multiples(max(south, -WebMercator.maxLatitude), min(north, WebMercator.maxLatitude))
    }

    /// `74.25°W`, `40.5°N`: a line's label with the decimals its step needs.
    func label(_ degrees: Double, positive: String, negative: String) -> String {
        let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
        let magnitude = String(format: "%.\(decimals)f", abs(degrees))
        let hemisphere = abs(degrees) < step / 2 ? "" : (degrees > 0 ? positive : negative)
        return "\(magnitude)°\(hemisphere)"
    }
}
