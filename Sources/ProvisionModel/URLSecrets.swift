import Foundation

/// The URL policy: which parts of a URL are secrets, the canonical URL without them, the request
/// URL with them, and the redaction of every message, event and report that quotes a URL.
///
/// Why: a device looks a resource up under the URL the style names, while an app adds its key to
/// network requests only (MapLibre's `ResourceTransform`, Mapbox's access token), so the key is
/// never part of an offline look-up. A query parameter whose value is a `${VAR}` reference (or an
/// `access_token`, or a value known to be a secret), and the user info of a job's URL that carries
/// a password (`https://user:password@host/`), are therefore dropped from the canonical URL, and
/// the request URL gets them back for the same scheme, host and port. Documents are scrubbed the
/// same way before they are stored, because hosts echo the caller's key into the URLs they return
/// (Mapbox TileJSON `tiles`, MapTiler styles), and a compressed row hides it from a plain grep.
///
/// Messages are stricter than canonical URLs: they may quote a request URL, so besides the known
/// secret values they never show the value of any parameter named in `hiddenParameters` (a key
/// written literally in a style stays in its canonical URL, as the app looks it up that way, but
/// a message cannot tell a public key from a private one) nor a user-info password. An empty
/// `URLSecrets()` applies those rules where the job's secrets are not known.
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

    /// The parameter that always carries a personal token (Mapbox's convention): dropped from
    /// every canonical URL whatever its value.
    public static let tokenParameter = "access_token"
    /// Query parameter names (compared case-insensitively) whose values no message shows.
    public static let hiddenParameters: Set<String> = [tokenParameter, "key", "api_key", "apikey", "token"]
    /// What a hidden value is replaced with in messages.
    public static let placeholder = "REDACTED"

    /// Parameters to add to request URLs, in job order, once per origin and name.
    public private(set) var parameters: [Parameter] = []
    /// The user info (`user:password`) to add to request URLs, per origin (`scheme://host[:port]`).
    public private(set) var userInfo: [String: String] = [:]
    /// Every secret value (non-empty), longest first: none of them may be stored or shown.
    public private(set) var values: [String] = []

    /// No known secrets: canonical URLs still drop `${VAR}` parameters and `access_token`, and
    /// `redact` still hides what any URL's secrets look like (hidden parameters, passwords).
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
            if let credentials = Authority(url)?.credentials, secrets.userInfo[origin] == nil {
                secrets.userInfo[origin] = credentials.userInfo
                secrets.add(value: credentials.password)
            }
            for parameter in QueryParameters(url).parameters where secrets.role(of: parameter) == .secret {
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

    // MARK: - The rule

    /// What the policy does with a query parameter.
    enum Role: Equatable {
        /// A secret: never in a canonical URL, its value never shown (a `${VAR}` reference is
        /// shown as written: it names a variable, not its value).
        case secret
        /// Kept in canonical URLs, its value never shown in a message.
        case hidden
        /// Kept and shown.
        case plain
    }

    /// The role of `parameter`: the one rule canonical URLs, scrubbed documents and messages share.
    func role(of parameter: QueryParameters.Parameter) -> Role {
        let name = parameter.name.lowercased()
        if parameter.variable != nil || values.contains(parameter.value) { return .secret }
        guard parameter.hasEquals, !parameter.value.isEmpty else { return .plain }
        if name == Self.tokenParameter { return .secret }
        return Self.hiddenParameters.contains(name) ? .hidden : .plain
    }

    // MARK: - Canonical and request URLs

    /// `url` without its secrets: the query parameters whose role is `.secret` (`${VAR}` values,
    /// `access_token`, any parameter whose value is one of `values`) and user info whose password
    /// is one of `values` (the job's: a password written in a host's document stays, as a literal
    /// key does). Everything else is kept byte for byte.
    public func canonical(_ url: String) -> String {
        var query = QueryParameters(url)
        query.parameters.removeAll { role(of: $0) == .secret }
        let text = query.text
        guard let authority = Authority(text), let credentials = authority.credentials,
              values.contains(credentials.password) else { return text }
        return authority.replacingUserInfo(with: nil)
    }

    /// The URL to request for canonical `url`: the parameters and user info of its origin added
    /// (unless it has them already). Never stored or printed.
    public func requestURL(_ url: String) -> String {
        guard !parameters.isEmpty || !userInfo.isEmpty, let origin = Self.origin(of: url) else { return url }
        var query = QueryParameters(url)
        for parameter in parameters where parameter.origin == origin
            && !query.parameters.contains(where: { $0.name == parameter.name }) {
            query.parameters.append(.init(name: parameter.name, value: parameter.value))
        }
        let text = query.text
        guard let info = userInfo[origin], let authority = Authority(text), authority.userInfo == nil else { return text }
        return authority.replacingUserInfo(with: info)
    }

    /// `scheme://host[:port]` of `url`, lower-cased and without user info, or nil when it has no `://`.
    public static func origin(of url: String) -> String? {
        guard let authority = Authority(url) else { return nil }
        return (url[..<authority.start] + url[authority.hostStart..<authority.end]).lowercased()
    }

    // MARK: - Redaction

    /// `text` (a URL, or a message quoting URLs) with every secret hidden: the values of secret
    /// and hidden query parameters and user-info passwords replaced by `placeholder`, then every
    /// known secret value wherever it is.
    public func redact(_ text: String) -> String {
        var result = text
        if result.contains("=") { result = redactParameters(result) }
        if result.contains("@") { result = Self.redactPasswords(result) }
        return values.reduce(result) { $0.replacingOccurrences(of: $1, with: Self.placeholder) }
    }

    /// `failure` with `redact` applied to every message it carries.
    public func redacted(_ failure: FetchFailure) -> FetchFailure {
        failure.mapMessage(redact)
    }

    /// Whether `text` holds one of the secret values.
    public func leaks(in text: String) -> Bool {
        values.contains { text.contains($0) }
    }

    /// Whether `data` holds one of the secret values.
    public func leaks(in data: Data) -> Bool {
        values.contains { data.range(of: Data($0.utf8)) != nil }
    }

    /// Replaces the value of `name=value` after `?`, `&` or `;` when its role is not `.plain`
    /// (a `${VAR}` reference is kept: it is a name).
    private func redactParameters(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.count)
        var rest = Substring(text)
        while let separator = rest.firstIndex(where: { $0 == "?" || $0 == "&" || $0 == ";" }) {
            output += rest[...separator]
            rest = rest[rest.index(after: separator)...]
            guard let equals = rest.firstIndex(of: "="),
                  !rest[..<equals].contains(where: { "?&;/ \t\n#".contains($0) }) else { continue }
            let valueStart = rest.index(after: equals)
            let valueEnd = rest[valueStart...].firstIndex(where: { "&;# \t\n\"'<>),".contains($0) }) ?? rest.endIndex
            let parameter = QueryParameters.Parameter(name: String(rest[..<equals]), value: String(rest[valueStart..<valueEnd]))
            output += rest[...equals]
            if role(of: parameter) == .plain || parameter.variable != nil {
                rest = rest[valueStart...]  // scanned on: a shown value may hold a URL with its own query
            } else {
                output += Self.placeholder
                rest = rest[valueEnd...]
            }
        }
        output += rest
        return output
    }

    /// Replaces the password of every `scheme://user:password@host` in `text`.
    private static func redactPasswords(_ text: String) -> String {
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

    // MARK: - Documents

    /// `document` with the secrets of every URL inside it removed (see `canonical`), the rest of
    /// its bytes untouched.
    ///
    /// - Throws: `SecretLeak` when a secret value is still in the bytes afterwards (outside a
    ///   URL query or user info, e.g. in a path), so such a document is never stored.
    public func scrub(_ document: Data) throws(SecretLeak) -> Data {
        let text = String(decoding: document, as: UTF8.self)
        guard text.contains(Self.tokenParameter + "=") || text.contains("${") || leaks(in: document) else { return document }
        var output = ""
        output.reserveCapacity(text.utf8.count)
        // Each URL inside a JSON string runs between quotes (or spaces); one with a query or user
        // info is rewritten as `canonical` rewrites a URL.
        let delimiters: Set<Character> = ["\"", "'", " ", "\\", "\n"]
        var rest = Substring(text)
        while !rest.isEmpty {
            let end = rest.firstIndex(where: { delimiters.contains($0) }) ?? rest.endIndex
            let word = rest[..<end]
            output += word.contains("?") || word.contains("@") ? canonical(String(word)) : String(word)
            if end < rest.endIndex {
                output.append(rest[end])
                rest = rest[rest.index(after: end)...]
            } else {
                rest = rest[end...]
            }
        }
        let scrubbed = Data(output.utf8)
        if leaks(in: scrubbed) { throw SecretLeak() }
        return scrubbed
    }
}

