import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// The version pin of a remote archive and the `Content-Range` reading behind it.
final class ArchiveVersionTests: XCTestCase {
    func testTheFirstAnswerPinsTheETagAndSizeAndAnyOtherIsAChange() {
        let version = ArchiveVersion(displayURL: "https://a.example.com/p.pmtiles")
        XCTAssertNil(version.size)
        XCTAssertNil(version.check(etag: "\"1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", size: 100))
        XCTAssertEqual(version.size, 100)
        XCTAssertNil(version.check(etag: "\"1\"", lastModified: "Tue, 02 Jan 2024 00:00:00 GMT", size: 100),
                     "with an ETag, Last-Modified is not compared")
        XCTAssertEqual(version.check(etag: "\"2\"", lastModified: nil, size: 100),
                       .changed("the PMTiles archive https://a.example.com/p.pmtiles changed while it was read (ETag \"1\" → \"2\"); "
                                + "its directories no longer match its tiles"))
        XCTAssertEqual(version.check(etag: nil, lastModified: nil, size: 101),
                       .changed("the PMTiles archive https://a.example.com/p.pmtiles changed while it was read "
                                + "(ETag \"1\" → none, size 100 → 101 bytes); its directories no longer match its tiles"))
    }

    func testWithoutAnETagLastModifiedIsPinned() {
        let version = ArchiveVersion(displayURL: "u")
        XCTAssertNil(version.check(etag: nil, lastModified: "A", size: 5))
        XCTAssertNil(version.check(etag: nil, lastModified: "A", size: 5))
        guard case .changed(let why)? = version.check(etag: nil, lastModified: "B", size: 5) else { return XCTFail() }
        XCTAssertTrue(why.contains("(Last-Modified A → B)"), why)
        XCTAssertTrue(FetchFailure.changed(why).isFatal, "a change stops the run")
        XCTAssertFalse(FetchFailure.changed(why).isTransient, "and is not retried")
    }

    func testContentRangeIsReadStrictly() {
        XCTAssertEqual(CurlTransfer.contentRange("bytes 0-16383/3412594").map { [$0.first, $0.last, $0.size] }, [0, 16383, 3412594])
        XCTAssertEqual(CurlTransfer.contentRange(" Bytes 5-5/6 ").map { [$0.first, $0.last, $0.size] }, [5, 5, 6])
        for bad in ["bytes */100", "bytes 0-99/*", "bytes 10-5/100", "bytes 0-100/100", "items 0-1/2", "bytes 0-1", ""] {
            XCTAssertNil(CurlTransfer.contentRange(bad), bad)
        }
    }
}
