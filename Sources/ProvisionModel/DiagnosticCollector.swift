import Foundation
import ProvisionFoundation

/// Gathers the problems found in one file, with helpers that check a JSON value's type
/// and range and report "expected …, found …" when it does not fit.
///
/// Why collect instead of throw: a user fixing a job file wants every problem at once,
/// so each check reports and returns nil, and the caller carries on with the next key.
struct DiagnosticCollector {
    /// The file the problems are in, as the user named it.
    let file: String
    /// The problems, in the order they were found.
    private(set) var diagnostics: [Diagnostic] = []

    init(file: String) {
        self.file = file
    }

    /// Records a problem at `pointer`.
    mutating func report(_ pointer: String, _ message: String) {
        diagnostics.append(Diagnostic(file: file, pointer: pointer, message: message))
    }

    /// Records a file the job names that does not exist (`Diagnostic.isMissingFile`).
    mutating func reportMissingFile(_ pointer: String, _ message: String) {
        var diagnostic = Diagnostic(file: file, pointer: pointer, message: message)
        diagnostic.isMissingFile = true
        diagnostics.append(diagnostic)
    }

    /// Records problems found in another file (a GeoJSON file a job refers to).
    mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
    }

    /// The object payload of `value`, or nil after reporting what was found instead.
    mutating func object(_ value: JSONValue, at pointer: String, expected: String = "an object") -> JSONObject? {
        if let object = value.objectValue { return object }
        report(pointer, "expected \(expected), found \(Self.found(value))")
        return nil
    }

    /// The array payload of `value`, or nil after reporting.
    mutating func array(_ value: JSONValue, at pointer: String, expected: String = "an array") -> [JSONValue]? {
        if let array = value.arrayValue { return array }
        report(pointer, "expected \(expected), found \(Self.found(value))")
        return nil
    }

    /// The string payload of `value`, or nil after reporting; an empty string is reported when
    /// `nonEmpty` is set.
    mutating func string(_ value: JSONValue, at pointer: String, nonEmpty: Bool = false,
                         expected: String = "a string") -> String? {
        guard let string = value.stringValue else {
            report(pointer, "expected \(expected), found \(Self.found(value))")
            return nil
        }
        if nonEmpty && string.isEmpty {
            let what = expected == "a string" ? "a non-empty string" : expected
            report(pointer, "expected \(what), found an empty string")
            return nil
        }
        return string
    }

    /// An integer within `range`, or nil after reporting `expected an integer from a to b, found x`.
    mutating func integer(_ value: JSONValue, at pointer: String, in range: ClosedRange<Int>) -> Int? {
        if let int = value.intValue, range.contains(int) { return int }
        report(pointer,
               "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(Self.found(value))")
        return nil
    }

    /// An integer greater than zero, or nil after reporting.
    mutating func positiveInteger(_ value: JSONValue, at pointer: String) -> Int? {
        if let int = value.intValue, int > 0 { return int }
        report(pointer, "expected a positive integer, found \(Self.found(value))")
        return nil
    }

    /// A finite number, or nil after reporting.
    mutating func number(_ value: JSONValue, at pointer: String, expected: String = "a number") -> Double? {
        if let double = value.doubleValue, double.isFinite { return double }
        report(pointer, "expected \(expected), found \(Self.found(value))")
        return nil
    }

    /// Reports members of `object` not in `allowed` (with a did-you-mean suggestion or the list of
    /// allowed keys) and members of `required` that are missing.
    ///
    /// A missing required key is not reported separately when an unknown key was taken for a
    /// misspelling of it: `zooom` gives one diagnostic, not two.
    mutating func checkKeys(_ object: JSONObject, at pointer: String, allowed: [String], required: [String]) {
        var suggested: Set<String> = []
        for key in object.keys where !allowed.contains(key) {
            if let suggestion = Suggestions.closest(to: key, among: allowed) {
                suggested.insert(suggestion)
                report(JSONPointer.appending(pointer, key), "unknown key \"\(key)\"; did you mean \"\(suggestion)\"?")
            } else {
                let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
                report(JSONPointer.appending(pointer, key), "unknown key \"\(key)\"; expected one of \(list)")
            }
        }
        for key in required where object[key] == nil && !suggested.contains(key) {
            report(pointer, "missing required key \"\(key)\"")
        }
    }

    /// A short description of a value for "found …": the value itself for scalars.
    static func found(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return JSONValue.format(double: d)
        case .string(let s): return s.isEmpty ? "an empty string" : "the string \(quoted(s))"
        case .array(let a):
            switch a.count {
            case 0: return "an empty array"
            case 1: return "an array of 1 item"
            default: return "an array of \(a.count) items"
            }
        case .object: return "an object"
        }
    }

    /// `s` in double quotes, shortened to 60 characters, with what a URL's secrets look like
    /// hidden (`URLSecrets.redact`): a job's URL may carry a password or a literal token.
    static func quoted(_ s: String) -> String {
        let s = URLSecrets().redact(s)
        let short = s.count > 60 ? String(s.prefix(57)) + "..." : s
        return JSONValue.string(short).serialized()
    }
}
