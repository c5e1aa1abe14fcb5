import ProvisionModel
import XCTest
@testable import ProvisionExecution

final class HTTPCacheFieldsTests: XCTestCase {
    private let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    private let dateSeconds: Int64 = 784_111_777

    /// The build time freshness counts from in these tests, far from `date` so that a mix-up shows.
    private let build: Int64 = 1_700_000_000

    private func fields(_ cacheControl: [String], expires: String? = nil, date: String? = nil,
                        buildTime: Int64? = nil) -> HTTPCacheFields {
        HTTPCacheFields(etag: nil, lastModified: nil, cacheControl: cacheControl, expires: expires,
                        buildTime: buildTime ?? build, date: date)
    }

    func testMaxAgeWinsOverExpiresAndCountsFromTheBuildTime() {
        let fields = HTTPCacheFields(etag: "W/\"x\"", lastModified: date,
                                     cacheControl: ["public, s-maxage=10, max-age=\"600\""],
                                     expires: "Thu, 01 Dec 1994 16:00:00 GMT", buildTime: 2_000, date: date)
        XCTAssertEqual(fields, HTTPCacheFields(etag: "W/\"x\"", modified: dateSeconds, expires: 2_600),
                       "Last-Modified as given; max-age a duration from the build time")
    }

    /// Issue 20 #5: a host's Date moves with every request; the stored expiry must not.
    func testTheResponsesDateDoesNotMoveTheExpiry() {
        let first = "Sun, 06 Nov 1994 08:49:37 GMT"
        let secondsLater = "Sun, 06 Nov 1994 08:49:39 GMT"
        XCTAssertEqual(fields(["max-age=60"], date: first).expires, build + 60)
        XCTAssertEqual(fields(["max-age=60"], date: secondsLater).expires, build + 60)
        XCTAssertEqual(fields(["max-age=60"], date: "not a date").expires, build + 60)
        XCTAssertEqual(fields(["max-age=60"]).expires, build + 60)
        // nginx's `expires 1h` sends Expires = Date + 1 h beside max-age=3600: both move together.
        for served in [first, secondsLater] {
            let text = HTTPCacheFields.httpDate(served).map { CurlTransfer.httpDate($0 + 3_600) }
            XCTAssertEqual(fields(["max-age=3600"], expires: text, date: served).expires, build + 3_600)
            XCTAssertEqual(fields([], expires: text, date: served).expires, build + 3_600, "Expires − Date, from the build time")
        }
    }

    func testSMaxAgeIsForSharedCachesOnly() {
        XCTAssertNil(fields(["s-maxage=60"], date: date).expires, "a device is a private cache")
        XCTAssertEqual(fields(["s-maxage=60, max-age=600"], date: date).expires, build + 600)
        XCTAssertEqual(fields(["s-maxage=60"], expires: "Sun, 06 Nov 1994 08:50:37 GMT", date: date).expires, build + 60,
                       "Expires − Date when max-age is absent, whatever s-maxage says")
    }

    func testAllThreeHTTPDateFormatsParse() {
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun Nov  6 08:49:37 1994"), 784_111_777)
    }

    func testTwoFieldLinesAreOneListAndTheSmallestMaxAgeWins() {
        XCTAssertEqual(fields(["max-age=600", "max-age=60"], date: date).expires, build + 60)
        XCTAssertEqual(fields(["max-age=60", "public, max-age=600"], date: date).expires, build + 60)
        XCTAssertEqual(fields(["max-age=600, max-age=30"], date: date).expires, build + 30)
        XCTAssertEqual(HTTPCacheFields.maxAge("max-age=600", "s-maxage=1, max-age=300"), 300)
        XCTAssertNil(HTTPCacheFields.maxAge("s-maxage=60"))
    }

    func testNoCacheAndNoStoreBeatMaxAgeAndExpires() {
        let noCache = fields(["max-age=60, no-cache"], expires: "Thu, 01 Dec 1994 16:00:00 GMT", date: date)
        XCTAssertEqual(noCache.expires, build, "stale on arrival: expires at the build time")
        XCTAssertEqual(noCache.revalidation, [.noCache])
        let split = fields(["max-age=3600", "No-Store"], date: date)
        XCTAssertEqual(split.expires, build, "a second field line restricts the first")
        XCTAssertEqual(split.revalidation, [.noStore])
    }

    func testQualifiedNoCacheRestrictsHeaderFieldsOnly() {
        let qualified = fields(["no-cache=\"Set-Cookie, Authorization\", max-age=120"], date: date)
        XCTAssertEqual(qualified.expires, build + 120, "the comma inside the quotes does not split the list")
        XCTAssertEqual(qualified.revalidation, [])
    }

    func testInvalidMaxAgeIsStaleAndAHugeOneIsCapped() {
        XCTAssertEqual(fields(["max-age=abc"], date: date).expires, build)
        XCTAssertEqual(fields(["max-age=-1, max-age=600"], date: date).expires, build, "the invalid one is most restrictive")
        XCTAssertEqual(fields(["max-age=99999999999999999999"], date: date).expires, build + 2_147_483_648)
    }

    func testExpiresIsUsedWithoutMaxAgeAndAnInvalidOneIsAlreadyExpired() {
        // Thu, 01 Dec 1994 16:00:00 GMT is 2,185,823 s after the Date.
        XCTAssertEqual(fields(["public"], expires: "Thu, 01 Dec 1994 16:00:00 GMT", date: date).expires, build + 2_185_823)
        XCTAssertEqual(fields([], expires: "0", date: date).expires, build)
        XCTAssertEqual(fields([], expires: "soon", buildTime: 5).expires, 5)
        XCTAssertEqual(fields([], expires: "Sat, 05 Nov 1994 08:49:37 GMT", date: date).expires, build,
                       "an Expires before the Date is stale on arrival")
        XCTAssertNil(fields(["public"]).expires, "no freshness information: no expiry")
    }

    func testExpiresWithoutADateIsTheTimeItNamesNeverBeforeTheBuildTime() {
        let later = "Tue, 14 Nov 2023 22:13:20 GMT"  // 1,700,000,000
        XCTAssertEqual(fields([], expires: later, buildTime: 1_699_999_000).expires, 1_700_000_000)
        XCTAssertEqual(fields([], expires: later, date: "garbage", buildTime: 1_699_999_000).expires, 1_700_000_000,
                       "an invalid Date is no Date")
        XCTAssertEqual(fields([], expires: later, buildTime: 1_800_000_000).expires, 1_800_000_000, "already expired")
    }

    func testAHugeExpiresMinusDateIsCapped() {
        XCTAssertEqual(fields([], expires: "Fri, 31 Dec 9999 23:59:59 GMT", date: date).expires,
                       build + HTTPCacheFields.maxDeltaSeconds)
    }

    func testMustRevalidateAsRFC9111AndAsMapLibreReadsIt() {
        XCTAssertEqual(fields(["max-age=60, must-revalidate"]).revalidation, [.mustRevalidate, .mapLibreMustRevalidate])
        XCTAssertEqual(fields(["max-age=60, must-revalidate"], date: date).expires, build + 60,
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
        let fields = HTTPCacheFields(etag: "", lastModified: "yesterday", cacheControl: [], expires: nil, buildTime: 5)
        XCTAssertEqual(fields, HTTPCacheFields())
    }
}
