import Foundation
@testable import ProvisionFoundation
import XCTest

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

    // MARK: - Linear parsing and caps

    /// `{"k0":0,"k1":1,…}` with `count` members.
    private func wideObject(_ count: Int, duplicateEvery: Int = 0) -> Data {
        var text = "{"
        text.reserveCapacity(count * 14)
        for i in 0..<count {
            if i > 0 { text += "," }
            let key = duplicateEvery > 0 && i % duplicateEvery == duplicateEvery - 1 ? "k0" : "k\(i)"
            text += "\"\(key)\":\(i)"
        }
        return Data((text + "}").utf8)
    }

    func testFourHundredThousandMembersParseInOrder() throws {
        let object = try XCTUnwrap(JSONValue.parse(wideObject(400_000)).objectValue)
        XCTAssertEqual(object.count, 400_000)
        XCTAssertEqual(object.members.first?.key, "k0")
        XCTAssertEqual(object.members.last?.key, "k399999")
        XCTAssertEqual(object["k123456"], .int(123_456))
        XCTAssertEqual(object.members[250_000].value, .int(250_000))
        XCTAssertNil(object["k400000"])
    }

    func testDuplicateMembersOfAWideObjectKeepTheLastValueInTheFirstPlace() throws {
        // Every tenth member repeats "k0": the object keeps k0 first with the last value written.
        let object = try XCTUnwrap(JSONValue.parse(wideObject(100_000, duplicateEvery: 10)).objectValue)
        XCTAssertEqual(object.count, 90_001 - 1)
        XCTAssertEqual(object.members.first?.key, "k0")
        XCTAssertEqual(object["k0"], .int(99_999))
        XCTAssertEqual(object["k8"], .int(8))
        XCTAssertNil(object["k9"])
    }

    func testObjectsStayConsistentAcrossRemovalAndGrowth() {
        var object = JSONObject()
        for i in 0..<20 { object["m\(i)"] = .int(i) }
        object["m3"] = nil
        object["m15"] = nil
        object["m0"] = "first"
        object["m20"] = 20
        XCTAssertEqual(object.keys, ["m0", "m1", "m2"] + (4...14).map { "m\($0)" } + (16...20).map { "m\($0)" })
        XCTAssertEqual(object["m16"], .int(16))
        XCTAssertEqual(object["m0"], "first")
        XCTAssertNil(object["m3"])
        for i in 1..<21 { object["m\(i)"] = nil }
        XCTAssertEqual(object.keys, ["m0"])
        XCTAssertEqual(object, JSONObject([("m0", "first")]))
    }

    func testMemberCapAllowsAMillionAndRefusesOneMore() throws {
        XCTAssertEqual(JSONValue.ParseLimits.standard.maxMembers, 1_000_000)
        XCTAssertEqual(try JSONValue.parse(wideObject(1_000_000)).objectValue?.count, 1_000_000)
        XCTAssertThrowsError(try JSONValue.parse(wideObject(1_000_001))) { error in
            XCTAssertTrue("\(error)".contains("cap of 1000000"), "\(error)")
        }
        let array = Data(("[" + Array(repeating: "0", count: 1_000_001).joined(separator: ",") + "]").utf8)
        XCTAssertThrowsError(try JSONValue.parse(array)) { error in
            XCTAssertTrue("\(error)".contains("array has more elements than the cap of 1000000"), "\(error)")
        }
        XCTAssertEqual(try JSONValue.parse(array.dropLast(3) + Data("]".utf8)).arrayValue?.count, 1_000_000)
    }

    func testCapsAreConfigurableAndNamedInTheError() {
        let small = JSONValue.ParseLimits(maxBytes: 30, maxDepth: 3, maxMembers: 2)
        XCTAssertEqual(try JSONValue.parse("[[[1]]]", limits: small), [[[1]]])
        XCTAssertThrowsError(try JSONValue.parse("[[[[1]]]]", limits: small)) { error in
            XCTAssertEqual((error as? JSONSyntaxError)?.message, "nesting deeper than the depth cap of 3 levels")
            XCTAssertEqual((error as? JSONSyntaxError)?.pointer, "/0/0/0")
            XCTAssertEqual((error as? JSONSyntaxError)?.exceedsCap, true)
        }
        XCTAssertThrowsError(try JSONValue.parse(#"{"a":{"b":1,"c":2,"d":3}}"#, limits: small)) { error in
            XCTAssertEqual((error as? JSONSyntaxError)?.message, "object has more members than the cap of 2")
            XCTAssertEqual((error as? JSONSyntaxError)?.pointer, "/a")
        }
        XCTAssertThrowsError(try JSONValue.parse(#"["1234567890123456789012345678"]"#, limits: small)) { error in
            XCTAssertEqual((error as? JSONSyntaxError)?.message, "document of 32 bytes exceeds the size cap of 30 bytes")
        }
    }

    func testStandardDepthCapIs128Levels() throws {
        let nested = { (depth: Int) in String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        XCTAssertNoThrow(try JSONValue.parse(nested(128)))
        XCTAssertThrowsError(try JSONValue.parse(nested(129))) { error in
            XCTAssertTrue("\(error)".contains("depth cap of 128"), "\(error)")
        }
        XCTAssertEqual(JSONValue.ParseLimits.standard.maxBytes, 64 << 20)
        XCTAssertThrowsError(try JSONValue.parse(Data(count: (64 << 20) + 1))) { error in
            XCTAssertTrue("\(error)".contains("size cap of 67,108,864 bytes"), "\(error)")
        }
    }

    func testErrorsNameTheJSONPointerOfTheValueThatHoldsThem() {
        let table: [(String, String)] = [
            (#"{"layers":[{"id":"a"},{"id":tru}]}"#, "/layers/1/id"),
            (#"{"a/b":{"m~n":[1,2,x]}}"#, "/a~1b/m~0n/2"),
            (#"{"a":1,}"#, ""),
        ]
        for (text, pointer) in table {
            XCTAssertThrowsError(try JSONValue.parse(text), text) { error in
                XCTAssertEqual((error as? JSONSyntaxError)?.pointer, pointer, text)
                XCTAssertEqual((error as? JSONSyntaxError)?.exceedsCap, false, text)
            }
        }
        XCTAssertThrowsError(try JSONValue.parse(#"{"a":[x]}"#)) { error in
            XCTAssertEqual("\(error)", "line 1, column 7 (at /a/0): expected a JSON value, found 'x'")
        }
    }
}
