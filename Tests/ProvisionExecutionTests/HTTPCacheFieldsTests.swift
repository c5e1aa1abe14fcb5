import ProvisionModel
import XCTest
@testable import ProvisionExecution

final class HTTPCacheFieldsTests: XCTestCase {
    private let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    private let dateSeconds: Int64 = 784_111_777

    private func fields(_ cacheControl: [String], expires: String? = nil, date: String? = nil,
                        now: Int64 = 2_000) -> HTTPCacheFields {
        HTTPCacheFields(etag: nil, lastModified: nil, cacheControl: cacheControl, expires: expires, now: now, date: date)
    }

    func testMaxAgeWinsOverExpiresAndIsRelativeToNowWithoutADate() {
        let fields = HTTPCacheFields(etag: "W/\"x\"", lastModified: date,
                                     cacheControl: ["public, s-maxage=10, max-age=\"600\""],
                                     expires: "Thu, 01 Dec 1994 16:00:00 GMT", now: 2_000)
        XCTAssertEqual(fields, HTTPCacheFields(etag: "W/\"x\"", modified: dateSeconds, expires: 2_600))
    }

    func testMaxAgeCountsFromTheResponsesDateNotFromNow() {
        XCTAssertEqual(fields(["max-age=60"], date: date).expires, dateSeconds + 60)
        XCTAssertEqual(fields(["max-age=60"], date: "not a date").expires, 2_060, "an invalid Date falls back to now")
    }

    func testAllThreeHTTPDateFormatsParse() {
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun Nov  6 08:49:37 1994"), 784_111_777)
    }

    func testTwoFieldLinesAreOneListAndTheSmallestMaxAgeWins() {
        XCTAssertEqual(fields(["max-age=600", "max-age=60"], date: date).expires, dateSeconds + 60)
        XCTAssertEqual(fields(["max-age=60", "public, max-age=600"], date: date).expires, dateSeconds + 60)
        XCTAssertEqual(fields(["max-age=600, max-age=30"], date: date).expires, dateSeconds + 30)
        XCTAssertEqual(HTTPCacheFields.maxAge("max-age=600", "s-maxage=1, max-age=300"), 300)
        XCTAssertNil(HTTPCacheFields.maxAge("s-maxage=60"))
    }

    func testNoCacheAndNoStoreBeatMaxAgeAndExpires() {
        let noCache = fields(["max-age=60, no-cache"], expires: "Thu, 01 Dec 1994 16:00:00 GMT", date: date)
        XCTAssertEqual(noCache.expires, dateSeconds, "stale on arrival: expires when it was served")
        XCTAssertEqual(noCache.revalidation, [.noCache])
        let split = fields(["max-age=3600", "No-Store"], date: date)
        XCTAssertEqual(split.expires, dateSeconds, "a second field line restricts the first")
        XCTAssertEqual(split.revalidation, [.noStore])
    }

    func testQualifiedNoCacheRestrictsHeaderFieldsOnly() {
        let qualified = fields(["no-cache=\"Set-Cookie, Authorization\", max-age=120"], date: date)
        XCTAssertEqual(qualified.expires, dateSeconds + 120, "the comma inside the quotes does not split the list")
        XCTAssertEqual(qualified.revalidation, [])
    }

    func testInvalidMaxAgeIsStaleAndAHugeOneIsCapped() {
        XCTAssertEqual(fields(["max-age=abc"], date: date).expires, dateSeconds)
        XCTAssertEqual(fields(["max-age=-1, max-age=600"], date: date).expires, dateSeconds, "the invalid one is most restrictive")
        XCTAssertEqual(fields(["max-age=99999999999999999999"], date: date).expires, dateSeconds + 2_147_483_648)
    }

    func testExpiresIsUsedWithoutMaxAgeAndAnInvalidOneIsAlreadyExpired() {
        XCTAssertEqual(fields(["public"], expires: "Thu, 01 Dec 1994 16:00:00 GMT", date: date).expires, 786_297_600)
        XCTAssertEqual(fields([], expires: "0", date: date).expires, dateSeconds)
        XCTAssertEqual(fields([], expires: "soon", now: 5).expires, 5)
        XCTAssertNil(fields(["public"]).expires, "no freshness information: no expiry")
    }

    func testMustRevalidateAsRFC9111AndAsMapLibreReadsIt() {
        XCTAssertEqual(fields(["max-age=60, must-revalidate"]).revalidation, [.mustRevalidate, .mapLibreMustRevalidate])
        XCTAssertEqual(fields(["max-age=60, must-revalidate"], date: date).expires, dateSeconds + 60,
                       "must-revalidate does not shorten the freshness")
        // MapLibre's HTTP file source parses each Cache-Control line as it arrives, the last one replacing the others.
        XCTAssertEqual(fields(["must-revalidate", "max-age=60"]).revalidation, [.mustRevalidate])
        XCTAssertEqual(fields(["max-age=60", "must-revalidate"]).revalidation, [.mustRevalidate, .mapLibreMustRevalidate])
        // Its grammar matches the lower-case literal only, and knows nothing of no-cache.
        XCTAssertEqual(fields(["Must-Revalidate"]).revalidation, [.mustRevalidate])
        XCTAssertEqual(fields(["no-cache"]).revalidation, [.noCache])
        XCTAssertTrue(fields(["no-cache"]).revalidation.asksRevalidation)
        XCTAssertFalse(fields(["public, max-age=60, proxy-revalidate"]).revalidation.asksRevalidation)
    }

    func testUnusableValuesAreDropped() {
        let fields = HTTPCacheFields(etag: "", lastModified: "yesterday", cacheControl: [], expires: nil, now: 5)
        XCTAssertEqual(fields, HTTPCacheFields())
    }
}
