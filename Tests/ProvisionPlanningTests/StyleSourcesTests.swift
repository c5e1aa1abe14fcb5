import ProvisionFoundation
import ProvisionModel
import ProvisionPlanning
import XCTest

/// Every source kind a MapLibre or Mapbox style ships, and every source MapLibre's parser
/// skips, through `StyleResolver`.
final class StyleSourcesTests: XCTestCase {
    private let styleURL = "https://maps.example.com/styles/s.json"

    private func resolve(_ sources: JSONValue, layers: [JSONValue] = [], glyphs: GlyphPolicy = .ideographsLocal,
                         extra: [(String, JSONValue)] = []) throws -> ResolvedStyle {
        let style = JSONValue.object(JSONObject([("version", 8), ("sources", sources), ("layers", .array(layers))] + extra))
        return try StyleResolver.resolve(styleURL: styleURL, style: style,
                                         pack: StylePack(id: "p", style: styleURL, pixelRatio: 2, glyphs: glyphs))
    }

    func testEachSourceKind() throws {
        let dem = "https://dem.example.com/{z}/{x}/{y}.png"
        let cases: [(name: String, source: JSONValue, expected: SourceRef, fetch: StyleSourceSummary.Fetch,
                     templates: Int, resources: [ResourceRef])] = [
            ("vector by url", ["type": "vector", "url": "https://t.example.com/v.json"],
             SourceRef(name: "s", type: .vector, tileJSONURL: "https://t.example.com/v.json"), .tiles, 0,
             [ResourceRef(url: "https://t.example.com/v.json", kind: .source)]),
            ("vector by mapbox url", ["type": "vector", "url": "mapbox://mapbox.mapbox-streets-v8"],
             SourceRef(name: "s", type: .vector, tileJSONURL: "mapbox://mapbox.mapbox-streets-v8"), .tiles, 0,
             [ResourceRef(url: "mapbox://mapbox.mapbox-streets-v8", kind: .source)]),
            ("vector inline, two templates", ["type": "vector", "tiles": ["https://a.t/{z}/{x}/{y}.pbf", "https://b.t/{z}/{x}/{y}.pbf"],
                                              "maxzoom": 14],
             SourceRef(name: "s", type: .vector, tileset: TileSource(template: "https://a.t/{z}/{x}/{y}.pbf", maxZoom: 14, templateCount: 2)),
             .tiles, 2, []),
            ("raster by url at 256 px", ["type": "raster", "url": "https://t.example.com/r.json", "tileSize": 256],
             SourceRef(name: "s", type: .raster, tileJSONURL: "https://t.example.com/r.json", tileSize: 256), .tiles, 0,
             [ResourceRef(url: "https://t.example.com/r.json", kind: .source)]),
            ("raster inline with {ratio}", ["type": "raster", "tiles": ["https://r.t/{z}/{x}/{y}{ratio}.png"], "tileSize": 256],
             SourceRef(name: "s", type: .raster,
                       tileset: TileSource(template: "https://r.t/{z}/{x}/{y}{ratio}.png", tileSize: 256, type: .raster),
                       tileSize: 256), .tiles, 1, []),
            ("raster-dem, mapbox encoding", ["type": "raster-dem", "tiles": [.string(dem)], "encoding": "mapbox"],
             SourceRef(name: "s", type: .rasterDEM, tileset: TileSource(template: dem, type: .rasterDEM)), .tiles, 1, []),
            ("raster-dem, terrarium encoding", ["type": "raster-dem", "tiles": [.string(dem)], "encoding": "terrarium"],
             SourceRef(name: "s", type: .rasterDEM, tileset: TileSource(template: dem, type: .rasterDEM)), .tiles, 1, []),
            ("geojson by url", ["type": "geojson", "data": "https://d.example.com/points.geojson"],
             SourceRef(name: "s", type: .geojson, dataURL: "https://d.example.com/points.geojson"),
             .resource("https://d.example.com/points.geojson"), 0,
             [ResourceRef(url: "https://d.example.com/points.geojson", kind: .source)]),
            ("geojson inline", ["type": "geojson", "data": ["type": "FeatureCollection", "features": []]],
             SourceRef(name: "s", type: .geojson), .nothing, 0, []),
            ("image", ["type": "image", "url": "https://d.example.com/radar.gif", "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]],
             SourceRef(name: "s", type: .image, dataURL: "https://d.example.com/radar.gif"),
             .resource("https://d.example.com/radar.gif"), 0, [ResourceRef(url: "https://d.example.com/radar.gif", kind: .image)]),
            ("image with an empty url", ["type": "image", "url": "", "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]],
             SourceRef(name: "s", type: .image), .nothing, 0, []),
        ]
        for c in cases {
            let resolved = try resolve(["s": c.source])
            XCTAssertEqual(resolved.sources, [c.expected], c.name)
            XCTAssertEqual(resolved.overview.sources, [StyleSourceSummary(name: "s", type: c.source["type"]?.stringValue ?? "",
                                                                          fetch: c.fetch, templateCount: c.templates)], c.name)
            XCTAssertEqual(resolved.resources, [ResourceRef(url: styleURL, kind: .style)] + c.resources, c.name)
            XCTAssertEqual(resolved.notes, [], c.name)
        }
    }

    func testSourcesMapLibreSkipsAreSkippedWithANote() throws {
        let corners: JSONValue = [[0, 1], [1, 1], [1, 0], [0, 0]]
        let cases: [(name: String, source: JSONValue, type: String, reason: String)] = [
            ("attribution only (MapTiler)", ["type": "vector", "attribution": "<a href=\"https://maptiler.example\">©</a>"],
             "vector", "neither \"url\" nor \"tiles\""),
            ("raster with neither url nor tiles", ["type": "raster", "tileSize": 256], "raster", "neither \"url\" nor \"tiles\""),
            ("raster-dem with neither", ["type": "raster-dem", "encoding": "terrarium"], "raster-dem", "neither"),
            ("unknown type", ["type": "vectr", "url": "https://t.example.com/v.json"], "vectr", "no source type \"vectr\""),
            ("no type", ["url": "https://t.example.com/v.json"], "?", "no \"type\""),
            ("type not a string", ["type": 3], "?", "\"type\" is a number"),
            ("not an object", "https://t.example.com/v.json", "?", "it is a string, not a source object"),
            ("video", ["type": "video", "urls": ["https://v.example.com/a.mp4"], "coordinates": corners], "video",
             "no video sources"),
            ("geojson without data", ["type": "geojson", "cluster": true], "geojson", "no \"data\""),
            ("image without url", ["type": "image", "coordinates": corners], "image", "no \"url\""),
            ("image without coordinates", ["type": "image", "url": "https://d.example.com/a.png"], "image", "no \"coordinates\""),
        ]
        for c in cases {
            let resolved = try resolve(["kept": ["type": "vector", "url": "https://t.example.com/kept.json"], "odd one": c.source])
            XCTAssertEqual(resolved.sources.map(\.name), ["kept"], c.name)
            XCTAssertEqual(resolved.resources.map(\.url), [styleURL, "https://t.example.com/kept.json"], c.name)
            XCTAssertEqual(resolved.overview.sources.map(\.name), ["kept", "odd one"], c.name)
            let summary = resolved.overview.sources[1]
            XCTAssertEqual(summary.type, c.type, c.name)
            guard case .skipped(let reason) = summary.fetch else { XCTFail("\(c.name): \(summary.fetch)"); continue }
            XCTAssertTrue(reason.contains(c.reason), "\(c.name): \(reason)")
            XCTAssertEqual(resolved.notes.count, 1, c.name)
            XCTAssertEqual(resolved.notes.first?.subject, "stylePack 'p'", c.name)
            XCTAssertTrue(resolved.notes.first?.message.hasPrefix("source 'odd one' (/sources/odd one) is skipped, as MapLibre skips it: ")
                          == true, "\(c.name): \(resolved.notes)")
        }
    }

    /// MapLibre's parser keeps a layer whose source the style lacks (it draws nothing) and its
    /// fonts are downloaded; a symbol layer with no `source` at all is dropped with its fonts.
    func testLayersOfMissingSourcesKeepTheirFontsAndAreNoted() throws {
        let layers: [JSONValue] = [
            ["id": "credit", "type": "symbol", "source": "maptiler_attribution",
             "layout": ["text-field": "©", "text-font": ["Credit Regular"]]],
            ["id": "ghost-a", "type": "line", "source": "ghost"],
            ["id": "ghost-b", "type": "symbol", "source": "ghost", "layout": ["text-field": "{name}", "text-font": ["Ghost Bold"]]],
            ["id": "sourceless", "type": "symbol", "layout": ["text-field": "x", "text-font": ["Never Fetched"]]],
            ["id": "bg", "type": "background"],
            ["id": "roads", "type": "line", "source": "v", "source-layer": "roads"],
        ]
        let resolved = try resolve(["maptiler_attribution": ["type": "vector", "attribution": "©"],
                                    "v": ["type": "vector", "url": "https://t.example.com/v.json"]],
                                   layers: layers, extra: [("glyphs", "https://f.example.com/{fontstack}/{range}.pbf")])
        XCTAssertEqual(resolved.fontStacks, [["Credit Regular"], ["Ghost Bold"]])
        XCTAssertEqual(resolved.resources.filter { $0.kind == .glyphs }.count, 2 * 130)
        XCTAssertEqual(resolved.notes.map(\.message), [
            "source 'maptiler_attribution' (/sources/maptiler_attribution) is skipped, as MapLibre skips it: it has "
                + "neither \"url\" nor \"tiles\", so it names no tiles",
            "source 'maptiler_attribution' is skipped but layer 'credit' draws from it: MapLibre keeps such layers "
                + "(they draw nothing) and their fonts are downloaded",
            "source 'ghost' is not defined in the style but 2 layers ('ghost-a', 'ghost-b') draw from it: MapLibre keeps "
                + "such layers (they draw nothing) and their fonts are downloaded",
        ])
    }

    func testOverviewCountsGlyphRangesPerPolicyAndListsSprites() throws {
        let layers: [JSONValue] = [["id": "l", "type": "symbol", "source": "v", "layout": ["text-field": "{name}"]]]
        let extra: [(String, JSONValue)] = [("glyphs", "https://f.example.com/{fontstack}/{range}.pbf"),
                                            ("sprite", [["id": "default", "url": "https://s.example.com/a"],
                                                        ["id": "extra", "url": "https://s.example.com/b"]])]
        let sources: JSONValue = ["v": ["type": "vector", "url": "https://t.example.com/v.json"]]
        let local = try resolve(sources, layers: layers, extra: extra)
        XCTAssertEqual(local.overview.fontStacks, [FontStacks.defaultStack])
        XCTAssertEqual(local.overview.glyphRangesPerStack, 130)
        XCTAssertEqual(local.overview.sprites, ["https://s.example.com/a", "https://s.example.com/b"])
        XCTAssertEqual(local.resources.filter { $0.kind == .spriteImage || $0.kind == .spriteJSON }.count, 8)
        let all = try resolve(sources, layers: layers, glyphs: .all, extra: extra)
        XCTAssertEqual(all.overview.glyphRangesPerStack, 256)
        let none = try resolve(sources, layers: layers)
        XCTAssertEqual(none.overview.glyphRangesPerStack, 0, "no glyphs template, no glyphs")
        XCTAssertEqual(none.overview.fontStacks, [])
    }
}
