import Foundation
import ProvisionFoundation
import ProvisionModel

/// A JSON Schema (draft 2020-12) validator for the subset of keywords provision's schemas use.
///
/// Why our own: no third-party packages. It is strict in two ways a general validator is not:
/// `"integer"` accepts only JSON integers (`JSONValue.int`, never `1.0`), because provision's
/// writer never emits a count as a double; and a keyword it does not know is reported as an
/// error instead of being ignored, so a schema cannot silently rely on something unchecked.
/// Only local references (`#/$defs/name`, or any `#/…` JSON pointer) are resolved.
struct SchemaValidator {
    /// The root schema that `$ref`s resolve against.
    let root: JSONValue

    /// Keywords that only annotate; they never make an instance invalid.
    static let annotations: Set<String> = [
        "$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples", "format",
    ]

    /// Keywords `errors(in:)` evaluates.
    static let assertions: Set<String> = [
        "type", "properties", "required", "additionalProperties", "propertyNames", "items", "prefixItems",
        "minItems", "maxItems", "uniqueItems", "enum", "const", "oneOf", "anyOf", "allOf", "$ref",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
    ]

    init(schema: JSONValue) {
        root = schema
    }

    /// Every violation, as `pointer: message`; empty when `instance` is valid.
    func errors(in instance: JSONValue) -> [String] {
        var out: [String] = []
        check(instance, against: root, at: "", schemaPath: "#", into: &out, depth: 0)
        return out
    }

    /// Whether `instance` is valid.
    func isValid(_ instance: JSONValue) -> Bool { errors(in: instance).isEmpty }

    // MARK: - Evaluation

    private func check(_ value: JSONValue, against schema: JSONValue, at pointer: String, schemaPath: String,
                       into out: inout [String], depth: Int) {
        func located(_ message: String) -> String { "\(pointer.isEmpty ? "/" : pointer): \(message) (\(schemaPath))" }
        func fail(_ message: String) { out.append(located(message)) }
        guard depth < 64 else { return fail("$ref recursion too deep") }
        switch schema {
        case .bool(true): return
        case .bool(false): return fail("no value is allowed here")
        case .object: break
        default: return fail("schema is neither an object nor a boolean")
        }
        guard let keywords = schema.objectValue else { return }
        for key in keywords.keys where !Self.annotations.contains(key) && !Self.assertions.contains(key) {
            fail("unsupported schema keyword \"\(key)\"")
        }

        if let ref = schema["$ref"] {
            if let target = ref.stringValue.flatMap(resolve) {
                check(value, against: target, at: pointer, schemaPath: ref.stringValue ?? "", into: &out, depth: depth + 1)
            } else {
                fail("cannot resolve $ref \(ref.serialized())")
            }
        }
        if let type = schema["type"] {
            let names = type.arrayValue?.compactMap(\.stringValue) ?? type.stringValue.map { [$0] } ?? []
            if !names.contains(where: { Self.matches(value, type: $0) }) {
                fail("expected \(names.joined(separator: " or ")), found \(Self.typeName(value))")
            }
        }
        if let allowed = schema["enum"]?.arrayValue, !allowed.contains(where: { Self.equal($0, value) }) {
            fail("\(value.serialized()) is not one of \(JSONValue.array(allowed).serialized())")
        }
        if let constant = schema["const"], !Self.equal(constant, value) {
            fail("expected \(constant.serialized()), found \(value.serialized())")
        }
        out += Self.numberErrors(value, schema).map(located)
        out += Self.stringErrors(value, schema).map(located)
        checkObject(value, schema, at: pointer, schemaPath: schemaPath, into: &out, depth: depth)
        checkArray(value, schema, at: pointer, schemaPath: schemaPath, into: &out, depth: depth)
        checkCombinators(value, schema, at: pointer, schemaPath: schemaPath, into: &out, depth: depth)
    }

    private static func numberErrors(_ value: JSONValue, _ schema: JSONValue) -> [String] {
        var out: [String] = []
        func fail(_ message: String) { out.append(message) }
        guard let number = value.doubleValue else { return out }
        if let minimum = schema["minimum"]?.doubleValue, number < minimum { fail("\(number) is less than \(minimum)") }
        if let maximum = schema["maximum"]?.doubleValue, number > maximum { fail("\(number) is more than \(maximum)") }
        if let bound = schema["exclusiveMinimum"]?.doubleValue, number <= bound { fail("\(number) is not more than \(bound)") }
        if let bound = schema["exclusiveMaximum"]?.doubleValue, number >= bound { fail("\(number) is not less than \(bound)") }
        return out
    }

    private static func stringErrors(_ value: JSONValue, _ schema: JSONValue) -> [String] {
        var out: [String] = []
        func fail(_ message: String) { out.append(message) }
        guard let string = value.stringValue else { return out }
        let length = string.unicodeScalars.count
        if let minimum = schema["minLength"]?.intValue, length < minimum { fail("string shorter than \(minimum)") }
        if let maximum = schema["maxLength"]?.intValue, length > maximum { fail("string longer than \(maximum)") }
        if let pattern = schema["pattern"]?.stringValue {
            if let regex = try? NSRegularExpression(pattern: pattern) {
                let range = NSRange(string.startIndex..., in: string)
                if regex.firstMatch(in: string, range: range) == nil { fail("\"\(string)\" does not match \(pattern)") }
            } else {
                fail("invalid pattern \(pattern)")
            }
        }
        return out
    }

