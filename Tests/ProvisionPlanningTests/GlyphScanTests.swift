import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
@testable import ProvisionPlanning
import TileMath
import XCTest

/// What the glyph scan counts beyond the text, and what it leaves to the fallback policy.
final class GlyphScanTests: XCTestCase {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/glyphs/sample.mvt")
    static let template = "https://g.example.com/fonts/{fontstack}/{range}.pbf"
    /// The sample is tile 12/3638/1612 (Tokyo): places 東京, しぶや, 서울 (rank 99); road C1; water 隅田川.
    static let tile = TileID(z: 12, x: 3638, y: 1612)

    func layer(_ id: String, sourceLayer: String, text: JSONValue, minZoom: Double = 0, sourceMaxZoom: Int = 14,
               filter: JSONValue? = nil, transform: JSONValue? = nil, mode: JSONValue? = nil, font: String = "R") -> LabelLayer {
        LabelLayer(id: id, urlTemplate: "t", sourceMaxZoom: sourceMaxZoom, sourceLayer: sourceLayer, minZoom: minZoom,
                   maxZoom: 24, filter: filter, textField: text, textTransform: transform, writingMode: mode, fontStacks: [[font]])
    }

    func scan(_ layers: [LabelLayer], compressed: Bool = false) throws -> GlyphScan {
        var scan = GlyphScan(demand: GlyphDemand(template: Self.template, layers: layers, fontStacks: [["R"]]))
        let data = try Data(contentsOf: Self.sample)
        scan.add(payload: compressed ? try Zlib.deflate(data) : data, compressed: compressed, urlTemplate: "t", tile: Self.tile)
        return scan
    }

    func testFilterAndTextDecideTheRanges() throws {
        let s = try scan([layer("p", sourceLayer: "places", text: ["get", "name"], filter: ["<", ["get", "rank"], 10])])
        // 東 U+6771, 京 U+4EAC, しぶや U+3057…: not 서 U+C11C (rank 99 is filtered out).
        XCTAssertEqual(s.ranges[["R"]], [0x67, 0x4E, 0x30])
        XCTAssertEqual(s.tilesRead, 1)
        XCTAssertEqual(s.resources.map(\.url).map { $0.replacingOccurrences(of: "https://g.example.com/fonts/R/", with: "") },
                       ["0-255.pbf", "12288-12543.pbf", "19968-20223.pbf", "26368-26623.pbf"])
        XCTAssertNotNil(s.sample(for: "https://g.example.com/fonts/R/26368-26623.pbf")?.contains("東京"))
    }

    func testCompressedPayloadsAreInflated() throws {
        XCTAssertEqual(try scan([layer("w", sourceLayer: "water", text: ["get", "name"])], compressed: true).ranges[["R"]],
                       [0x96, 0x75, 0x5D])  // 隅 U+9685, 田 U+7530, 川 U+5DDD
    }

    func testATileAtItsSourcesMaxzoomIsLaidOutAtEveryHigherZoom() throws {
        // The layer starts at z15: a z12 tile shows it only when z12 is the source's maxzoom (overzoomed).
        let below = try scan([layer("p", sourceLayer: "roads", text: ["get", "ref"], minZoom: 15, sourceMaxZoom: 14)])
        XCTAssertNil(below.ranges[["R"]])
        let overzoomed = try scan([layer("p", sourceLayer: "roads", text: ["get", "ref"], minZoom: 15, sourceMaxZoom: 12)])
        XCTAssertEqual(overzoomed.ranges[["R"]], [0])
        // A zoom-dependent text is evaluated at each of those zooms.
        let stepped = try scan([layer("p", sourceLayer: "roads", text: ["step", ["zoom"], "a", 20, "Ж"], sourceMaxZoom: 12)])
        XCTAssertEqual(stepped.ranges[["R"]], [0, 0x04])
    }

