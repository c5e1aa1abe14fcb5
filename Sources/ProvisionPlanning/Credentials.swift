import ProvisionModel

/// The keys a job's requests carry, from the environment: `${VAR}` query parameters of its URLs
/// and the Mapbox access token. Canonical URLs never hold them; request URLs always do.
public struct Credentials: Sendable {
    /// The environment variable that holds the Mapbox token when the job names none.
    public static let mapboxTokenVariable = "MAPBOX_ACCESS_TOKEN"

    /// The `${VAR}` parameters of the job's URLs, and every secret value.
    public let secrets: URLSecrets
    /// The Mapbox token, when the variable that holds it is set and not empty.
    public let mapboxToken: String?
    /// The variable the Mapbox token comes from: the `${VAR}` of an `access_token` parameter on a
    /// `mapbox://` URL of the job, else `MAPBOX_ACCESS_TOKEN`.
    public let mapboxVariable: String

    /// The credentials of `job`'s style and tileset URLs, read from `environment`.
    ///
    /// - Throws: `CredentialsError` naming each style pack or region whose URL names a variable
    ///   that is unset or empty, or that uses `mapbox://` without a token: before any request.
    public static func resolve(job: Job, environment: [String: String]) throws(CredentialsError) -> Credentials {
        let uses = jobURLs(job)
        let mapboxVariable = uses.lazy.filter { MapboxURL.isMapboxURL($0.url) }
            .compactMap { use in
                URLSecrets.variable(ofParameter: URLSecrets.tokenParameter, in: use.url)
            }.first ?? mapboxTokenVariable
        let token = environment[mapboxVariable].flatMap { $0.isEmpty ? nil : $0 }
        let (secrets, missing) = URLSecrets.from(urls: uses.map(\.url), environment: environment,
                                                 extraValues: token.map { [$0] } ?? [])
        let credentials = Credentials(secrets: secrets, mapboxToken: token, mapboxVariable: mapboxVariable)
        var problems: [String] = []
        for variable in missing {
            let users = uses.filter { URLSecrets.variables(in: $0.url).contains(variable) }.map(\.subject)
            problems.append("\(list(users)) \(users.count == 1 ? "names" : "name") ${\(variable)}, which is "
                            + "\(environment[variable] == nil ? "not set" : "empty"): set it to the key before running "
                            + "(export \(variable)=…)")
        }
        for use in uses where MapboxURL.isMapboxURL(use.url) && token == nil
            && !missing.contains(mapboxVariable) {
            problems.append(credentials.missingTokenMessage(subject: use.subject))
            break
        }
        if !problems.isEmpty { throw CredentialsError(problems: problems) }
        return credentials
    }

    /// `job` with every style and tileset URL in its canonical form (secret parameters dropped).
    public func canonical(_ job: Job) -> Job {
        var job = job
        for i in job.stylePacks.indices { job.stylePacks[i].style = secrets.canonical(job.stylePacks[i].style) }
        for i in job.regions.indices { job.regions[i].tilesets = job.regions[i].tilesets.map(secrets.canonical) }
        // A search pack names a tileset as the region writes it: canonical likewise, so the two still match.
        for i in job.searchPacks.indices {
            job.searchPacks[i].sources = job.searchPacks[i].sources.map { $0.contains("://") ? secrets.canonical($0) : $0 }
        }
        return job
    }

    /// The URL requested for canonical `url`: `mapbox://` mapped to the API with the token, other
    /// URLs with their origin's secret parameters; nil when it is requested as it is (or is a
    /// `mapbox://` URL and there is no token). Never stored or printed.
    public func requestURL(_ url: String) -> String? {
        if MapboxURL.isMapboxURL(url) {
            return MapboxURL.networkURL(for: url, accessToken: mapboxToken).map(secrets.requestURL)
        }
        let request = secrets.requestURL(url)
        return request == url ? nil : request
    }

    /// Checks that the URLs a style pack or region needs can be requested: a `mapbox://` URL
    /// needs the token.
    ///
    /// - Throws: `CredentialsError` naming `subject` and how to set the token.
    public func check(_ urls: [String], subject: String) throws(CredentialsError) {
        guard mapboxToken == nil, urls.contains(where: MapboxURL.isMapboxURL) else { return }
        throw CredentialsError(problems: [missingTokenMessage(subject: subject)])
    }

    private func missingTokenMessage(subject: String) -> String {
        "\(subject) uses mapbox:// URLs, which need a Mapbox access token, and \(mapboxVariable) is not set "
            + "(or empty): export \(mapboxVariable)=pk.… (a token with the styles:read, fonts:read and "
            + "tilesets:read scopes); it is sent to the API only, never stored"
    }

    private static func list(_ subjects: [String]) -> String {
        subjects.count <= 1 ? subjects.joined() : subjects.dropLast().joined(separator: ", ") + " and " + (subjects.last ?? "")
    }

    /// The style and tileset URLs of `job`, each with the style pack or region it belongs to.
    static func jobURLs(_ job: Job) -> [(url: String, subject: String)] {
        job.stylePacks.map { ($0.style, "style pack '\($0.id)'") }
            + job.regions.flatMap { region in region.tilesets.map { ($0, "region '\(region.id)'") } }
    }
}

/// Credentials a job needs are missing: exit 64 before any request.
public struct CredentialsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One sentence per problem, naming the style pack or region and the variable.
    public var problems: [String]

    /// The joined sentences.
    public var description: String { problems.joined(separator: "\n") }
}
