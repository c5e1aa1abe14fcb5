import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on 127.0.0.1 for tests: static files plus named, misbehaving routes.
///
/// Each connection gets its own thread and is kept alive between requests, as a real server
/// would, so clients exercise connection reuse. Start it in a test, point requests at
/// `baseURL`, assert on `requests`, and `stop()` it.
public final class LoopbackHTTPServer: Sendable {
    /// What a route does with a request.
    public indirect enum Behaviour: Sendable {
        /// Answers with a status, extra headers and a body (Content-Length is added).
        case respond(status: Int, headers: [Header], body: Data)
        /// Sends a Content-Length larger than the body, sends the body, then closes the connection.
        case truncated(body: Data, claimedLength: Int)
        /// Sends the headers with the full Content-Length and half the body, then closes the connection.
        case closeMidBody(body: Data)
        /// Sends the headers with the full Content-Length, then sends nothing until the client gives up.
        case stall(body: Data)
        /// Waits, then behaves as `then`.
        case delay(TimeInterval, then: Behaviour)
        /// The n-th request to the route gets the n-th behaviour; the last one repeats.
        case sequence([Behaviour])
        /// Sends 200 headers with the full Content-Length, then the body in `chunks` pieces,
        /// `interval` seconds apart: a slow but complete response.
        case drip(body: Data, chunks: Int, interval: TimeInterval)
        /// Resets the connection (TCP RST) before sending anything.
        case reset
        /// Sends the headers with the full Content-Length and half the body, then resets the connection.
        case resetMidBody(body: Data)

        /// A status with a text body.
        public static func status(_ code: Int, body: String = "", headers: [Header] = []) -> Behaviour {
            .respond(status: code, headers: headers, body: Data(body.utf8))
        }

        /// 200 with a body.
        public static func ok(_ body: Data, contentType: String = "application/octet-stream",
                              headers: [Header] = []) -> Behaviour {
            .respond(status: 200, headers: [Header("Content-Type", contentType)] + headers, body: body)
        }

        /// 200 with an HTML page: the captive-portal or CDN error page that must never be stored.
        public static func html(_ text: String = "<!DOCTYPE html><html><body>Oops</body></html>") -> Behaviour {
            .ok(Data(text.utf8), contentType: "text/html; charset=utf-8")
        }
    }

    /// A response header.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        /// Creates a header.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request the server received.
    public struct LoggedRequest: Sendable, Equatable {
        /// The request target, query string included.
        public var target: String
        /// The target without its query string.
        public var path: String
        /// Request headers with lower-cased names.
        public var headers: [String: String]
        /// When it arrived, in seconds of the server's clock (`MonotonicClock.now / 1e9`).
        public var receivedAt: TimeInterval = 0
        /// The fault injected into its answer, if any.
        public var fault: InjectedFault?
    }

    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// What the connection threads and the test share.
    private struct State {
        var routes: [String: Behaviour] = [:]
        var hits: [String: Int] = [:]
        var directories: [(prefix: String, directory: URL)] = []
        var handlers: [(prefix: String, handler: @Sendable (LoggedRequest) -> Behaviour?)] = []
        var log: [LoggedRequest] = []
        /// Told after each request is logged (`onEachRequest`).
        var requestObserver: (@Sendable () -> Void)?
        var connections: Set<Int32> = []
        var stopped = false
        var inProgress = 0
        var peakInProgress = 0
        var injector: FaultInjector?
        var faultCounts: [InjectedFault: Int] = [:]
        var dripSeconds: TimeInterval = 0.2
        var fileCacheMaxAge: Int?
        var fileCacheDate: Int64?
        var fileCacheAge: Int?
    }

    private let listener: Int32
    private let clock: any MonotonicClock
    private let state = Mutex(State())
    private let acceptDone = DispatchSemaphore(value: 0)

    /// How long an injected `slowDrip` takes to send its body, in seconds.
    public var dripSeconds: TimeInterval {
        get { state.withLock { $0.dripSeconds } }
        set { state.withLock { $0.dripSeconds = newValue } }
    }

