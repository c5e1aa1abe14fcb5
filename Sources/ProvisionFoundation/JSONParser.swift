import Foundation

/// A JSON syntax error, or a cap of `JSONValue.ParseLimits` hit, with the 1-based line and
/// column where it was found and the JSON Pointer of the innermost value that holds it.
public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the offending character.
    public var column: Int
    /// What was expected and what was found.
    public var message: String
    /// The RFC 6901 JSON Pointer of the innermost object member or array element the error is
    /// in ("" for the root value); for a duplicate key, the pointer of the repeated member.
    public var pointer: String = ""
    /// Whether the document is well-formed as far as read but past one of `JSONValue.ParseLimits`.
    public var exceedsCap = false
    /// Whether this is an object key seen twice, refused under `DuplicateKeyPolicy.reject`.
    public var isDuplicateKey = false
    /// Further duplicate keys of the same document, after this first one, in document order
    /// (at most 99): under `DuplicateKeyPolicy.reject` the whole document is read so that every
    /// repeated key is reported at once.
    public var moreDuplicateKeys: [JSONSyntaxError] = []

    public var description: String {
        "line \(line), column \(column)\(pointer.isEmpty ? "" : " (at \(pointer))"): \(message)"
    }
}

extension JSONValue {
    /// The caps on a document `parse` accepts, so that hostile or broken input fails fast with
    /// an error naming the cap instead of exhausting time, memory or the stack. The standard
    /// values are far beyond what real styles, TileJSONs, sprite indexes, GeoJSON files and
    /// job files reach.
    public struct ParseLimits: Equatable, Sendable {
        /// The largest document, in bytes (standard: 64 MiB).
        public var maxBytes: Int
        /// The deepest nesting of arrays and objects (standard: 128 levels).
        public var maxDepth: Int
        /// The most members of one object or elements of one array (standard: 1,000,000).
        public var maxMembers: Int

        /// 64 MiB, 128 levels, 1,000,000 members per object or elements per array.
        public static let standard = ParseLimits(maxBytes: 64 << 20, maxDepth: 128, maxMembers: 1_000_000)

        /// Limits with the given caps.
        public init(maxBytes: Int, maxDepth: Int, maxMembers: Int) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.maxMembers = maxMembers
        }
    }

    /// What `parse` does with an object key that appears more than once.
    ///
    /// Why two policies: RFC 8259 leaves duplicate names to the implementation. Documents
    /// fetched from upstream (styles, TileJSON) are read as browsers and MapLibre read them, the
    /// last value winning; a file the user writes (a job file) is refused, since one of the two
    /// values is silently ignored and it is rarely the one the author meant.
    public enum DuplicateKeyPolicy: Equatable, Sendable {
        /// The last value is kept, in the key's first place.
        case lastWins
        /// The document is refused: `parse` throws the first duplicate, with every later one in
        /// `JSONSyntaxError.moreDuplicateKeys`; each names the member's pointer, its line and
        /// column, and where the key first appeared.
        case reject
    }

    /// Parses RFC 8259 JSON (UTF-8, an optional BOM is skipped) in time linear in its size.
    ///
    /// Duplicate object keys keep the last value by default (`duplicateKeys`). A document past
    /// one of `limits` (size, nesting depth, members per object or elements per array) is
    /// refused with an error naming the cap.
    public static func parse(_ data: Data, limits: ParseLimits = .standard,
                             duplicateKeys: DuplicateKeyPolicy = .lastWins) throws(JSONSyntaxError) -> JSONValue {
        guard data.count <= limits.maxBytes else {
            throw JSONSyntaxError(line: 1, column: 1,
                                  message: "document of \(grouped(data.count)) bytes exceeds the size cap of \(grouped(limits.maxBytes)) bytes",
                                  exceedsCap: true)
        }
        var parser = JSONTextParser(bytes: [UInt8](data), limits: limits, rejectsDuplicateKeys: duplicateKeys == .reject)
        return try parser.parseDocument()
    }

    /// Parses JSON text.
    public static func parse(_ text: String, limits: ParseLimits = .standard,
                             duplicateKeys: DuplicateKeyPolicy = .lastWins) throws(JSONSyntaxError) -> JSONValue {
        try parse(Data(text.utf8), limits: limits, duplicateKeys: duplicateKeys)
    }
}

