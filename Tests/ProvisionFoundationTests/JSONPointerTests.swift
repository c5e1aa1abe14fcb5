@testable import ProvisionFoundation
import XCTest

/// The one JSON Pointer encoder (RFC 6901) that validation, the parser and the planner share.
final class JSONPointerTests: XCTestCase {
    func testTokensAreEscapedTildeFirstThenSlash() {
        let cases: [(key: String, pointer: String)] = [
            ("foo", "/foo"),
            ("a/b", "/a~1b"),
            ("m~n", "/m~0n"),
            ("~1", "/~01"),          // a key that looks escaped stays itself: `~` is escaped first
            ("~/", "/~0~1"),
            ("/~", "/~1~0"),
            ("", "/"),               // the empty key
            (" ", "/ "),
            ("c%d", "/c%d"),
            ("é/ü 地図", "/é~1ü 地図"),   // Unicode is kept as it is
            ("https://a.example/", "/https:~1~1a.example~1"),
        ]
        for (key, pointer) in cases {
            XCTAssertEqual(JSONPointer.root.appending(key).description, pointer, key)
            XCTAssertEqual(JSONPointer.appending("", key), pointer, key)
            XCTAssertEqual(JSONPointer.root.appending(key).tokens, [key], "round trip of \(key)")
        }
    }

    func testPointersNestKeysIndicesAndEmptyKeys() {
        let pointer = JSONPointer.root.appending("sources").appending("a/b").appending(0).appending("").appending("~")
        XCTAssertEqual(pointer.description, "/sources/a~1b/0//~0")
        XCTAssertEqual(pointer.tokens, ["sources", "a/b", "0", "", "~"])
        XCTAssertEqual(JSONPointer.root.description, "")
        XCTAssertEqual(JSONPointer.root.tokens, [])
        XCTAssertEqual(JSONPointer.parse("/a~1b").appending("c"), JSONPointer(escaped: "/a~1b/c"))
        XCTAssertEqual(JSONPointer.appending("/regions", 3), "/regions/3")
    }
}
