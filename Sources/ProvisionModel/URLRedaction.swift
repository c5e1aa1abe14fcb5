import Foundation

/// Hides secrets in URLs and in messages that may quote a URL.
///
/// Why: access tokens travel in query strings (`?access_token=`, `?key=`) and in user info
/// (`https://user:password@host/`). Failure messages, statistics and reports are printed and
/// saved, so every URL that reaches one goes through `redact` first. A value that is a plain
/// `${NAME}` reference is kept: it names a variable, not its secret value.
public enum URLRedaction {
    /// Query parameter names whose values are hidden, compared case-insensitively.
    public static let secretParameters: Set<String> = ["access_token", "key", "api_key", "apikey", "token"]
    /// What a hidden value is replaced with.
    public static let placeholder = "REDACTED"

    /// `text` with the values of secret query parameters and user-info passwords replaced by
    /// `placeholder`. Works on a bare URL or on a message containing URLs.
    public static func redact(_ text: String) -> String {
        guard text.contains("=") || text.contains("@") else { return text }
        var result = redactParameters(text)
        result = redactUserInfo(result)
        return result
    }

    /// Replaces `name=value` after `?`, `&` or `;` when `name` is a secret parameter.
    private static func redactParameters(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.count)
        var rest = Substring(text)
        while let separator = rest.firstIndex(where: { $0 == "?" || $0 == "&" || $0 == ";" }) {
            output += rest[...separator]
            rest = rest[rest.index(after: separator)...]
            guard let equals = rest.firstIndex(of: "="),
                  !rest[..<equals].contains(where: { "?&;/ \t\n#".contains($0) }) else { continue }
            let name = rest[..<equals].lowercased()
            let valueStart = rest.index(after: equals)
            let valueEnd = rest[valueStart...].firstIndex(where: { "&;# \t\n\"'<>".contains($0) }) ?? rest.endIndex
            let value = rest[valueStart..<valueEnd]
            output += rest[...equals]
            if secretParameters.contains(name) && !value.isEmpty && !isVariableReference(value) {
                output += placeholder
            } else {
                output += value
            }
            rest = rest[valueEnd...]
        }
        output += rest
        return output
    }

    /// Replaces the password of `scheme://user:password@host`.
    private static func redactUserInfo(_ text: String) -> String {
        var output = ""
        var rest = Substring(text)
        while let scheme = rest.range(of: "://") {
            output += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?# \t\n\"'<>".contains($0) }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                output += authority[...colon] + placeholder + authority[at...]
            } else {
                output += authority
            }
            rest = rest[authorityEnd...]
        }
        output += rest
        return output
    }

    private static func isVariableReference(_ value: Substring) -> Bool {
        guard value.hasPrefix("${"), value.hasSuffix("}"), value.count > 3 else { return false }
        return value.dropFirst(2).dropLast().allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }
}

extension FetchFailure {
    /// The failure with every message it carries passed through `URLRedaction.redact`.
    public var redacted: FetchFailure {
        switch self {
        case .transport(let text): return .transport(URLRedaction.redact(text))
        case .invalidBody(let text): return .invalidBody(URLRedaction.redact(text))
        case .unusableDocument(let text): return .unusableDocument(URLRedaction.redact(text))
        case .unsupported(let text): return .unsupported(URLRedaction.redact(text))
        case .abandoned(let text): return .abandoned(URLRedaction.redact(text))
        case .tls(let text): return .tls(URLRedaction.redact(text))
        case .redirects(let text): return .redirects(URLRedaction.redact(text))
        case .changed(let text): return .changed(URLRedaction.redact(text))
        case .status, .refused, .notFound: return self
        }
    }
}

extension URLSecrets {
    /// `failure` with every secret value in its messages replaced, after `FetchFailure.redacted`.
    public func redacted(_ failure: FetchFailure) -> FetchFailure {
        switch failure.redacted {
        case .transport(let text): return .transport(redact(text))
        case .invalidBody(let text): return .invalidBody(redact(text))
        case .unusableDocument(let text): return .unusableDocument(redact(text))
        case .unsupported(let text): return .unsupported(redact(text))
        case .abandoned(let text): return .abandoned(redact(text))
        case .changed(let text): return .changed(redact(text))
        case let other: return other
        }
    }
}
