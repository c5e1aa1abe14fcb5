import Foundation
import ProvisionStore
import XCTest

/// One mapping from a failed system call to the store's error kinds, for every file the store writes.
final class StoreErrorTests: XCTestCase {
    func testAFullFileSystemIsDiskFullNamingTheFileTheUserKnows() {
        for code in [ENOSPC, EDQUOT] {
            let error = StoreError.system(code, "cannot write a temporary sort file", path: "/s/search",
                                          target: "/s/search/places.db")
            XCTAssertEqual(error.code, .diskFull)
            XCTAssertEqual(error.path, "/s/search/places.db")
            XCTAssertEqual(error.underlyingCode, code)
            XCTAssertTrue(error.description.contains("cannot write a temporary sort file: \(String(cString: strerror(code)))"),
                          error.description)
        }
    }

    func testAnyOtherFailureIsIONamingThePath() {
        let error = StoreError.system(EIO, "cannot read a temporary sort file", path: "/s/search")
        XCTAssertEqual(error.code, .io)
        XCTAssertEqual(error.path, "/s/search")
        XCTAssertEqual(error.underlyingCode, EIO)
        XCTAssertTrue(error.description.hasPrefix("/s/search: cannot read a temporary sort file: "), error.description)
        XCTAssertTrue(error.description.hasSuffix("(io, errno \(EIO))"), error.description)
    }
}
