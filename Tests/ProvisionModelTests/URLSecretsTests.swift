import Foundation
import ProvisionFoundation
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

/// One policy: messages hide what canonical URLs drop, and more; every failure kind is redacted.
final class URLRedactionTests: XCTestCase {
    private let none = URLSecrets()

    func testWithoutKnownSecretsMessagesHideNamedParametersAndPasswords() {
        XCTAssertEqual(none.redact("https://api.example.com/s.json?access_token=pk.SECRET&v=2"),
                       "https://api.example.com/s.json?access_token=REDACTED&v=2")
        XCTAssertEqual(none.redact("https://t.example/1/2/3.pbf?KEY=SECRET#frag"), "https://t.example/1/2/3.pbf?KEY=REDACTED#frag")
        XCTAssertEqual(none.redact("https://t.example/x?a=1&api_key=SECRET&token=SECRET2&apikey=S3"),
                       "https://t.example/x?a=1&api_key=REDACTED&token=REDACTED&apikey=REDACTED")
        XCTAssertEqual(none.redact("https://t.example/x?key=${TILE_KEY}"), "https://t.example/x?key=${TILE_KEY}",
                       "a variable reference names no secret")
        XCTAssertEqual(none.redact("https://t.example/x?monkey=1&keys=2"), "https://t.example/x?monkey=1&keys=2")
        XCTAssertEqual(none.redact("https://bob:SECRET@t.example/x"), "https://bob:REDACTED@t.example/x")
        XCTAssertEqual(none.redact("https://bob@t.example/x"), "https://bob@t.example/x", "a user name alone is no secret")
        XCTAssertEqual(none.redact("failed: GET https://t.example/a?token=SECRET then http://x/?key=SECRET2 too"),
                       "failed: GET https://t.example/a?token=REDACTED then http://x/?key=REDACTED too")
        XCTAssertEqual(none.redact("(https://t.example/a?token=SECRET), next"), "(https://t.example/a?token=REDACTED), next")
        XCTAssertEqual(none.redact("https://p.example/?url=https://t.example/a?token=SECRET&x=1"),
                       "https://p.example/?url=https://t.example/a?token=REDACTED&x=1", "a URL inside a parameter's value")
        XCTAssertEqual(none.redact("no url here"), "no url here")
    }

    func testKnownSecretValuesAreHiddenUnderAnyParameterName() {
        let secrets = URLSecrets.from(urls: ["https://h.example/s.json?k=${K}&access_token=at-LITERAL"],
                                      environment: ["K": "k-SECRET"]).secrets
        XCTAssertEqual(secrets.values.sorted(), ["at-LITERAL", "k-SECRET"])
        XCTAssertEqual(secrets.redact("more than 5 redirects from https://h.example/s.json, the last to "
                                      + "https://h.example/loop?k=k-SECRET&access_token=at-LITERAL"),
                       "more than 5 redirects from https://h.example/s.json, the last to "
                       + "https://h.example/loop?k=REDACTED&access_token=REDACTED")
        XCTAssertEqual(secrets.redact("echoed in a path: /k-SECRET/x"), "echoed in a path: /REDACTED/x")
    }

    /// The defect of issue 20: `.tls` and `.redirects` kept their text while the other kinds were redacted.
    func testEveryFailureKindWithAMessageIsRedacted() {
        let secrets = URLSecrets.from(urls: ["https://u:pw-SECRET@h.example/s.json?k=${K}"],
                                      environment: ["K": "k-SECRET"]).secrets
        let message = "https://u:pw-SECRET@h.example/x?k=k-SECRET&key=literal-SECRET pw-SECRET"
        let kinds: [(String) -> FetchFailure] = [FetchFailure.transport, FetchFailure.invalidBody, FetchFailure.unusableDocument,
                                                 FetchFailure.unsupported, FetchFailure.abandoned, FetchFailure.tls,
                                                 FetchFailure.redirects, FetchFailure.changed]
        for kind in kinds {
            let redacted = secrets.redacted(kind(message))
            XCTAssertEqual(redacted, kind("https://u:REDACTED@h.example/x?k=REDACTED&key=REDACTED REDACTED"))
            XCTAssertFalse(redacted.description.contains("SECRET"), redacted.description)
        }
        XCTAssertEqual(secrets.redacted(.status(403)), .status(403))
        XCTAssertEqual(secrets.redacted(.notFound), .notFound)
    }

    func testAUserInfoPasswordIsASecretOfItsOrigin() throws {
        let (secrets, missing) = URLSecrets.from(urls: ["https://user:pw-SECRET@Tiles.example:8443/t/{z}/{x}/{y}.pbf?key=${K}"],
                                                 environment: ["K": "k-SECRET"])
        XCTAssertEqual(missing, [])
        XCTAssertEqual(secrets.values.sorted(), ["k-SECRET", "pw-SECRET"])
        XCTAssertEqual(URLSecrets.origin(of: "https://user:pw@Tiles.example:8443/a"), "https://tiles.example:8443")
        XCTAssertEqual(secrets.canonical("https://user:pw-SECRET@Tiles.example:8443/t/{z}/{x}/{y}.pbf?key=${K}"),
                       "https://Tiles.example:8443/t/{z}/{x}/{y}.pbf")
        XCTAssertEqual(secrets.canonical("https://someone:pw-SECRET@h.example/a"), "https://h.example/a",
                       "the job's password is dropped wherever it is")
        XCTAssertEqual(secrets.canonical("https://someone:other@h.example/a"), "https://someone:other@h.example/a",
                       "a password a host's document names stays, as a literal key does")
        XCTAssertEqual(secrets.canonical("https://someone@h.example/a"), "https://someone@h.example/a")
        XCTAssertEqual(secrets.requestURL("https://tiles.example:8443/t/1/2/3.pbf"),
                       "https://user:pw-SECRET@tiles.example:8443/t/1/2/3.pbf?key=k-SECRET")
        XCTAssertEqual(secrets.requestURL("https://tiles.example/t/1/2/3.pbf"), "https://tiles.example/t/1/2/3.pbf",
                       "another port is another origin")
        let document = Data(#"{"tiles": ["https://user:pw-SECRET@tiles.example:8443/v/{z}/{x}/{y}.pbf"], "n": "a@b"}"#.utf8)
        XCTAssertEqual(String(decoding: try secrets.scrub(document), as: UTF8.self),
                       #"{"tiles": ["https://tiles.example:8443/v/{z}/{x}/{y}.pbf"], "n": "a@b"}"#)
    }
}
