import Foundation

/// The secrets a job's URLs carry, and the rules that keep them out of everything stored.
///
/// Why: a device looks a resource up under the URL the style names, while an app adds its key to
/// network requests only (MapLibre's `ResourceTransform`, Mapbox's access token), so the key is
/// never part of an offline look-up. A query parameter whose value is a `${VAR}` reference (or an
/// `access_token`) is therefore dropped from the canonical URL, and the request URL gets it back
/// for the same scheme, host and port. Documents are scrubbed the same way before they are stored,
/// because hosts echo the caller's key into the URLs they return (Mapbox TileJSON `tiles`,
/// MapTiler styles), and a compressed row hides it from a plain grep of the file.
public struct URLSecrets: Sendable, Equatable {
    /// One query parameter the request URLs of an origin must carry.
    public struct Parameter: Sendable, Equatable {
        /// `scheme://host[:port]`, lower-cased: the origin the parameter is added for.
        public var origin: String
        /// The parameter name, as written.
        public var name: String
        /// The environment variable the value comes from (nil for a literal `access_token`).
        public var variable: String?
        /// The value: expanded from the environment, or the literal.
        public var value: String
    }

    /// Parameters to add to request URLs, in job order, once per origin and name.
    public private(set) var parameters: [Parameter] = []
    /// Every secret value (non-empty), longest first: none of them may be stored.
    public private(set) var values: [String] = []

    /// No secrets.
    public init() {}

    /// The secrets of `urls` (the job's style and tileset URLs), with `${VAR}` values taken from
    /// `environment`, plus `extraValues` (the Mapbox token) that must never be stored.
    ///
    /// - Returns: the secrets, and the variables that are unset or empty (in order of first use).
    public static func from(urls: [String], environment: [String: String],
                            extraValues: [String] = []) -> (secrets: URLSecrets, missing: [String]) {
        var secrets = URLSecrets()
        var missing: [String] = []
        for url in urls {
            guard let origin = origin(of: url) else { continue }
            for parameter in QueryParameters(url).parameters where parameter.isSecret {
                let value: String
                if let variable = parameter.variable {
                    guard let expanded = environment[variable], !expanded.isEmpty else {
                        if !missing.contains(variable) { missing.append(variable) }
                        continue
                    }
                    value = expanded
                } else {
                    value = parameter.value
                }
                if !secrets.parameters.contains(where: { $0.origin == origin && $0.name == parameter.name }) {
                    secrets.parameters.append(Parameter(origin: origin, name: parameter.name, variable: parameter.variable,
                                                        value: value))
                }
                secrets.add(value: value)
            }
        }
        for value in extraValues { secrets.add(value: value) }
        return (secrets, missing)
    }

    private mutating func add(value: String) {
        guard !value.isEmpty, !values.contains(value) else { return }
        values.append(value)
        values.sort { $0.count > $1.count }
    }

    /// The variables (`${VAR}`) the query of `url` names, in order.
    public static func variables(in url: String) -> [String] {
        QueryParameters(url).parameters.compactMap(\.variable)
    }

    /// The variable of a `name=${VAR}` parameter of `url` (`name` compared case-insensitively).
    public static func variable(ofParameter name: String, in url: String) -> String? {
        QueryParameters(url).parameters.first { $0.name.lowercased() == name.lowercased() }?.variable
    }

    /// `url` without its secret query parameters: `${VAR}` values, `access_token`, and any
    /// parameter whose value is one of `values`. Everything else is kept byte for byte.
    public func canonical(_ url: String) -> String {
        var query = QueryParameters(url)
        query.parameters.removeAll { $0.isSecret || values.contains($0.value) }
        return query.text
    }

    /// The URL to request for canonical `url`: the parameters of its origin appended (unless it
    /// has them already). Never stored or printed.
    public func requestURL(_ url: String) -> String {
        guard !parameters.isEmpty, let origin = Self.origin(of: url) else { return url }
        var query = QueryParameters(url)
        for parameter in parameters where parameter.origin == origin
            && !query.parameters.contains(where: { $0.name == parameter.name }) {
            query.parameters.append(.init(name: parameter.name, value: parameter.value))
        }
        return query.text
    }

    /// `text` with every secret value replaced by `REDACTED`, for messages.
    public func redact(_ text: String) -> String {
        values.reduce(text) { $0.replacingOccurrences(of: $1, with: "REDACTED") }
    }

