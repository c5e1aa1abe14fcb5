import Foundation
import ProvisionFoundation
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
