import Foundation
import ProvisionFoundation
import ProvisionModel

/// A value of the style specification's expression language, as the label evaluator computes
/// it: what a feature property, a literal or an expression can be.
public enum ExpressionValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ExpressionValue])
    case object([String: ExpressionValue])
    /// The output of `format`: text sections, each with the font stack it overrides (if any).
    case formatted([FormattedSection])

    /// The value of a JSON literal (numbers become doubles).
    public init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(ExpressionValue.init(json:)))
        case .object(let object):
            var members: [String: ExpressionValue] = [:]
            for (key, value) in object.members { members[key] = ExpressionValue(json: value) }
            self = .object(members)
        }
    }

    /// The expression type name `typeof` gives.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        case .formatted: return "formatted"
        }
    }

    /// `to-string`: null is "", booleans and numbers as JavaScript prints them, formatted text
    /// joined, arrays and objects as JSON.
    public var stringValue: String {
        switch self {
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .number(let d): return Self.format(d)
        case .string(let s): return s
        case .formatted(let sections): return sections.map(\.text).joined()
        case .array(let items): return "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { "\"\($0)\":\(members[$0]?.jsonText ?? "null")" }.joined(separator: ",") + "}"
        }
    }

    private var jsonText: String {
        if case .string(let s) = self { return "\"\(s)\"" }
        return stringValue
    }

    /// A number as JavaScript's `String(n)` writes the common cases: integers without a
    /// fraction, others with the shortest round-tripping digits.
    static func format(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d > 0 ? "Infinity" : "-Infinity" }
        if d == d.rounded(), abs(d) < 1e21 { return String(Int64(d)) }
        return "\(d)"
    }

    /// Whether the value is truthy for `to-boolean`.
    var truthy: Bool {
        switch self {
        case .null: return false
        case .bool(let b): return b
        case .number(let d): return d != 0 && !d.isNaN
        case .string(let s): return !s.isEmpty
        default: return true
        }
    }
}

/// One section of formatted text.
public struct FormattedSection: Equatable, Sendable {
    /// The section's text.
    public var text: String
    /// The font stack the section's `text-font` option names, nil when it has none.
    public var fontStack: [String]?

    /// A section of `text` drawn with `fontStack` (nil: the layer's).
    public init(text: String, fontStack: [String]? = nil) {
        self.text = text
        self.fontStack = fontStack
    }
}
