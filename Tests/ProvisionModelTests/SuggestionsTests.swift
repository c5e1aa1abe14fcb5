import XCTest
@testable import ProvisionModel

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
        let regionKeys = JobFileKeys.region
        let table: [(String, String?)] = [
            ("zooom", "zoom"), ("Zoom", "zoom"), ("zom", "zoom"), ("box", "bbox"), ("geoJSON", "geojson"),
            ("stylepacks", "stylePacks"), ("stylePack", "stylePacks"), ("tileset", "tilesets"),
            ("meta", "metadata"), ("foo", nil), ("minzoom", nil), ("x", nil), ("area", nil),
        ]
        for (word, expected) in table {
            XCTAssertEqual(Suggestions.closest(to: word, among: regionKeys), expected, word)
        }
        XCTAssertEqual(Suggestions.closest(to: "sreets", among: ["streets", "satellite"]), "streets")
        XCTAssertEqual(Suggestions.closest(to: "retry", among: JobFileKeys.download), "retries")
        XCTAssertNil(Suggestions.closest(to: "anything", among: []))
    }
}
