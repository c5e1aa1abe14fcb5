import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionLabels
import ProvisionModel
import TileMath

/// Collects the glyph ranges the labels of vector tiles need, per font stack: every feature of a
/// label layer's `source-layer`, at every zoom its tile is laid out at where the layer is drawn,
/// that passes the layer's filter, has the code points of its `text-field` counted.
///
/// What counts beyond the text itself, so that no glyph a device asks for is missing:
/// - a tile at its source's `maxzoom` is laid out again at every higher zoom (up to 25), where
///   zoom-dependent filters and texts may give other labels;
/// - with any `text-transform`, the upper- and lower-case forms;
/// - an Arabic letter brings the four Arabic presentation-form ranges (64256–65279), since
///   MapLibre Native shapes Arabic text into them before it asks for glyphs;
/// - with a vertical `text-writing-mode`, the ranges of vertical punctuation (65024–65535);
/// - code points above U+FFFF have no glyph range and are not counted.
///
/// Memory is a bit per range and font stack, plus one sample label per range for messages.
public struct GlyphScan {
    /// The highest zoom a tile is laid out at when overzoomed (MapLibre's maximum zoom, 25.5).
    public static let highestLayoutZoom = 25

    /// The demand scanned for.
    public let demand: GlyphDemand
    private let programs: [LabelProgram]
    /// Per tile template, the indexes of its programs, and the source layers they read.
    private let byTemplate: [String: (programs: [Int], sourceLayers: Set<String>)]
    /// Per font stack, the range indexes (start / 256) found.
    public private(set) var ranges: [[String]: Set<Int>] = [:]
    /// Per font stack and range index, the first label that needed it: layer, text, tile.
    public private(set) var samples: [[String]: [Int: String]] = [:]
    /// Tiles read.
    public private(set) var tilesRead = 0
    /// Tiles of a label template that are not vector tiles MapLibre can read (their labels are
    /// unknown, so the font stacks of that template's layers get the fallback ranges).
    public private(set) var unreadableTiles = 0
    /// The font stacks that get `GlyphPolicy.usedFallback`'s ranges for an unreadable tile.
    public private(set) var fallbackStacks: Set<[String]> = []

    /// A scan for `demand`'s layers (layers that do not compile are left out: their fonts get
    /// the fallback ranges, see `GlyphDemandBuilder`).
    public init(demand: GlyphDemand) {
        self.demand = demand
        programs = demand.layers.compactMap { try? LabelProgram($0) }  // the fallback ranges cover what is left out
        var byTemplate: [String: (programs: [Int], sourceLayers: Set<String>)] = [:]
        for (index, program) in programs.enumerated() {
            guard let template = program.layer.urlTemplate else { continue }
            byTemplate[template, default: ([], [])].programs.append(index)
            if let sourceLayer = program.layer.sourceLayer { byTemplate[template]?.sourceLayers.insert(sourceLayer) }
        }
        self.byTemplate = byTemplate
    }

    /// The tile templates whose tiles carry labels.
    public var templates: Set<String> { Set(byTemplate.keys) }

    /// Reads the labels of one stored tile: `payload` as stored (zlib or gzip when `compressed`),
    /// `tile` its geographic (XYZ) id. A payload that does not inflate or is not a vector tile
    /// cannot be read for labels: the stacks of its template's layers get the fallback ranges.
    public mutating func add(payload: Data, compressed: Bool, urlTemplate: String, tile: TileID) {
        guard let entry = byTemplate[urlTemplate], !payload.isEmpty else { return }
        var found: [(FormattedSection, Int)] = []
        do {
            var data = compressed ? try Zlib.inflate(payload, framing: .zlibOrGzip) : payload
            if Gzip.isGzip(data) { data = try Gzip.inflate(data) }
            if data.isEmpty { return }
            let zooms = entry.programs.map { index in layoutZooms(programs[index], tileZoom: tile.z) }
            try VectorTileFeatures.forEachFeature(in: data, layers: entry.sourceLayers) { layerName, feature in
                for (position, index) in entry.programs.enumerated() where programs[index].layer.sourceLayer == layerName {
                    for z in zooms[position] {
                        for section in programs[index].sections(for: feature, zoom: z) { found.append((section, index)) }
                    }
                }
            }
        } catch {
            unreadableTiles += 1
            for index in entry.programs { fallbackStacks.formUnion(programs[index].layer.fontStacks) }
            return
        }
        tilesRead += 1
        for (section, index) in found { count(section, program: programs[index], tile: tile) }
    }

