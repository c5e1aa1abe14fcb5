import Foundation
import ProvisionExport
import ProvisionFoundation
import ProvisionModel
import XCTest

/// `ATTRIBUTION.md` and `attribution.json`, as a bundle and a patch write them.
final class ExportAttributionTests: XCTestCase {
    private let attribution = ExportAttribution(entries: [
        Attribution(kind: .archive, source: "streets", text: "<a href=\"https://www.openstreetmap.org/copyright\">&copy; OpenStreetMap</a>"),
        Attribution(kind: .routingPack, source: "town", text: "© OpenStreetMap contributors", licence: "ODbL-1.0",
                    url: "https://www.openstreetmap.org/copyright"),
    ], unattributed: ["overlay", "hills"])

    func testTheMarkdownCreditsEachSourceWithItsLinksAndLicenceAndNamesThoseWithout() {
        let lines = attribution.markdown.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.first, "# Attribution")
        XCTAssertTrue(lines.contains("- **streets** (tiles): [© OpenStreetMap](https://www.openstreetmap.org/copyright)"))
        XCTAssertTrue(attribution.markdown.contains("- **town** (routing pack): © OpenStreetMap contributors\n  - Licence: ODbL-1.0\n"
                                                    + "  - See <https://www.openstreetmap.org/copyright>\n"), attribution.markdown)
        XCTAssertTrue(attribution.markdown.hasSuffix("\nDeclaring no attribution (credit them as their providers require): "
                                                     + "**overlay** and **hills**.\n"), attribution.markdown)
        XCTAssertTrue(ExportAttribution(entries: []).markdown.contains("No source declares an attribution.\n"))
    }

    func testWriteIntoADirectoryWritesBothFilesAndTheJSONReadsBack() throws {
        let directory = try makeTemporaryDirectory(self)
        try attribution.write(into: directory)
        XCTAssertEqual(try String(contentsOf: directory.appendingPathComponent("ATTRIBUTION.md"), encoding: .utf8), attribution.markdown)
        let json = try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent("attribution.json")))
        XCTAssertEqual(json["kind"], "attribution")
        XCTAssertEqual(json["unattributed"], ["overlay", "hills"])
        XCTAssertEqual(json["attribution"]?.arrayValue?.compactMap(Attribution.init(json:)), attribution.entries)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["ATTRIBUTION.md", "attribution.json"],
                       "no temporary file is left beside them")
    }
}