extension FetchFailure {
    /// The failure with `transform` applied to the message it carries (every case that has one).
    public func mapMessage(_ transform: (String) -> String) -> FetchFailure {
        switch self {
        case .transport(let text): return .transport(transform(text))
        case .invalidBody(let text): return .invalidBody(transform(text))
        case .unusableDocument(let text): return .unusableDocument(transform(text))
        case .unsupported(let text): return .unsupported(transform(text))
        case .abandoned(let text): return .abandoned(transform(text))
        case .tls(let text): return .tls(transform(text))
        case .redirects(let text): return .redirects(transform(text))
        case .changed(let text): return .changed(transform(text))
        case .status, .refused, .notFound: return self
        }
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

/// The authority of a URL (`scheme://[user[:password]@]host[:port]`), located in its text.
struct Authority {
    let url: String
    /// Where the user info starts (right after `://`).
    let start: String.Index
    /// Where the host starts (after `@`, or `start`).
    let hostStart: String.Index
    /// Where the authority ends (`/`, `?`, `#` or the end).
    let end: String.Index

    init?(_ url: String) {
        guard let scheme = url.range(of: "://") else { return nil }
        self.url = url
        start = scheme.upperBound
        end = url[start...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
        hostStart = url[start..<end].lastIndex(of: "@").map { url.index(after: $0) } ?? start
    }

    /// `user[:password]`, when the URL has user info.
    var userInfo: String? {
        hostStart == start ? nil : String(url[start..<url.index(before: hostStart)])
    }

    /// The user info and its password, when it has one (a user name alone is no secret).
    var credentials: (userInfo: String, password: String)? {
        guard let info = userInfo, let colon = info.firstIndex(of: ":") else { return nil }
        let password = String(info[info.index(after: colon)...])
        return password.isEmpty ? nil : (info, password)
    }

    /// The URL with its user info replaced by `info` (nil: none).
    func replacingUserInfo(with info: String?) -> String {
        String(url[..<start]) + (info.map { $0 + "@" } ?? "") + url[hostStart...]
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