    private func checkObject(_ value: JSONValue, _ schema: JSONValue, at pointer: String, schemaPath: String,
                             into out: inout [String], depth: Int) {
        func fail(_ message: String) { out.append("\(pointer.isEmpty ? "/" : pointer): \(message) (\(schemaPath))") }
        guard let object = value.objectValue else { return }
        for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
            fail("missing required property \"\(name)\"")
        }
        let properties = schema["properties"]?.objectValue ?? JSONObject()
        for (key, member) in object.members {
            let path = pointer + "/" + Self.escape(key)
            if let propertyNames = schema["propertyNames"] {
                check(.string(key), against: propertyNames, at: path, schemaPath: schemaPath + "/propertyNames",
                      into: &out, depth: depth + 1)
            }
            if let propertySchema = properties[key] {
                check(member, against: propertySchema, at: path, schemaPath: schemaPath + "/properties/" + key,
                      into: &out, depth: depth + 1)
            } else if let additional = schema["additionalProperties"] {
                if additional == .bool(false) {
                    out.append("\(path): unexpected property \"\(key)\" (\(schemaPath)/additionalProperties)")
                } else {
                    check(member, against: additional, at: path, schemaPath: schemaPath + "/additionalProperties",
                          into: &out, depth: depth + 1)
                }
            }
        }
    }

    private func checkArray(_ value: JSONValue, _ schema: JSONValue, at pointer: String, schemaPath: String,
                            into out: inout [String], depth: Int) {
        func fail(_ message: String) { out.append("\(pointer.isEmpty ? "/" : pointer): \(message) (\(schemaPath))") }
        guard let items = value.arrayValue else { return }
        if let minimum = schema["minItems"]?.intValue, items.count < minimum { fail("fewer than \(minimum) items") }
        if let maximum = schema["maxItems"]?.intValue, items.count > maximum { fail("more than \(maximum) items") }
        if schema["uniqueItems"] == .bool(true) {
            for i in items.indices where items[..<i].contains(where: { Self.equal($0, items[i]) }) {
                fail("item \(i) repeats an earlier item")
            }
        }
        let prefix = schema["prefixItems"]?.arrayValue ?? []
        for (i, item) in items.enumerated() {
            let itemSchema = i < prefix.count ? prefix[i] : schema["items"]
            guard let itemSchema else { continue }
            check(item, against: itemSchema, at: pointer + "/\(i)", schemaPath: schemaPath + "/items",
                  into: &out, depth: depth + 1)
        }
    }

    private func checkCombinators(_ value: JSONValue, _ schema: JSONValue, at pointer: String, schemaPath: String,
                                  into out: inout [String], depth: Int) {
        func fail(_ message: String) { out.append("\(pointer.isEmpty ? "/" : pointer): \(message) (\(schemaPath))") }
        func branchErrors(_ branch: JSONValue, _ path: String) -> [String] {
            var errors: [String] = []
            check(value, against: branch, at: pointer, schemaPath: path, into: &errors, depth: depth + 1)
            return errors
        }
        if let branches = schema["allOf"]?.arrayValue {
            for (i, branch) in branches.enumerated() { out += branchErrors(branch, schemaPath + "/allOf/\(i)") }
        }
        if let branches = schema["anyOf"]?.arrayValue {
            let results = branches.enumerated().map { branchErrors($1, schemaPath + "/anyOf/\($0)") }
            if !results.contains(where: \.isEmpty) {
                fail("matches none of anyOf: " + results.map { $0.first ?? "" }.joined(separator: " | "))
            }
        }
        if let branches = schema["oneOf"]?.arrayValue {
            let results = branches.enumerated().map { branchErrors($1, schemaPath + "/oneOf/\($0)") }
            let matched = results.filter(\.isEmpty).count
            if matched == 0 {
                fail("matches none of oneOf: " + results.map { $0.first ?? "" }.joined(separator: " | "))
            } else if matched > 1 {
                fail("matches \(matched) branches of oneOf, not exactly one")
            }
        }
    }

    // MARK: - Helpers

    /// The schema at a local reference `#/a/b`, or nil.
    private func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#") else { return nil }
        var node: JSONValue? = root
        for token in ref.dropFirst().split(separator: "/", omittingEmptySubsequences: true) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let array = node?.arrayValue, let index = Int(key), array.indices.contains(index) {
                node = array[index]
            } else {
                node = node?[key]
            }
        }
        return node
    }

    static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("integer", .int), ("number", .int), ("number", .double),
             ("string", .string), ("array", .array), ("object", .object):
            return true
        default:
            return false
        }
    }

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// JSON equality: numbers by value, objects regardless of member order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int, .double), (.double, .int), (.double, .double): return a.doubleValue == b.doubleValue
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            return x.members.count == y.members.count
                && x.members.allSatisfy { member in y[member.key].map { equal(member.value, $0) } ?? false }
        default: return a == b
        }
    }

    private static func escape(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