struct JSONTextParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    let limits: JSONValue.ParseLimits
    /// Whether repeated object keys are collected (`DuplicateKeyPolicy.reject`).
    let rejectsDuplicateKeys: Bool
    /// The member names and element indices from the root to the value being parsed, kept only
    /// when rejecting duplicates (a duplicate is noted, not thrown, so it needs its own pointer).
    var path: [PathComponent] = []
    /// The repeated keys found so far, at most `maxDuplicateKeys`.
    var duplicateKeys: [JSONSyntaxError] = []
    static let maxDuplicateKeys = 100

    /// A step of `path`: an index is kept as a number, so that tracking the path of every array
    /// element costs no string.
    enum PathComponent {
        case member(String)
        case element(Int)

        var text: String {
            switch self {
            case .member(let key): return key
            case .element(let index): return String(index)
            }
        }
    }

    init(bytes: [UInt8], limits: JSONValue.ParseLimits, rejectsDuplicateKeys: Bool = false) {
        self.bytes = bytes
        self.limits = limits
        self.rejectsDuplicateKeys = rejectsDuplicateKeys
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("expected a JSON value, found the end of the input") }
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw error("expected the end of the input, found \(describeCurrent())") }
        if var first = duplicateKeys.first {
            first.moreDuplicateKeys = Array(duplicateKeys.dropFirst())
            throw first
        }
        return value
    }

    /// The 1-based line and column (in Unicode scalars) of the byte at `position`.
    func lineAndColumn(of position: Int) -> (line: Int, column: Int) {
        let end = min(position, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        let prefix = Array(bytes[lineStart..<end])
        let column = (String(bytes: prefix, encoding: .utf8)?.unicodeScalars.count ?? prefix.count) + 1
        return (line, column)
    }

    func error(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        let (line, column) = lineAndColumn(of: position ?? index)
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    /// The error of a cap of `limits` hit at the current position.
    func capError(_ message: String) -> JSONSyntaxError {
        var error = error(message)
        error.exceedsCap = true
        return error
    }

    /// `error`, found inside the member or element `component` of the value being parsed.
    static func inside(_ error: JSONSyntaxError, component: String) -> JSONSyntaxError {
        var error = error
        error.pointer = JSONPointer.appending("", component) + error.pointer
        return error
    }

    /// Notes the key starting at `position`, which the current object already has at `first`.
    mutating func noteDuplicate(_ key: String, at position: Int, first: Int) {
        guard duplicateKeys.count < Self.maxDuplicateKeys else { return }
        let firstAt = lineAndColumn(of: first)
        let (line, column) = lineAndColumn(of: position)
        let place = firstAt.line == line ? "line \(line), column \(firstAt.column)" : "line \(firstAt.line)"
        var error = JSONSyntaxError(line: line, column: column, message: "duplicate key \"\(key)\" (first at \(place))")
        error.pointer = (path + [.member(key)]).reduce("") { JSONPointer.appending($0, $1.text) }
        error.isDuplicateKey = true
        duplicateKeys.append(error)
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "the end of the input" }
        let b = bytes[index]
        // A word (garbage such as YAML or an unquoted name) is shown whole, up to 20 characters.
        if Self.isWordByte(b) {
            var end = index
            while end < bytes.count, end - index < 20, Self.isWordByte(bytes[end]) { end += 1 }
            let word = String(decoding: bytes[index..<end], as: UTF8.self)
            return end < bytes.count && Self.isWordByte(bytes[end]) ? "'\(word)…'" : "'\(word)'"
        }
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        return String(format: "byte 0x%02X", b)
    }

    /// ASCII letters, digits and `_`.
    static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("expected a JSON value, found the end of the input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a JSON value, found \(describeCurrent())")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
        let utf8 = Array(literal.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw error("expected a JSON value, found \(describeCurrent())")
        }
        index += utf8.count
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > limits.maxDepth { throw capError("nesting deeper than the depth cap of \(limits.maxDepth) levels") }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // Where each key starts, to tell a repeated key where it first appeared.
        var keyPositions: [String: Int] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a member name in double quotes, found \(describeCurrent())")
            }
            let keyStart = index
            let key = try parseString()
            if rejectsDuplicateKeys {
                if let first = keyPositions[key] {
                    noteDuplicate(key, at: keyStart, first: first)
                } else {
                    keyPositions[key] = keyStart
                }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after member name \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            if members.count == limits.maxMembers {
                throw capError("object has more members than the cap of \(limits.maxMembers)")
            }
            if rejectsDuplicateKeys { path.append(.member(key)) }
            do {
                members.append((key, try parseValue()))
            } catch {
                throw Self.inside(error, component: key)
            }
            if rejectsDuplicateKeys { path.removeLast() }
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or '}', found the end of the input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(JSONObject(parsed: members)) }
            throw error("expected ',' or '}' in object, found \(describeCurrent())")
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            if items.count == limits.maxMembers {
                throw capError("array has more elements than the cap of \(limits.maxMembers)")
            }
            if rejectsDuplicateKeys { path.append(.element(items.count)) }
            do {
                items.append(try parseValue())
            } catch {
                throw Self.inside(error, component: String(items.count))
            }
            if rejectsDuplicateKeys { path.removeLast() }
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or ']', found the end of the input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']' in array, found \(describeCurrent())")
        }
    }
}