    /// When set, served files carry `Cache-Control: max-age=N` and an `ETag` (a digest of the
    /// bytes), and a request whose `If-None-Match` names that ETag gets `304 Not Modified`.
    public var fileCacheMaxAge: Int? {
        get { state.withLock { $0.fileCacheMaxAge } }
        set { state.withLock { $0.fileCacheMaxAge = newValue } }
    }

    /// When set (with `fileCacheMaxAge`), served files also carry a `Date` of this time (Unix
    /// seconds) and an `Expires` `fileCacheMaxAge` seconds later, as a real host (nginx's
    /// `expires` directive, a CDN) sends them: a test moves it instead of waiting for the clock.
    public var fileCacheDate: Int64? {
        get { state.withLock { $0.fileCacheDate } }
        set { state.withLock { $0.fileCacheDate = newValue } }
    }

    /// When set (with `fileCacheMaxAge`), served files also carry this `Age`, as from a CDN's cache.
    public var fileCacheAge: Int? {
        get { state.withLock { $0.fileCacheAge } }
        set { state.withLock { $0.fileCacheAge = newValue } }
    }

    /// Starts listening on an ephemeral port of 127.0.0.1; requests are stamped with `clock`
    /// (give it the fetcher's manual clock to see when, by that clock, each was sent).
    public init(clock: any MonotonicClock = SystemClock()) throws {
        self.clock = clock
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw ServerError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "LoopbackHTTPServer.accept"
        thread.start()
    }

    deinit {
        stop()
    }

    /// Serves files under `directory` for request paths starting with `prefix` (e.g. `/static/`).
    public func serveDirectory(_ directory: URL, at prefix: String) {
        state.withLock { $0.directories.append((prefix, directory)) }
    }

    /// Answers requests whose path starts with `prefix` with what `handler` returns for them
    /// (it sees the whole target, query included); nil falls through to the served directories.
    /// Routes set with `setRoute` come first.
    public func setHandler(prefix: String, _ handler: @escaping @Sendable (LoggedRequest) -> Behaviour?) {
        state.withLock { $0.handlers.append((prefix, handler)) }
    }

    /// Makes requests to `path` (query string ignored) behave as `behaviour`, resetting its hit count.
    public func setRoute(_ path: String, _ behaviour: Behaviour) {
        state.withLock { state in
            state.routes[path] = behaviour
            state.hits[path] = 0
        }
    }

    /// Injects a fault into a random `rate` (0…1) of the answers, chosen among `faults` by a
    /// generator seeded with `seed`, for paths starting with `pathPrefix` (every path when nil).
    /// Scripted routes and served files alike are affected; counters restart from zero.
    public func setFaultRate(_ rate: Double, seed: UInt64, faults: [InjectedFault] = InjectedFault.standard,
                             pathPrefix: String? = nil) {
        state.withLock { state in
            state.injector = FaultInjector(rate: rate, seed: seed, faults: faults, pathPrefix: pathPrefix)
            state.faultCounts = [:]
        }
    }

    /// Stops injecting random faults (the counters are kept).
    public func clearFaults() {
        state.withLock { $0.injector = nil }
    }

    /// How many faults of each kind have been injected since `setFaultRate`.
    public var injectedFaults: [InjectedFault: Int] {
        state.withLock { $0.faultCounts }
    }

    /// How many faults have been injected since `setFaultRate`.
    public var injectedFaultCount: Int {
        injectedFaults.values.reduce(0, +)
    }

    /// Every request received so far, in arrival order.
    public var requests: [LoggedRequest] {
        state.withLock { $0.log }
    }

