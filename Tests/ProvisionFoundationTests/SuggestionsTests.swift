@testable import ProvisionFoundation
import XCTest

final class SuggestionsTests: XCTestCase {
    func testEditDistance() {
        let table: [(String, String, Int)] = [
            ("", "", 0), ("", "abc", 3), ("abc", "", 3), ("zoom", "zoom", 0), ("zooom", "zoom", 1),
            ("kitten", "sitting", 3), ("flaw", "lawn", 2), ("bbox", "box", 1), ("é", "e", 1),
        ]
        for (a, b, expected) in table {
            XCTAssertEqual(Suggestions.editDistance(a, b), expected, "\(a) → \(b)")
            XCTAssertEqual(Suggestions.editDistance(b, a), expected, "\(b) → \(a)")
        }
    }

    func testClosest() {
        // A job file's region keys and download keys, as the validator suggests among them.
        let regionKeys = ["id", "name", "bbox", "geometry", "geojson", "buffer", "zoom", "stylePacks", "tilesets",
                          "metadata", "limits"]
        let downloadKeys = ["concurrency", "retries", "timeoutSeconds", "perHost", "requestsPerSecond",
                            "maxResponseBytes", "stallSeconds", "missingTiles", "userAgent"]
        let table: [(String, String?)] = [
            ("zooom", "zoom"), ("Zoom", "zoom"), ("zom", "zoom"), ("box", "bbox"), ("geoJSON", "geojson"),
            ("stylepacks", "stylePacks"), ("stylePack", "stylePacks"), ("tileset", "tilesets"),
            ("meta", "metadata"), ("foo", nil), ("minzoom", nil), ("x", nil), ("area", nil),
        ]
        for (word, expected) in table {
            XCTAssertEqual(Suggestions.closest(to: word, among: regionKeys), expected, word)
        }
        XCTAssertEqual(Suggestions.closest(to: "sreets", among: ["streets", "satellite"]), "streets")
        XCTAssertEqual(Suggestions.closest(to: "retry", among: downloadKeys), "retries")
        XCTAssertNil(Suggestions.closest(to: "anything", among: []))
    }
}