    /// The integer zooms a tile at `tileZoom` is laid out at where `program`'s layer is drawn:
    /// its own, and every higher one when it is at its source's `maxzoom`; one of them when
    /// neither the filter nor the text depends on the zoom.
    func layoutZooms(_ program: LabelProgram, tileZoom: Int) -> [Int] {
        let top = tileZoom >= program.layer.sourceMaxZoom ? max(tileZoom, Self.highestLayoutZoom) : tileZoom
        let visible = (tileZoom...top).filter { program.isVisible(atZoom: $0) }
        return program.usesZoom ? visible : Array(visible.prefix(1))
    }

    private mutating func count(_ section: FormattedSection, program: LabelProgram, tile: TileID) {
        var stacks = program.layer.fontStacks
        if let override = section.fontStack, !stacks.contains(override) { stacks.append(override) }
        var found = Set<Int>()
        var texts = [section.text]
        if let transform = program.layer.textTransform, transform != .string("none") {
            texts += [section.text.uppercased(), section.text.lowercased()]
        }
        for text in texts {
            for scalar in text.unicodeScalars where scalar.value <= 0xFFFF {
                found.insert(Int(scalar.value >> 8))
                if Self.isArabic(scalar.value) { found.formUnion([0xFB, 0xFC, 0xFD, 0xFE]) }
            }
        }
        if let mode = program.layer.writingMode, mode.serialized().contains("vertical") { found.formUnion([0xFE, 0xFF]) }
        for stack in stacks {
            for range in found where ranges[stack, default: []].insert(range).inserted {
                samples[stack, default: [:]][range] = "label \"\(section.text)\" of layer '\(program.layer.id)' in tile "
                    + "\(tile.z)/\(tile.x)/\(tile.y)"
            }
        }
    }

    /// Arabic, Arabic Supplement and Arabic Extended-A: letters MapLibre shapes.
    static func isArabic(_ v: UInt32) -> Bool {
        (0x0600...0x06FF).contains(v) || (0x0750...0x077F).contains(v) || (0x08A0...0x08FF).contains(v)
    }

    /// The glyph resources found: for every font stack of the demand (and every one a format
    /// section names), `0-255` and each range found, ascending; every range of the fallback
    /// policy for the stacks of a tile that could not be read.
    public var resources: [ResourceRef] {
        var stacks = demand.fontStacks
        for stack in ranges.keys where !stacks.contains(stack) { stacks.append(stack) }
        let fallback = Set(GlyphRanges.ranges(for: GlyphPolicy.usedFallback).map { $0.start / 256 })
        var refs: [ResourceRef] = []
        for stack in stacks {
            var found = ranges[stack, default: []].union([0])
            if fallbackStacks.contains(stack) { found.formUnion(fallback) }
            let sorted = found.sorted()
            refs += sorted.map {
                ResourceRef(url: GlyphRanges.url(template: demand.template, fontStack: stack, range: GlyphRange(start: $0 * 256)),
                            kind: .glyphs)
            }
        }
        return refs
    }

    /// The sample label that needed a glyph URL of `resources`, for messages.
    public func sample(for url: String) -> String? {
        for (stack, byRange) in samples {
            for (range, sample) in byRange
                where GlyphRanges.url(template: demand.template, fontStack: stack, range: GlyphRange(start: range * 256)) == url {
                return sample
            }
        }
        return nil
    }
}