    /// Calls `body` (on a connection thread) after each request is logged, in place of any earlier
    /// observer; nil stops it. Why: a test waiting for the client to reach some request blocks
    /// until one arrives instead of polling the log on a timer.
    public func onEachRequest(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.requestObserver = body }
    }

    /// How many requests for `path` (query string ignored) have been received.
    public func requestCount(_ path: String) -> Int {
        requests.filter { $0.path == path }.count
    }

    /// The most requests that were being answered at the same moment.
    public var peakConcurrentRequests: Int {
        state.withLock { $0.peakInProgress }
    }

    /// Stops accepting, cuts every open connection and waits for the accept thread to end.
    public func stop() {
        let wasStopped = state.withLock { state in
            let was = state.stopped
            state.stopped = true
            if !was {
                for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
            }
            return was
        }
        if wasStopped { return }
        shutdown(listener, Int32(SHUT_RDWR))
        acceptDone.wait()
    }

    /// An error starting the server.
    public struct ServerError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: - Connections

    private func acceptLoop() {
        defer {
            close(listener)
            acceptDone.signal()
        }
        while true {
            let fd = accept(listener, nil, nil)
            let isStopped = state.withLock { state in
                if fd >= 0 && !state.stopped { state.connections.insert(fd) }
                return state.stopped
            }
            if isStopped {
                if fd >= 0 { close(fd) }
                return
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            #if canImport(Darwin)
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let thread = Thread { [self] in serve(fd) }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(fd) }
            close(fd)
        }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            guard let headEnd = Self.headerEnd(in: buffer) else {
                let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard received > 0 else { return }
                buffer.append(contentsOf: chunk[0..<received])
                if buffer.count > 1 << 20 { return }
                continue
            }
            let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
            buffer.removeFirst(min(buffer.count, headEnd + 4))
            guard let request = Self.parse(head) else { return }
            if let length = request.headers["content-length"].flatMap(Int.init), length > 0 {
                // Request bodies are not used by any route; read and drop them.
                while buffer.count < length {
                    let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard received > 0 else { return }
                    buffer.append(contentsOf: chunk[0..<received])
                }
                buffer.removeFirst(length)
            }
            let keepAlive = request.headers["connection"]?.lowercased() != "close"
            guard respond(to: request, on: fd, keepAlive: keepAlive), keepAlive else { return }
        }
    }

    // MARK: - Responses

    /// Logs the request, resolves its behaviour and answers; false when the connection was closed.
    private func respond(to request: LoggedRequest, on fd: Int32, keepAlive: Bool) -> Bool {
        var (request, behaviour, hit, drip, observer) = state.withLock { state in
            var request = request
            request.receivedAt = Double(clock.now) / 1e9
            request.fault = state.injector?.next(path: request.path)
            if let fault = request.fault { state.faultCounts[fault, default: 0] += 1 }
            state.log.append(request)
            state.inProgress += 1
            state.peakInProgress = max(state.peakInProgress, state.inProgress)
            var behaviour: Behaviour
            var hit = 0
            if let route = state.routes[request.path] {
                behaviour = route
                hit = state.hits[request.path, default: 0]
                state.hits[request.path] = hit + 1
            } else if let handled = state.handlers.first(where: { request.path.hasPrefix($0.prefix) })
                .flatMap({ $0.handler(request) }) {
                behaviour = handled
            } else {
                behaviour = Self.staticFile(for: request.path, ifNoneMatch: request.headers["if-none-match"],
                                            directories: state.directories, cache: Self.cacheHeaders(state))
            }
            return (request, behaviour, hit, state.dripSeconds, state.requestObserver)
        }
        observer?()
        if let fault = request.fault {
            behaviour = Self.faulty(fault, instead: Self.resolve(behaviour, hit: hit), dripSeconds: drip)
        }
        defer {
            state.withLock { $0.inProgress -= 1 }
        }

        while true {
            switch behaviour {
            case .sequence(let steps):
                guard let last = steps.last else { return send(fd, status: 500, headers: [], body: Data(), keepAlive: keepAlive) }
                behaviour = hit < steps.count ? steps[hit] : last
            case .delay(let seconds, let then):
                Thread.sleep(forTimeInterval: seconds)
                behaviour = then
            case .respond(let status, let headers, let body):
                return send(fd, status: status, headers: headers, body: body, keepAlive: keepAlive)
            case .truncated(let body, let claimedLength):
                let head = Self.head(status: 200, headers: [], contentLength: claimedLength, keepAlive: true)
                _ = write(fd, head + body)
                return false
            case .closeMidBody(let body):
                let head = Self.head(status: 200, headers: [], contentLength: body.count, keepAlive: true)
                _ = write(fd, head + body.prefix(body.count / 2))
                return false
            case .drip(let body, let chunks, let interval):
                let head = Self.head(status: 200, headers: [], contentLength: body.count, keepAlive: keepAlive)
                guard write(fd, head) else { return false }
                let size = max(1, (body.count + max(1, chunks) - 1) / max(1, chunks))
                var offset = 0
                while offset < body.count {
                    Thread.sleep(forTimeInterval: interval)
                    guard write(fd, body.subdata(in: offset..<min(body.count, offset + size))) else { return false }
                    offset += size
                }
                return keepAlive
            case .reset:
                Self.resetOnClose(fd)
                return false
            case .resetMidBody(let body):
                let head = Self.head(status: 200, headers: [], contentLength: body.count, keepAlive: true)
                _ = write(fd, head + body.prefix(body.count / 2))
                Self.resetOnClose(fd)
                return false
            case .stall(let body):
                let head = Self.head(status: 200, headers: [], contentLength: max(1, body.count), keepAlive: true)
                _ = write(fd, head)
                // Hold the connection open, sending nothing, until the client or stop() cuts it.
                var byte: UInt8 = 0
                while recv(fd, &byte, 1, 0) > 0 {}
                return false
            }
        }
    }

    /// The behaviour of a path no route claims: a file under a served directory, or 404.
    private static func staticFile(for path: String, ifNoneMatch: String?, directories: [(prefix: String, directory: URL)],
                                   cache: [Header]?) -> Behaviour {
        for (prefix, directory) in directories.sorted(by: { $0.prefix.count > $1.prefix.count })
        where path.hasPrefix(prefix) {
            let rest = String(path.dropFirst(prefix.count))
            let segments = rest.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
            guard !segments.contains(where: { $0 == ".." || $0.contains("/") }) else { return .status(400) }
            let file = segments.reduce(directory) { $0.appendingPathComponent($1) }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: file.path) else { return .status(404, body: "not found") }
            guard let cache else { return .ok(data, contentType: Self.contentType(file.pathExtension)) }
            let etag = "\"\(String(SHA256.hex(data).prefix(16)))\""
            let headers = [Header("ETag", etag)] + cache
            if ifNoneMatch == etag { return .respond(status: 304, headers: headers, body: Data()) }
            return .ok(data, contentType: Self.contentType(file.pathExtension), headers: headers)
        }
        return .status(404, body: "not found")
    }

    /// The freshness headers of served files (the ETag aside), nil when files are served without.
    private static func cacheHeaders(_ state: State) -> [Header]? {
        guard let maxAge = state.fileCacheMaxAge else { return nil }
        var headers = [Header("Cache-Control", "max-age=\(maxAge)")]
        if let date = state.fileCacheDate {
            headers += [Header("Date", httpDate(date)), Header("Expires", httpDate(date + Int64(maxAge)))]
        }
        if let age = state.fileCacheAge { headers.append(Header("Age", String(age))) }
        return headers
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private func send(_ fd: Int32, status: Int, headers: [Header], body: Data, keepAlive: Bool) -> Bool {
        let head = Self.head(status: status, headers: headers, contentLength: body.count, keepAlive: keepAlive)
        return write(fd, head + body)
    }

    /// Sends every byte; false when the peer is gone.
    private func write(_ fd: Int32, _ data: Data) -> Bool {
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let sent = Self.sendSome(fd, base + offset, bytes.count - offset)
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    private static func sendSome(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL))
        #else
        return Darwin.send(fd, bytes, count, 0)
        #endif
    }
}
