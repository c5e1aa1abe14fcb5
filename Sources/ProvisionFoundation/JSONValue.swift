import Foundation

/// A JSON document as a value, with object keys kept in source order.
///
/// Why our own type: Foundation's `JSONSerialization` loses key order, cannot tell
/// `1` from `1.0` (MapLibre's definition reader requires doubles written with a
/// fraction), and reports syntax errors without a usable line and column.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string payload, or nil.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The numeric payload as a double (ints widen), or nil.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The numeric payload as an exact integer, or nil (a double must be integral).
    public var intValue: Int? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 1e15: return Int(d)
        default: return nil
        }
    }

    /// The array payload, or nil.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The object payload, or nil.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// A short name of the JSON type, for diagnostics ("a string", "an array" …).
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON object that keeps its members in insertion order.
///
/// Reading and writing a member by key takes constant time on average: past a few members the
/// object keeps a dictionary of each key's position, so building an object of n members (as
/// the parser does) is linear in n. Removing a member is linear.
public struct JSONObject: Equatable, Sendable {
    /// The members, in order; keys are unique.
    public private(set) var members: [(key: String, value: JSONValue)] = []
    /// The position of each key in `members`; nil while the object is small enough to search.
    private var positions: [String: Int]?
    /// The member count up to which a linear search beats hashing.
    private static let linearSearchLimit = 8

    /// An empty object.
    public init() {}

    /// An object with the given members, in order; a repeated key keeps its last value.
    public init(_ members: [(String, JSONValue)]) {
        for (k, v) in members { self[k] = v }
    }

    /// An object of members as a parser read them: the index is built in one pass sized for
    /// them; a repeated key (rare) keeps its first place and its last value.
    init(parsed list: [(key: String, value: JSONValue)]) {
        if list.count > Self.linearSearchLimit {
            var index = [String: Int](minimumCapacity: list.count)
            var unique = true
            for (i, member) in list.enumerated() where index.updateValue(i, forKey: member.key) != nil {
                unique = false
                break
            }
            if unique {
                members = list
                positions = index
                return
            }
        }
        for member in list { self[member.key] = member.value }
    }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The number of members.
    public var count: Int { members.count }

    /// Reads or writes a member; writing nil removes it. A key already present keeps its place.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            guard let newValue else {
                if let i = position(of: key) {
                    members.remove(at: i)
                    indexPositions()
                }
                return
            }
            if positions != nil {
                // One hash for the common case, a new key; a repeated key keeps its first place.
                if let old = positions?.updateValue(members.count, forKey: key) {
                    positions?[key] = old
                    members[old].value = newValue
                } else {
                    members.append((key, newValue))
                }
            } else if let i = members.firstIndex(where: { $0.key == key }) {
                members[i].value = newValue
            } else {
                members.append((key, newValue))
                if members.count > Self.linearSearchLimit { indexPositions() }
            }
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex(where: { $0.key == key })
    }

    /// Rebuilds `positions` from `members` (nil for a small object).
    private mutating func indexPositions() {
        guard members.count > Self.linearSearchLimit else {
            positions = nil
            return
        }
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count)
        for (i, member) in members.enumerated() { index[member.key] = i }
        positions = index
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

// MARK: - Writing

extension JSONValue {
    /// Options for `serialized`.
    public struct WriteOptions: Sendable {
        /// Sort object keys by their UTF-8 bytes (canonical JSON) instead of keeping their order.
        public var sortedKeys: Bool
        /// Indent with two spaces and put one member per line.
        public var pretty: Bool
        /// Compact output in member order.
        public static let compact = WriteOptions(sortedKeys: false, pretty: false)
        /// Compact output with sorted keys: the sorted-key form hashed and written to locks.
        public static let canonical = WriteOptions(sortedKeys: true, pretty: false)
        /// Indented output with sorted keys, for files people read and diff.
        public static let prettySorted = WriteOptions(sortedKeys: true, pretty: true)

        public init(sortedKeys: Bool, pretty: Bool) {
            self.sortedKeys = sortedKeys
            self.pretty = pretty
        }
    }

    /// The UTF-8 JSON text of this value. Doubles always carry a fraction or exponent
    /// (`15.0`, not `15`), integers never do.
    public func serialized(_ options: WriteOptions = .compact) -> String {
        var out = ""
        write(into: &out, options: options, indent: 0)
        return out
    }

    /// `serialized(options)` as UTF-8 bytes.
    public func data(_ options: WriteOptions = .compact) -> Data {
        Data(serialized(options).utf8)
    }

    private func write(into out: inout String, options: WriteOptions, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += JSONValue.format(double: d)
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (n, item) in items.enumerated() {
                if n > 0 { out += "," }
                if options.pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(into: &out, options: options, indent: indent + 1)
            }
            if options.pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let object):
            if object.isEmpty { out += "{}"; return }
            var members = object.members
            if options.sortedKeys {
                members.sort { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            }
            out += "{"
            for (n, member) in members.enumerated() {
                if n > 0 { out += "," }
                if options.pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSONValue.writeString(member.key, into: &out)
                out += options.pretty ? ": " : ":"
                member.value.write(into: &out, options: options, indent: indent + 1)
            }
            if options.pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Shortest round-trip text of a double, always with a fraction or exponent;
    /// non-finite values (which JSON cannot hold) are written as null.
    public static func format(double d: Double) -> String {
        guard d.isFinite else { return "null" }
        var text = "\(d)"
        if !text.contains(".") && !text.contains("e") && !text.contains("E") { text += ".0" }
        return text
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

// MARK: - Building from Swift values

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}
