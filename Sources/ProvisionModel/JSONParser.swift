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
    /// in ("" for the root value).
    public var pointer: String = ""
    /// Whether the document is well-formed as far as read but past one of `JSONValue.ParseLimits`.
    public var exceedsCap = false

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

    /// Parses RFC 8259 JSON (UTF-8, an optional BOM is skipped) in time linear in its size.
    ///
    /// Duplicate object keys keep the last value, as most parsers do. A document past one of
    /// `limits` (size, nesting depth, members per object or elements per array) is refused with
    /// an error naming the cap.
    public static func parse(_ data: Data, limits: ParseLimits = .standard) throws(JSONSyntaxError) -> JSONValue {
        guard data.count <= limits.maxBytes else {
            throw JSONSyntaxError(line: 1, column: 1,
                                  message: "document of \(data.count) bytes exceeds the size cap of \(limits.maxBytes) bytes",
                                  exceedsCap: true)
        }
        var parser = JSONTextParser(bytes: [UInt8](data), limits: limits)
        return try parser.parseDocument()
    }

    /// Parses JSON text.
    public static func parse(_ text: String, limits: ParseLimits = .standard) throws(JSONSyntaxError) -> JSONValue {
        try parse(Data(text.utf8), limits: limits)
    }
}

private struct JSONTextParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    let limits: JSONValue.ParseLimits

    init(bytes: [UInt8], limits: JSONValue.ParseLimits) {
        self.bytes = bytes
        self.limits = limits
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("expected a JSON value, found the end of the input") }
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw error("expected the end of the input, found \(describeCurrent())") }
        return value
    }

    func error(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        let end = min(position ?? index, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        let prefix = Array(bytes[lineStart..<end])
        let column = (String(bytes: prefix, encoding: .utf8)?.unicodeScalars.count ?? prefix.count) + 1
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
        let escaped = component.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        error.pointer = "/" + escaped + error.pointer
        return error
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "the end of the input" }
        let b = bytes[index]
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        return String(format: "byte 0x%02X", b)
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
            throw error("expected '\(literal)', found \(describeCurrent())")
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
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after member name \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            if members.count == limits.maxMembers {
                throw capError("object has more members than the cap of \(limits.maxMembers)")
            }
            do {
                members.append((key, try parseValue()))
            } catch {
                throw Self.inside(error, component: key)
            }
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
            do {
                items.append(try parseValue())
            } catch {
                throw Self.inside(error, component: String(items.count))
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or ']', found the end of the input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']' in array, found \(describeCurrent())")
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        // Fast path: a string without escapes is its bytes, validated as UTF-8.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let s = String(validating: bytes[index..<end], as: UTF8.self) else {
                throw error("string is not valid UTF-8", at: start)
            }
            index = end + 1
            return s
        }
        var buffer: [UInt8] = Array(bytes[index..<end])
        index = end
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                guard let s = String(bytes: buffer, encoding: .utf8) else {
                    throw error("string is not valid UTF-8", at: start)
                }
                return s
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                              bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw error("unpaired UTF-16 surrogate in \\u escape")
                    }
                    guard let scalar = UnicodeScalar(code) else { throw error("invalid \\u escape") }
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw error("invalid escape '\\\(Character(UnicodeScalar(e)))'")
                }
            default:
                if b < 0x20 { throw error("control character in string (escape it)") }
                buffer.append(b)
                index += 1
            }
        }
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("expected 4 hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("expected a hex digit, found \(describeCurrent())")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        guard isDigit(index) else { throw error("expected a digit, found \(describeCurrent())") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw error("leading zeros are not allowed in numbers") }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard isDigit(index) else { throw error("expected a digit after '.', found \(describeCurrent())") }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard isDigit(index) else { throw error("expected a digit in exponent, found \(describeCurrent())") }
            while isDigit(index) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let i = Int(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw error("number \(text) is out of range", at: start) }
        return .double(d)
    }
}
