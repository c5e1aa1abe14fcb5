import Foundation
import ProvisionModel
import XCTest

/// Secret query parameters: dropped from canonical URLs and documents, added back to requests.
final class URLSecretsTests: XCTestCase {
    private let environment = ["MAPTILER_KEY": "mt-SECRET-1", "OTHER": "o-SECRET-2", "EMPTY": ""]

    private func secrets(_ urls: [String], extra: [String] = []) -> URLSecrets {
        URLSecrets.from(urls: urls, environment: environment, extraValues: extra).secrets
    }

    func testCanonicalURLsDropVariableAndTokenParametersAndKeepEverythingElse() {
        let s = secrets(["https://api.maptiler.com/maps/streets/style.json?key=${MAPTILER_KEY}"], extra: ["pk.TOKEN"])
        let cases: [(String, String)] = [
            ("https://api.maptiler.com/maps/streets/style.json?key=${MAPTILER_KEY}", "https://api.maptiler.com/maps/streets/style.json"),
            ("https://h/t/{z}/{x}/{y}.pbf?lang=en&key=${MAPTILER_KEY}&v=2", "https://h/t/{z}/{x}/{y}.pbf?lang=en&v=2"),
            ("https://h/a.json?key=mt-SECRET-1", "https://h/a.json"),
            ("https://h/a.json?access_token=pk.TOKEN&secure", "https://h/a.json?secure"),
            ("https://h/a.json?access_token=pk.SOMEONE-ELSES", "https://h/a.json"),
            ("https://h/a.json?key=public-literal-key", "https://h/a.json?key=public-literal-key"),
            ("https://h/a.json?secure&access_token=pk.TOKEN#frag", "https://h/a.json?secure#frag"),
            ("mapbox://styles/u/s?access_token=${MAPBOX}&fresh=true", "mapbox://styles/u/s?fresh=true"),
            ("https://h/a.json", "https://h/a.json"),
            ("https://h/a.json?", "https://h/a.json?"),
        ]
        for (url, expected) in cases {
            XCTAssertEqual(s.canonical(url), expected, url)
        }
    }

    func testRequestURLsGetTheirOriginsParametersBack() {
        let s = secrets(["https://API.maptiler.com/maps/streets/style.json?key=${MAPTILER_KEY}",
                         "http://127.0.0.1:8080/t/{z}/{x}/{y}.png?token=${OTHER}"])
        XCTAssertEqual(s.requestURL("https://api.maptiler.com/tiles/v3/tiles.json"),
                       "https://api.maptiler.com/tiles/v3/tiles.json?key=mt-SECRET-1")
        XCTAssertEqual(s.requestURL("https://api.maptiler.com/t/1/2/3.pbf?lang=en"),
                       "https://api.maptiler.com/t/1/2/3.pbf?lang=en&key=mt-SECRET-1")
        XCTAssertEqual(s.requestURL("https://api.maptiler.com/a.json?key=given"), "https://api.maptiler.com/a.json?key=given",
                       "a key the URL has already is not added twice")
        XCTAssertEqual(s.requestURL("http://127.0.0.1:8080/t/1/2/3.png"), "http://127.0.0.1:8080/t/1/2/3.png?token=o-SECRET-2")
        XCTAssertEqual(s.requestURL("http://127.0.0.1:8081/t/1/2/3.png"), "http://127.0.0.1:8081/t/1/2/3.png",
                       "another port is another origin")
        XCTAssertEqual(s.requestURL("https://maptiler.com.evil.example/a.json"), "https://maptiler.com.evil.example/a.json")
    }

    func testUnsetAndEmptyVariablesAreReportedInOrder() {
        let result = URLSecrets.from(urls: ["https://h/a?x=${NOPE}&y=${EMPTY}", "https://h/b?k=${NOPE}"],
                                     environment: environment)
        XCTAssertEqual(result.missing, ["NOPE", "EMPTY"])
        XCTAssertEqual(URLSecrets.variables(in: "https://h/a?x=${NOPE}&y=${EMPTY}&z=1"), ["NOPE", "EMPTY"])
        XCTAssertEqual(URLSecrets.variable(ofParameter: "ACCESS_TOKEN", in: "mapbox://styles/u/s?access_token=${TOK}"), "TOK")
    }

    func testDocumentsAreScrubbedInPlaceAndTheRestOfTheirBytesKept() throws {
        let s = secrets(["https://api.maptiler.com/maps/streets/style.json?key=${MAPTILER_KEY}"], extra: ["pk.TOKEN"])
        let document = #"""
            {"tiles": ["https://a.tiles.mapbox.com/v4/mapbox.streets/{z}/{x}/{y}.vector.pbf?access_token=pk.TOKEN",
                       "https://b.tiles.mapbox.com/v4/x/{z}/{x}/{y}.png?style=a&access_token=pk.TOKEN&fresh=1"],
             "glyphs": "https://api.maptiler.com/fonts/{fontstack}/{range}.pbf?key=mt-SECRET-1",
             "sprite": "https://api.maptiler.com/maps/streets/sprite?key=public",
             "name": "What? A question mark", "n": 1.50e3}
            """#
        let scrubbed = String(decoding: try s.scrub(Data(document.utf8)), as: UTF8.self)
        let expected = #"""
            {"tiles": ["https://a.tiles.mapbox.com/v4/mapbox.streets/{z}/{x}/{y}.vector.pbf",
                       "https://b.tiles.mapbox.com/v4/x/{z}/{x}/{y}.png?style=a&fresh=1"],
             "glyphs": "https://api.maptiler.com/fonts/{fontstack}/{range}.pbf",
             "sprite": "https://api.maptiler.com/maps/streets/sprite?key=public",
             "name": "What? A question mark", "n": 1.50e3}
            """#
        XCTAssertEqual(scrubbed, expected)
        XCTAssertNoThrow(try JSONValue.parse(Data(scrubbed.utf8)))
        let clean = Data(#"{"a": "https://h/x?y=1"}"#.utf8)
        XCTAssertEqual(try s.scrub(clean), clean)
    }

    func testASecretOutsideAQueryIsRefused() {
        let s = secrets([], extra: ["pk.TOKEN"])
        XCTAssertThrowsError(try s.scrub(Data(#"{"url": "https://h/pk.TOKEN/style.json"}"#.utf8))) { error in
            XCTAssertFalse(String(describing: error).contains("pk.TOKEN"))
        }
        XCTAssertEqual(s.redact("GET https://h/x?t=pk.TOKEN failed"), "GET https://h/x?t=REDACTED failed")
        XCTAssertTrue(s.leaks(in: Data("..pk.TOKEN..".utf8)))
        XCTAssertFalse(s.leaks(in: "pk.TOKE"))
    }
}
