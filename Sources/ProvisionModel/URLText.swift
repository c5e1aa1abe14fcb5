/// Checks on URL strings in a job file.
///
/// `${NAME}` references are allowed anywhere in a URL and kept as written: they are expanded
/// from the environment at fetch time, so secrets never enter the job model or the store.
enum URLText {
    /// The schemes a canonical URL may have.
    static let remoteSchemes = ["http://", "https://", "mapbox://"]

    /// Whether `text` starts with http://, https:// or mapbox:// and has something after it
    /// (or, for origin prefixes, is exactly one of those schemes).
    static func hasRemoteScheme(_ text: String, allowingSchemeOnly: Bool = false) -> Bool {
        remoteSchemes.contains { text.hasPrefix($0) && (allowingSchemeOnly || text.count > $0.count) }
    }

    /// What is wrong with `text` as a URL (whitespace or a malformed `${NAME}`), or nil.
    static func problem(in text: String) -> String? {
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) {
            return "expected a URL without spaces or control characters"
        }
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            let after = rest[start.upperBound...]
            guard let end = after.firstIndex(of: "}") else {
                return "expected \"}\" to close a ${NAME} reference"
            }
            let name = after[..<end]
            if !isVariableName(name) {
                return "expected a ${NAME} reference with NAME made of letters, digits and '_', not starting "
                    + "with a digit"
            }
            rest = after[after.index(after: end)...]
        }
        return nil
    }

    /// Whether `name` matches `[A-Za-z_][A-Za-z0-9_]*`.
    static func isVariableName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        func isLetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) || s == "_" }
        return isLetter(first) && name.unicodeScalars.allSatisfy { isLetter($0) || ("0"..."9").contains($0) }
    }
}
