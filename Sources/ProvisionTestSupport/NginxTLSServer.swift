import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real HTTPS server for tests: the system's nginx on 127.0.0.1 with HTTP/2 on (or, with
/// `http2: false`, HTTPS with HTTP/1.1 only), serving directories, with a certificate signed by a
/// throwaway CA made with the `openssl` tool; or, with `tls: false`, the same nginx speaking plain
/// HTTP/1.1. Static files are served as nginx serves them: with an ETag, and byte ranges (206 with
/// Content-Range) for a Range header.
///
/// Everything (keys, certificates, configuration, pid, logs, temporary files) lives in one
/// temporary directory; nginx runs in the foreground as one process of the current user
/// (`daemon off; master_process off;`), so it needs no privileges and `stop()` ends it. The
/// access log has one line per request: `<protocol> <connection serial> <status> <uri>`.
public final class NginxTLSServer: Sendable {
    /// The port nginx listens on.
    public let port: Int
    /// Whether it speaks HTTPS (else plain HTTP).
    public let tls: Bool
    /// `https://127.0.0.1:<port>` (`http://` without TLS), without a trailing slash.
    public var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    /// The directory holding everything the server uses.
    public let directory: URL
    /// The PEM file of the CA that signed the server's certificate.
    public var caFile: URL { directory.appendingPathComponent("ca.pem") }
    /// A directory holding the CA under its OpenSSL hash name (for SSL_CERT_DIR / CURLOPT_CAPATH).
    public var caDirectory: URL { directory.appendingPathComponent("ca-dir") }
    private var accessLog: URL { directory.appendingPathComponent("access.log") }
    private let process = Process()

    /// One line of the access log.
    public struct LoggedRequest: Equatable, Sendable {
        /// `HTTP/2.0`, `HTTP/1.1`, …
        public var proto: String
        /// nginx's serial number of the connection the request came on.
        public var connection: Int
        /// The response status.
        public var status: Int
        /// The request URI, query string included.
        public var uri: String
    }

    /// An error setting the server up, with the output of the tool that failed.
    public struct SetupError: Error, CustomStringConvertible {
        /// What failed, with the tool's output.
        public var description: String
    }

    /// Creates the CA and certificate (with `tls`), writes the configuration and starts nginx
    /// serving each `(prefix, directory)`: a request for `prefix + path` gets `directory/path`.
    /// With `http2` false an HTTPS server offers only HTTP/1.1 (ALPN `http/1.1`), as many tile
    /// hosts still do. `expires` (nginx's directive, such as `1h`) makes every answer carry
    /// `Cache-Control: max-age` and an `Expires` that far after its `Date`, as CDNs and tile
    /// hosts send them.
    public init(serving locations: [(prefix: String, directory: URL)], tls: Bool = true, http2: Bool = true,
                expires: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        port = try Self.freePort()
        self.tls = tls
        if tls { try makeCertificates() }
        try writeConfiguration(locations, http2: http2, expires: expires)
        process.executableURL = try Self.tool("nginx", in: ["/usr/sbin", "/usr/local/sbin", "/usr/bin"])
        process.arguments = ["-p", directory.path + "/", "-c", directory.appendingPathComponent("nginx.conf").path,
                             "-e", directory.appendingPathComponent("error.log").path,
                             "-g", "daemon off; master_process off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: touch("stderr.log"))
        try process.run()
        try waitUntilListening()
    }

    deinit {
        stop()
    }

    /// Stops nginx and deletes its directory.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every request logged so far, in order.
    public var requests: [LoggedRequest] {
        guard let text = try? String(contentsOf: accessLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3)
            guard parts.count == 4, let connection = Int(parts[1]), let status = Int(parts[2]) else { return nil }
            return LoggedRequest(proto: String(parts[0]), connection: connection, status: status, uri: String(parts[3]))
        }
    }

    // MARK: - Setting up

    private func makeCertificates() throws {
        let openssl = try Self.tool("openssl", in: ["/usr/bin", "/usr/local/bin"])
        let dir = directory.path
        try run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                          "-subj", "/CN=provision test CA",
                          "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem",
                          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        try run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
                          "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr"])
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n".utf8)
            .write(to: directory.appendingPathComponent("server.ext"))
        try run(openssl, ["x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
                          "-CAcreateserial", "-days", "2", "-extfile", "\(dir)/server.ext", "-out", "\(dir)/server.pem"])
        try FileManager.default.createDirectory(at: caDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: caFile, to: caDirectory.appendingPathComponent("ca.pem"))
        try run(openssl, ["rehash", caDirectory.path])
    }

    private func writeConfiguration(_ locations: [(prefix: String, directory: URL)], http2: Bool, expires: String?) throws {
        let dir = directory.path
        let served = locations.map { location in
            "        location \(location.prefix) { alias \(location.directory.standardizedFileURL.path)/; }"
        }.joined(separator: "\n")
        let listen = tls
            ? "        listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");\n        ssl_certificate \(dir)/server.pem;\n"
                + "        ssl_certificate_key \(dir)/server.key;"
            : "        listen 127.0.0.1:\(port);"
        let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
            .map { "    \($0)_temp_path \(dir)/tmp/\($0);" }.joined(separator: "\n")
        let configuration = """
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 512; }
            http {
                default_type application/octet-stream;
                types { application/json json; image/png png; application/x-protobuf pbf; }
                log_format provision '$server_protocol $connection $status $request_uri';
                access_log \(dir)/access.log provision;
            \(temp)
                keepalive_requests 100000;
                http2_max_concurrent_streams 128;
            \(expires.map { "    expires \($0);" } ?? "")
                server {
            \(listen)
            \(served)
                }
            }

            """
        try Data(configuration.utf8).write(to: directory.appendingPathComponent("nginx.conf"))
    }

    private func touch(_ name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data().write(to: url)
        return url
    }

    /// Waits (up to 10 s) until nginx accepts connections, or fails with its error log if it exits.
    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            guard process.isRunning else { break }
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: directory.appendingPathComponent("stderr.log"), encoding: .utf8)) ?? ""
        stop()
        throw SetupError(description: "nginx did not start on 127.0.0.1:\(port):\n\(stderr)\n\(log)")
    }

    private func run(_ tool: URL, _ arguments: [String]) throws {
        let child = Process()
        child.executableURL = tool
        child.arguments = arguments
        let output = try touch("tool-output.log")
        child.standardOutput = try FileHandle(forWritingTo: output)
        child.standardError = try FileHandle(forWritingTo: output)
        try child.run()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            throw SetupError(description: "\(tool.lastPathComponent) \(arguments.joined(separator: " ")) failed:\n\(text)")
        }
    }

    /// The first executable named `name` in `directories` or on PATH.
    static func tool(_ name: String, in directories: [String]) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map(String.init) ?? []
        for directory in directories + path {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw SetupError(description: "\(name) is not installed (.ci/run installs it: apt-get install nginx openssl)")
    }

    /// A port of 127.0.0.1 nothing listens on right now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw SetupError(description: "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
