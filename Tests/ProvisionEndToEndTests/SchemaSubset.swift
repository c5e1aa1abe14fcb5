import Foundation
import ProvisionFoundation
import ProvisionModel

/// A small JSON Schema checker for the keywords the repository's schemas use in the progress
/// events (type, const, enum, minimum, required, properties, additionalProperties: false,
/// `$ref` to `#/$defs/…`, oneOf). Enough to check real output against Jobs/schema/*.json from
/// this target, which cannot reach the full validator of ProvisionReportsTests.
struct SchemaSubset {
    /// The whole schema document (for `$ref`).
    let root: JSONValue

    /// Loads `Jobs/schema/<name>`.
    init(named name: String) throws {
        root = try JSONValue.parse(Data(contentsOf: Demo.repositoryRoot.appendingPathComponent("Jobs/schema/\(name)")))
    }

    /// Every violation of the schema by `value`, as `pointer: message`; empty when valid.
    func problems(_ value: JSONValue) -> [String] {
        check(value, against: root, at: "")
    }

    /// Every violation of the definition `$defs/<name>` by `value` (this checker does not walk
    /// `items`, so a test checks array members against their definition this way).
    func problems(_ value: JSONValue, definition name: String) -> [String] {
        guard let definition = root["$defs"]?[name] else { return ["no $defs/\(name)"] }
        return check(value, against: definition, at: "")
    }

    private func check(_ value: JSONValue, against schema: JSONValue, at pointer: String) -> [String] {
        var out: [String] = []
        if let ref = schema["$ref"]?.stringValue {
            guard ref.hasPrefix("#/$defs/"), let target = root["$defs"]?[String(ref.dropFirst(8))] else {
                return ["\(pointer): unresolvable $ref \(ref)"]
            }
            out += check(value, against: target, at: pointer)
        }
        if let type = schema["type"]?.stringValue, !Self.has(value, type: type) {
            out.append("\(pointer): expected \(type), found \(value.serialized(.compact))")
        }
        if let constant = schema["const"], !Self.same(constant, value) {
            out.append("\(pointer): expected \(constant.serialized(.compact)), found \(value.serialized(.compact))")
        }
        if let options = schema["enum"]?.arrayValue, !options.contains(where: { Self.same($0, value) }) {
            out.append("\(pointer): \(value.serialized(.compact)) is not one of \(JSONValue.array(options).serialized(.compact))")
        }
        if let minimum = schema["minimum"]?.doubleValue, let number = value.doubleValue, number < minimum {
            out.append("\(pointer): \(number) is below the minimum \(minimum)")
        }
        if let object = value.objectValue {
            for key in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[key] == nil {
                out.append("\(pointer): missing required \"\(key)\"")
            }
            let properties = schema["properties"]?.objectValue
            for (key, member) in object.members {
                if let property = properties?[key] {
                    out += check(member, against: property, at: pointer + "/" + key)
                } else if schema["additionalProperties"] == .bool(false) {
                    out.append("\(pointer): unexpected property \"\(key)\"")
                }
            }
        }
        if let alternatives = schema["oneOf"]?.arrayValue {
            let results = alternatives.map { check(value, against: $0, at: pointer) }
            let matching = results.filter(\.isEmpty).count
            if matching != 1 {
                out.append("\(pointer): matches \(matching) of the oneOf alternatives, not exactly one"
                           + (matching == 0 ? " (closest: \(results.min { $0.count < $1.count } ?? []))" : ""))
            }
        }
        return out
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null): return true
        case ("number", .int), ("number", .double), ("integer", .int): return true
        case ("integer", .double(let d)): return d.rounded() == d
        default: return false
        }
    }

    private static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }
}
