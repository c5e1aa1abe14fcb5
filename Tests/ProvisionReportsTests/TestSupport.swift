import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The names of the output schemas under Jobs/schema, without `.schema.json`.
let outputSchemaNames = ["plan", "report", "audit", "lock", "validation", "error", "events", "merge-report", "export-report", "search", "attribution"]

/// Reads and parses `Jobs/schema/<name>.schema.json`.
func loadSchema(_ name: String) throws -> JSONValue {
    let url = repositoryRoot.appendingPathComponent("Jobs/schema/\(name).schema.json")
    return try JSONValue.parse(Data(contentsOf: url))
}

/// A validator for `Jobs/schema/<name>.schema.json`.
func validator(_ name: String) throws -> SchemaValidator {
    SchemaValidator(schema: try loadSchema(name))
}

/// Asserts that `document` is valid against schema `name`, both as built and after a round
/// trip through the text provision prints (sorted, indented), which is what consumers parse.
func assertValid(_ document: JSONValue, against name: String, _ message: String = "",
                 file: StaticString = #filePath, line: UInt = #line) throws {
    let schema = try validator(name)
    XCTAssertEqual(schema.errors(in: document), [], "\(name) \(message)", file: file, line: line)
    let reparsed = try JSONValue.parse(document.serialized(.prettySorted))
    XCTAssertEqual(schema.errors(in: reparsed), [], "\(name) \(message) (reparsed)", file: file, line: line)
}

/// Asserts that schema `name` rejects `document`, with an error mentioning `fragment`.
func assertInvalid(_ document: JSONValue, against name: String, mentioning fragment: String,
                   file: StaticString = #filePath, line: UInt = #line) throws {
    let errors = try validator(name).errors(in: document)
    XCTAssertFalse(errors.isEmpty, "\(name) accepted an invalid document", file: file, line: line)
    XCTAssertTrue(errors.contains { $0.contains(fragment) }, "\(errors) mention \(fragment)", file: file, line: line)
}

extension JSONValue {
    /// The element `index` of an array, or nil.
    subscript(index: Int) -> JSONValue? {
        guard let items = arrayValue, items.indices.contains(index) else { return nil }
        return items[index]
    }

    /// A copy with the value at the JSON Pointer `pointer` replaced, or removed when `newValue`
    /// is nil. Array indices must exist.
    func setting(_ pointer: String, to newValue: JSONValue?) -> JSONValue {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        return Self.setting(self, tokens[...], newValue)
    }

    private static func setting(_ node: JSONValue, _ tokens: ArraySlice<String>, _ newValue: JSONValue?) -> JSONValue {
        guard let token = tokens.first else { return newValue ?? .null }
        let rest = tokens.dropFirst()
        switch node {
        case .object(var object):
            if rest.isEmpty {
                object[token] = newValue
            } else {
                object[token] = setting(object[token] ?? .null, rest, newValue)
            }
            return .object(object)
        case .array(var items):
            guard let index = Int(token), items.indices.contains(index) else { return node }
            if rest.isEmpty, newValue == nil {
                items.remove(at: index)
            } else {
                items[index] = setting(items[index], rest, newValue)
            }
            return .array(items)
        default:
            return node
        }
    }
}