    func testTransformArabicShapingAndVerticalWritingAddTheirRanges() throws {
        let upper = try scan([layer("p", sourceLayer: "roads", text: "ÿ", transform: "uppercase")])
        XCTAssertEqual(upper.ranges[["R"]], [0x00, 0x01])  // Ÿ is U+0178
        let arabic = try scan([layer("p", sourceLayer: "roads", text: "القاهرة")])
        XCTAssertEqual(arabic.ranges[["R"]], [0x06, 0xFB, 0xFC, 0xFD, 0xFE])
        let vertical = try scan([layer("p", sourceLayer: "roads", text: "東", mode: ["vertical"])])
        XCTAssertEqual(vertical.ranges[["R"]], [0x67, 0xFE, 0xFF])
        let astral = try scan([layer("p", sourceLayer: "roads", text: "😀")])
        XCTAssertNil(astral.ranges[["R"]])
    }

    func testATileThatCannotBeReadGivesItsLayersFontsTheFallbackRanges() throws {
        var scan = GlyphScan(demand: GlyphDemand(template: Self.template, layers: [
            layer("p", sourceLayer: "places", text: ["get", "name"]),
            layer("o", sourceLayer: "roads", text: ["get", "ref"], font: "B"),
        ], fontStacks: [["B"], ["R"]]))
        scan.add(payload: Data("<html>error</html>".utf8), compressed: false, urlTemplate: "t", tile: Self.tile)
        scan.add(payload: Data([0x78, 0x9c, 0x01]), compressed: true, urlTemplate: "t", tile: Self.tile)
        XCTAssertEqual(scan.unreadableTiles, 2)
        XCTAssertEqual(scan.tilesRead, 0)
        XCTAssertEqual(scan.fallbackStacks, [["R"], ["B"]])
        XCTAssertEqual(scan.resources.count, 2 * 130)
    }

    func testFormatSectionFontsGetTheirSectionsRanges() throws {
        let text: JSONValue = ["format", ["get", "ref"], [:], "Ж", ["text-font": ["literal", ["I"]]]]
        let s = try scan([layer("p", sourceLayer: "roads", text: text)])
        XCTAssertEqual(s.ranges[["R"]], [0, 0x04])
        XCTAssertEqual(s.ranges[["I"]], [0x04])
    }

    func testLayersThatCannotBeEvaluatedFallBackToIdeographsLocalWithANote() throws {
        let style = try JSONValue.parse(Data("""
            {"version": 8, "glyphs": "\(Self.template)", "sources": {"v": {"type": "vector"}, "g": {"type": "geojson"}},
             "layers": [
              {"id": "ok", "type": "symbol", "source": "v", "source-layer": "places", "layout": {"text-field": ["get", "name"], "text-font": ["R"]}},
              {"id": "ele", "type": "symbol", "source": "v", "source-layer": "peaks", "layout": {"text-field": ["number-format", ["get", "ele"], {}], "text-font": ["B"]}},
              {"id": "geo", "type": "symbol", "source": "g", "layout": {"text-field": ["get", "name"], "text-font": ["I"]}}
             ]}
            """.utf8))
        let outcome = GlyphDemandBuilder.build(style: style, template: Self.template,
                                               sources: ["v": .init(urlTemplate: "t", maxZoom: 14)], subject: "stylePack 'p'")
        XCTAssertEqual(outcome.demand.layers.map(\.id), ["ok"])
        XCTAssertEqual(outcome.demand.fontStacks, [["B"], ["I"], ["R"]])
        let byStack = Dictionary(grouping: outcome.knownResources.map(\.url)) { $0.split(separator: "/")[3] }
        XCTAssertEqual(byStack["B"]?.count, 130)
        XCTAssertEqual(byStack["I"]?.count, 130)
        XCTAssertEqual(byStack["R"], ["https://g.example.com/fonts/R/0-255.pbf"])
        XCTAssertEqual(outcome.notes.map(\.message), [
            "glyphs \"used\": layer 'ele': its text-field: \"number-format\" is not evaluated by the glyph scan; its font stack 'B' gets the 130 ranges of \"ideographs-local\"",
            "glyphs \"used\": layer 'geo': its source 'g' is not a tiled source of the pack, so its labels cannot be read from tiles; its font stack 'I' gets the 130 ranges of \"ideographs-local\"",
        ])
    }
}
