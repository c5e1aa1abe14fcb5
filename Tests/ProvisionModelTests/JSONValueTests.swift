import Foundation
import XCTest
@testable import ProvisionModel

/// Pins down the JSON value and parser contract the job loader relies on.
final class JSONValueTests: XCTestCase {
    func testRoundTripKeepsKeyOrderAndNumberKinds() throws {
        let text = #"{"z":1,"a":[1.5,-2,true,null,"x\"y\\\n"],"m":{"b":{},"a":[]},"d":15.0,"e":1e300}"#
        let value = try JSONValue.parse(text)
        XCTAssertEqual(value["z"], .int(1))
        XCTAssertEqual(value["d"], .double(15))
        XCTAssertEqual(value.objectValue?.keys, ["z", "a", "m", "d", "e"])
        XCTAssertEqual(value.serialized(), #"{"z":1,"a":[1.5,-2,true,null,"x\"y\\\n"],"m":{"b":{},"a":[]},"d":15.0,"e":1e+300}"#)
        XCTAssertEqual(try JSONValue.parse(value.serialized()), value)
    }

    func testDoublesAreWrittenWithAFraction() {
        let table: [(Double, String)] = [(0, "0.0"), (15, "15.0"), (-1, "-1.0"), (0.1, "0.1"), (52.3, "52.3"),
                                         (1e-7, "1e-07"), (.infinity, "null")]
        for (double, text) in table {
            XCTAssertEqual(JSONValue.double(double).serialized(), text)
        }
        XCTAssertEqual(JSONValue.int(15).serialized(), "15")
    }

    func testCanonicalFormSortsKeysByUTF8() throws {
        let value = try JSONValue.parse(#"{"b":1,"a":{"y":2,"x":3},"B":0,"é":4}"#)
        XCTAssertEqual(value.serialized(.canonical), #"{"B":0,"a":{"x":3,"y":2},"b":1,"é":4}"#)
        XCTAssertEqual(JSONValue.object(JSONObject([("b", 1), ("a", 2)])).serialized(.prettySorted),
                       "{\n  \"a\": 2,\n  \"b\": 1\n}")
    }

    func testSyntaxErrorsCarryLineAndColumn() {
        let table: [(String, Int, Int)] = [
            ("", 1, 1), ("{", 1, 2), ("[1,]", 1, 4), ("{\n  \"a\": tru\n}", 2, 8), ("[1]\n\n  x", 3, 3),
            ("{\"a\" 1}", 1, 6), ("[01]", 1, 3), ("\"ünï\" x", 1, 7),
        ]
        for (text, line, column) in table {
            XCTAssertThrowsError(try JSONValue.parse(text), text) { error in
                let syntax = error as? JSONSyntaxError
                XCTAssertEqual(syntax?.line, line, text)
                XCTAssertEqual(syntax?.column, column, text)
            }
        }
    }

    func testIntValueAcceptsIntegralDoublesOnly() {
        XCTAssertEqual(JSONValue.double(3).intValue, 3)
        XCTAssertNil(JSONValue.double(3.5).intValue)
        XCTAssertNil(JSONValue.string("3").intValue)
    }
}
