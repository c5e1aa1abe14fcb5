import Foundation

/// Where HTTPS certificates are checked against: libcurl's system CA store, or the file and
/// directory the environment names, chosen as the curl command-line tool chooses them.
///
/// libcurl itself reads none of these variables (the curl tool does), so without this a user
/// behind a corporate proxy that re-signs HTTPS could not make provision trust the proxy's CA.
/// The first set of `CURL_CA_BUNDLE` (a PEM file), `SSL_CERT_DIR` (a directory of hashed
/// certificates, as `openssl rehash` makes) and `SSL_CERT_FILE` (a PEM file) is used, the others
/// ignored, as in curl's tool_operate.c; an empty variable counts as unset. The directory also
/// checks an HTTPS proxy's own certificate (CURLOPT_PROXY_CAPATH), as curl does. libcurl's
/// built-in CA directory stays trusted beside a named file unless `SSL_CERT_DIR` replaces it.
public struct TLSTrust: Equatable, Sendable {
    /// The PEM file of CA certificates (CURLOPT_CAINFO); nil for libcurl's built-in bundle.
    public var caFile: String?
    /// The directory of hashed CA certificates (CURLOPT_CAPATH); nil for libcurl's built-in one.
    public var caDirectory: String?
    /// The environment variable `caFile` came from, for messages.
    public var caFileVariable: String?

    /// libcurl's built-in CA bundle and directory.
    public static let system = TLSTrust(caFile: nil, caDirectory: nil)

    /// Trusts the given file and directory (nil for libcurl's built-in ones).
    public init(caFile: String?, caDirectory: String?, caFileVariable: String? = nil) {
        self.caFile = caFile
        self.caDirectory = caDirectory
        self.caFileVariable = caFile == nil ? nil : caFileVariable
    }

    /// The trust the curl tool would use with this environment.
    public init(environment: [String: String]) {
        func value(_ name: String) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        if let bundle = value("CURL_CA_BUNDLE") {
            self.init(caFile: bundle, caDirectory: nil, caFileVariable: "CURL_CA_BUNDLE")
        } else if let directory = value("SSL_CERT_DIR") {
            self.init(caFile: nil, caDirectory: directory)
        } else {
            self.init(caFile: value("SSL_CERT_FILE"), caDirectory: nil, caFileVariable: "SSL_CERT_FILE")
        }
    }
}
