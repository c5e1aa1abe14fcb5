import XCTest
@testable import ProvisionExecution

final class HTTPCacheFieldsTests: XCTestCase {
    func testMaxAgeWinsOverExpiresAndIsRelativeToNow() {
        let fields = HTTPCacheFields(etag: "W/\"x\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                                     cacheControl: "public, s-maxage=10, max-age=\"600\"",
                                     expires: "Thu, 01 Dec 1994 16:00:00 GMT", now: 2_000)
        XCTAssertEqual(fields, HTTPCacheFields(etag: "W/\"x\"", modified: 784_111_777, expires: 2_600))
    }

    func testAllThreeHTTPDateFormatsParse() {
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPCacheFields.httpDate("Sun Nov  6 08:49:37 1994"), 784_111_777)
    }

    func testUnusableValuesAreDropped() {
        let fields = HTTPCacheFields(etag: "", lastModified: "yesterday", cacheControl: "no-cache, max-age=-1",
                                     expires: "0", now: 5)
        XCTAssertEqual(fields, HTTPCacheFields())
        XCTAssertNil(HTTPCacheFields.maxAge("s-maxage=60"))
    }
}
