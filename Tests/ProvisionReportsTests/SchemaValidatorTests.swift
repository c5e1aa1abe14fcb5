import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// The test-only JSON Schema validator: each keyword accepts what it should and rejects what it should.
final class SchemaValidatorTests: XCTestCase {
    private func errors(_ schema: String, _ instance: String) throws -> [String] {
        SchemaValidator(schema: try JSONValue.parse(schema)).errors(in: try JSONValue.parse(instance))
    }

    private func assertAccepts(_ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for instance in instances {
            XCTAssertEqual(try errors(schema, instance), [], instance, file: file, line: line)
        }
    }

    private func assertRejects(_ schema: String, _ instances: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for instance in instances {
            XCTAssertNotEqual(try errors(schema, instance), [], "\(instance) should be rejected", file: file, line: line)
        }
    }

    func testIntegerIsNotNumber() throws {
        try assertAccepts(#"{"type": "integer"}"#, ["0", "-3", "9007199254740993"])
        try assertRejects(#"{"type": "integer"}"#, ["1.5", "1.0", "\"1\"", "true", "null"])
        try assertAccepts(#"{"type": "number"}"#, ["0", "1.5", "-2e3"])
        try assertRejects(#"{"type": "number"}"#, ["\"1\"", "[1]"])
        try assertAccepts(#"{"type": ["string", "null"]}"#, ["\"a\"", "null"])
        try assertRejects(#"{"type": ["string", "null"]}"#, ["0", "{}"])
    }

    func testObjectKeywords() throws {
        let closed = #"{"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}, "b": {}}, "additionalProperties": false}"#
        try assertAccepts(closed, [#"{"a": 1}"#, #"{"a": 1, "b": [null]}"#])
        try assertRejects(closed, [#"{}"#, #"{"b": 1}"#, #"{"a": 1, "c": 1}"#, #"{"a": "1"}"#, "[]"])
        XCTAssertEqual(try errors(closed, #"{"a": 1, "c/d": 1}"#), [#"/c~1d: unexpected property "c/d" (#/additionalProperties)"#])
        let map = #"{"type": "object", "propertyNames": {"pattern": "^[0-9]+$"}, "additionalProperties": {"type": "integer", "minimum": 1}}"#
        try assertAccepts(map, [#"{}"#, #"{"10": 3, "9": 1}"#])
        try assertRejects(map, [#"{"x": 3}"#, #"{"10": 0}"#, #"{"10": 1.5}"#])
    }

    func testArrayKeywords() throws {
        let list = #"{"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1, "maxItems": 2, "uniqueItems": true}"#
        try assertAccepts(list, [#"["a"]"#, #"["b", "a"]"#])
        try assertRejects(list, [#"[]"#, #"["a", "b", "a"]"#, #"["a", "a"]"#, #"["c"]"#, #"{"0": "a"}"#])
        let pair = #"{"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}"#
        try assertAccepts(pair, [#"["a", 1]"#, #"["a"]"#])
        try assertRejects(pair, [#"[1, "a"]"#, #"["a", 1, 2]"#])
    }

    func testEnumConstAndNumbers() throws {
        try assertAccepts(#"{"enum": [1, "x", null, {"a": [1]}]}"#, ["1", "1.0", "\"x\"", "null", #"{"a": [1]}"#])
        try assertRejects(#"{"enum": [1, "x", null]}"#, ["2", "\"X\"", "false"])
        try assertAccepts(#"{"const": {"a": 1, "b": 2}}"#, [#"{"b": 2, "a": 1}"#])
        try assertRejects(#"{"const": "plan"}"#, ["\"audit\"", "null"])
        try assertAccepts(#"{"minimum": 0, "maximum": 30, "exclusiveMinimum": -1}"#, ["0", "30", "\"not a number\""])
        try assertRejects(#"{"minimum": 0, "maximum": 30}"#, ["-1", "30.5"])
        try assertRejects(#"{"exclusiveMinimum": 0}"#, ["0"])
    }

    func testStrings() throws {
        try assertAccepts(#"{"type": "string", "pattern": "^sha256:[0-9a-f]{4}$", "minLength": 1}"#, ["\"sha256:00ff\""])
        try assertRejects(#"{"type": "string", "pattern": "^sha256:[0-9a-f]{4}$"}"#, ["\"sha256:00FF\"", "\"xsha256:00ff\""])
        try assertRejects(#"{"minLength": 2, "maxLength": 3}"#, ["\"a\"", "\"abcd\""])
        try assertAccepts(#"{"minLength": 2}"#, ["\"é€\""])
    }

    func testCombinatorsAndReferences() throws {
        let schema = #"""
        {"$defs": {"n": {"type": "integer"}, "s": {"type": "string"}, "small": {"type": "integer", "maximum": 9}},
         "oneOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/s"}, {"$ref": "#/$defs/small"}]}
        """#
        try assertAccepts(schema, ["10", "\"a\""])
        try assertRejects(schema, ["5", "null"])  // 5 matches two branches; null none
        try assertAccepts(#"{"anyOf": [{"type": "integer"}, {"minimum": 0}]}"#, ["5", "-5", "0.5"])
        try assertRejects(#"{"anyOf": [{"type": "integer"}, {"type": "null"}]}"#, ["0.5"])
        try assertRejects(#"{"allOf": [{"type": "integer"}, {"minimum": 0}]}"#, ["-1", "0.5"])
        try assertRejects(##"{"$ref": "#/$defs/missing"}"##, ["1"])
        try assertRejects("false", ["1"])
        try assertAccepts("true", ["1"])
    }

    func testUnknownKeywordsAreReportedNotIgnored() throws {
        XCTAssertEqual(try errors(#"{"if": {"type": "string"}, "description": "annotations are fine"}"#, "1"),
                       [#"/: unsupported schema keyword "if" (#)"#])
    }

    func testErrorsNameThePointerOfTheOffendingValue() throws {
        let schema = #"{"properties": {"a": {"items": {"properties": {"b": {"type": "boolean"}}}}}}"#
        XCTAssertEqual(try errors(schema, #"{"a": [{"b": true}, {"b": 0}]}"#),
                       ["/a/1/b: expected boolean, found integer (#/properties/a/items/properties/b)"])
    }
}
