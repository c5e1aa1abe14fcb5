import Foundation
import ProvisionFoundation
import TileMath
import XCTest
@testable import ProvisionModel

/// The attribution value: which declaration wins, its JSON, and its HTML turned into Markdown.
final class AttributionTests: XCTestCase {
    func testTheStyleSourceWinsOverItsTileJSONAndBlankTextIsNone() {
        let tileJSON: JSONValue = ["attribution": "© TileJSON"]
        XCTAssertEqual(Attribution.declared(styleSource: ["attribution": "© Style"], tileJSON: tileJSON), "© Style")
        XCTAssertEqual(Attribution.declared(styleSource: ["type": "vector"], tileJSON: tileJSON), "© TileJSON")
        XCTAssertEqual(Attribution.declared(styleSource: ["attribution": "  "], tileJSON: tileJSON), "© TileJSON")
        XCTAssertNil(Attribution.declared(styleSource: nil, tileJSON: ["attribution": 5]))
        XCTAssertEqual(Attribution.joined(["© A", "", "© B", "© A"]), "© A; © B")
        XCTAssertNil(Attribution.joined(["", ""]))
    }

    func testJSONRoundTrips() {
        let entry = Attribution(kind: .routingPack, source: "town", text: "© OSM", licence: "ODbL-1.0", url: "https://osm.org/copyright")
        XCTAssertEqual(Attribution(json: entry.json), entry)
        XCTAssertEqual(entry.json["kind"], "routing-pack")
        let bare = Attribution(kind: .styleSource, source: "streets/streets", text: "© Demo")
        XCTAssertEqual(bare.json["licence"], .null)
        XCTAssertEqual(Attribution(json: bare.json), bare)
        XCTAssertNil(Attribution(json: ["kind": "planet", "source": "x", "text": "y"]))
    }

    func testHTMLBecomesMarkdownWithItsLinksKept() {
        func markdown(_ text: String) -> String { Attribution(kind: .job, source: "j", text: text).markdown }
        // OpenMapTiles' and OpenStreetMap's usual credit, as TileJSONs carry it.
        XCTAssertEqual(markdown("<a href=\"https://www.openmaptiles.org/\" target=\"_blank\">&copy; OpenMapTiles</a> "
                                + "<a href='https://www.openstreetmap.org/copyright'>&copy; OpenStreetMap contributors</a>"),
                       "[© OpenMapTiles](https://www.openmaptiles.org/) [© OpenStreetMap contributors](https://www.openstreetmap.org/copyright)")
        XCTAssertEqual(markdown("<b>Data</b>&nbsp;&#169;<br/>Example &amp; Co &#x2014; 2026"), "Data © Example & Co — 2026")
        XCTAssertEqual(markdown("<a href=\"https://x.example/\"></a>"), "https://x.example/")
        XCTAssertEqual(markdown("Plain © text, 3 < 4 &unknown; kept"), "Plain © text, 3 < 4 &unknown; kept")
    }
}

/// What a plan's store must credit, from the plan's own documents.
final class PlanAttributionTests: XCTestCase {
    private static let style = "https://tiles.example.com/style.json"

    private func source(_ name: String, tileJSON: String?) -> SourceSummary {
        SourceSummary(name: name, tileJSONURL: tileJSON, urlTemplate: "https://tiles.example.com/\(name)/{z}/{x}/{y}.pbf",
                      scheme: "xyz", minZoom: 0, maxZoom: 14, tileSize: 512)
    }

    private func plan() -> Plan {
        let styleJSON: JSONValue = ["version": 8, "layers": [], "sources": [
            "roads": ["type": "vector", "url": "https://tiles.example.com/roads.json", "attribution": "© Style roads"],
            "water": ["type": "vector", "url": "https://tiles.example.com/water.json"],
            "hills": ["type": "raster", "tiles": ["https://tiles.example.com/hills/{z}/{x}/{y}.png"]],
        ]]
        let documents: [String: FetchedBody] = [
            Self.style: FetchedBody(data: styleJSON.data()),
            "https://tiles.example.com/roads.json": FetchedBody(data: (["attribution": "© TileJSON roads"] as JSONValue).data()),
            "https://tiles.example.com/water.json": FetchedBody(data: (["attribution": "<a href=\"https://osm.org\">© OSM</a>"] as JSONValue).data()),
        ]
        let pack = StylePackPlan(id: "streets", styleURL: Self.style, resources: [], missing: [], sources: [
            source("roads", tileJSON: "https://tiles.example.com/roads.json"), source("water", tileJSON: "https://tiles.example.com/water.json"),
            source("hills", tileJSON: nil),
        ])
        var plan = Plan(jobName: "j", jobDigest: "", epoch: 0, regions: [], removedRegions: [], stylePacks: [pack],
                        documents: documents, assumedTileBytes: 1)
        let searchSources = ["roads", "water"].map {
            SearchPackSource(name: "streets/\($0)", urlTemplate: "", pixelRatio: 1, isTMS: false, vectorLayers: nil,
                             attribution: $0 == "roads" ? "© TileJSON roads" : "© OSM")
        }
        plan.searchPacks = [SearchPackPlan(pack: SearchPack(id: "places", sources: ["streets"]), sources: searchSources, regions: [],
                                           settingsDigest: "", action: .build, reason: "new")]
        return plan
    }

    func testEachSourceIsCreditedAsMapLibreShowsItAndTheJobsOwnComesLast() {
        var job = Job(name: "j", stylePacks: [], regions: [Region(id: "r", name: "R", area: .bbox(BoundingBox(west: 0, south: 0, east: 1, north: 1)),
                                                                   minZoom: 0, maxZoom: 1, stylePacks: [],
                                                                   tilesets: ["https://tiles.example.com/extra/{z}/{x}/{y}.pbf"])])
        job.attribution = Attribution(kind: .job, source: "j", text: "© Us", licence: "CC0-1.0")
        let collected = plan().attribution(job: job)
        XCTAssertEqual(collected.entries, [
            Attribution(kind: .styleSource, source: "streets/roads", text: "© Style roads"),
            Attribution(kind: .styleSource, source: "streets/water", text: "<a href=\"https://osm.org\">© OSM</a>"),
            Attribution(kind: .searchPack, source: "places", text: "© TileJSON roads; © OSM"),
            Attribution(kind: .job, source: "j", text: "© Us", licence: "CC0-1.0"),
        ])
        XCTAssertEqual(collected.missing.map(\.source), ["streets/hills", "https://tiles.example.com/extra/{z}/{x}/{y}.pbf"])
        XCTAssertEqual(collected.notes(jobHasAttribution: true).map(\.message).first,
                       "source 'hills' of style pack 'streets' declares no attribution (no \"attribution\" in its TileJSON or "
                       + "style): only the job's own \"attribution\" credits it")
        XCTAssertTrue(collected.notes(jobHasAttribution: false)[1].message.hasPrefix(
            "tileset https://tiles.example.com/extra/{z}/{x}/{y}.pbf of region 'r' (a bare template) declares no attribution"))
    }
}