    /// Whether `text` holds one of the secret values.
    public func leaks(in text: String) -> Bool {
        values.contains { text.contains($0) }
    }

    /// Whether `data` holds one of the secret values.
    public func leaks(in data: Data) -> Bool {
        values.contains { data.range(of: Data($0.utf8)) != nil }
    }

    /// `document` with the secret query parameters of every URL inside it removed (see
    /// `canonical`), the rest of its bytes untouched.
    ///
    /// - Throws: `SecretLeak` when a secret value is still in the bytes afterwards (outside a
    ///   URL query, e.g. in a path), so such a document is never stored.
    public func scrub(_ document: Data) throws(SecretLeak) -> Data {
        let text = String(decoding: document, as: UTF8.self)
        guard text.contains("access_token=") || text.contains("${") || leaks(in: document) else { return document }
        var output = ""
        output.reserveCapacity(text.utf8.count)
        // Each URL inside a JSON string runs up to its closing quote; its query is rewritten as
        // `canonical` rewrites a URL.
        var rest = Substring(text)
        while let question = rest.firstIndex(of: "?") {
            let end = rest[question...].firstIndex(where: { $0 == "\"" || $0 == "'" || $0 == " " || $0 == "\\" || $0 == "\n" })
                ?? rest.endIndex
            let start = rest[..<question].lastIndex(where: { $0 == "\"" || $0 == "'" || $0 == " " || $0 == "\n" })
                .map { rest.index(after: $0) } ?? rest.startIndex
            output += rest[..<start]
            output += canonical(String(rest[start..<end]))
            rest = rest[end...]
        }
        output += rest
        let scrubbed = Data(output.utf8)
        if leaks(in: scrubbed) { throw SecretLeak() }
        return scrubbed
    }

    /// `scheme://authority` of `url`, lower-cased, or nil when it has no `://`.
    public static func origin(of url: String) -> String? {
        guard let scheme = url.range(of: "://") else { return nil }
        let afterScheme = url[scheme.upperBound...]
        let end = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        return (url[..<scheme.upperBound] + afterScheme[..<end]).lowercased()
    }
}

/// A document still holds a secret after its URLs were scrubbed.
public struct SecretLeak: Error, Equatable, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// The message; it never quotes the secret.
    public var description: String {
        "the document holds an access token or key outside a URL query parameter, so it cannot be stored without it"
    }
}

/// The query of a URL split into parameters, to drop or add some and join it back unchanged otherwise.
struct QueryParameters {
    struct Parameter {
        var name: String
        /// The text after `=` (the whole parameter when it has no `=`).
        var value: String
        var hasEquals = true

        init(name: String, value: String, hasEquals: Bool = true) {
            self.name = name
            self.value = value
            self.hasEquals = hasEquals
        }

        /// The variable of a `${VAR}` value.
        var variable: String? {
            guard value.hasPrefix("${"), value.hasSuffix("}"), value.count > 3 else { return nil }
            let name = value.dropFirst(2).dropLast()
            return URLText.isVariableName(name) ? String(name) : nil
        }

        /// A parameter that never goes into a canonical URL.
        var isSecret: Bool {
            variable != nil || (name.lowercased() == "access_token" && !value.isEmpty)
        }

        var text: String { hasEquals ? name + "=" + value : name }
    }

    /// Everything before the `?` (the whole URL when it has none).
    var base: Substring
    var parameters: [Parameter]
    /// `#…`, kept at the end.
    var fragment: Substring

    init(_ url: String) {
        let text = Substring(url)
        let hash = text.firstIndex(of: "#")
        let beforeFragment = hash.map { text[..<$0] } ?? text
        fragment = hash.map { text[$0...] } ?? ""
        guard let question = beforeFragment.firstIndex(of: "?") else {
            base = beforeFragment
            parameters = []
            return
        }
        base = beforeFragment[..<question]
        parameters = beforeFragment[beforeFragment.index(after: question)...]
            .split(separator: "&", omittingEmptySubsequences: false)
            .map { part in
                if let equals = part.firstIndex(of: "=") {
                    return Parameter(name: String(part[..<equals]), value: String(part[part.index(after: equals)...]))
                }
                return Parameter(name: String(part), value: String(part), hasEquals: false)
            }
    }

    var text: String {
        let query = parameters.map(\.text).joined(separator: "&")
        return String(base) + (parameters.isEmpty ? "" : "?" + query) + fragment
    }
}
