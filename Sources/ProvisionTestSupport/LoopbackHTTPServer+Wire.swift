import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP/1.1 framing helpers and fault behaviours of the loopback server.
extension LoopbackHTTPServer {
    static func headerEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func parse(_ head: String) -> LoggedRequest? {
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return nil }
        let target = String(parts[1])
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        return LoggedRequest(target: target, path: path, headers: headers)
    }
    static func contentType(_ pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "json": return "application/json"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "webp": return "image/webp"
        case "pbf", "mvt": return "application/x-protobuf"
        case "html": return "text/html"
        default: return "application/octet-stream"
        }
    }

    static func head(status: Int, headers: [Header], contentLength: Int, keepAlive: Bool) -> Data {
        var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "Content-Length: \(contentLength)\r\n"
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        text += "\r\n"
        return Data(text.utf8)
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }

    /// The behaviour `behaviour` settles on for hit number `hit`, without its delays.
    static func resolve(_ behaviour: Behaviour, hit: Int) -> Behaviour {
        switch behaviour {
        case .sequence(let steps):
            guard let last = steps.last else { return behaviour }
            return resolve(hit < steps.count ? steps[hit] : last, hit: hit)
        case .delay(_, let then):
            return resolve(then, hit: hit)
        default:
            return behaviour
        }
    }

    /// The behaviour that injects `fault` into the answer `real` would have given.
    static func faulty(_ fault: InjectedFault, instead real: Behaviour, dripSeconds: TimeInterval) -> Behaviour {
        var body = Data(repeating: 0x2e, count: 512)
        if case .respond(let status, _, let realBody) = real, (200..<300).contains(status), !realBody.isEmpty {
            body = realBody
        }
        switch fault {
        case .serviceUnavailable: return .status(503, body: "injected fault: busy")
        case .tooManyRequests: return .status(429, body: "injected fault: slow down", headers: [Header("Retry-After", "0")])
        case .resetMidBody: return .resetMidBody(body: body)
        case .truncatedBody: return .truncated(body: body.prefix(body.count / 2), claimedLength: body.count)
        case .html200: return .html("<!DOCTYPE html><html><body>Injected fault</body></html>")
        case .slowDrip:
            guard case .respond(let status, _, _) = real, (200..<300).contains(status) else { return real }
            return .drip(body: body, chunks: 5, interval: dripSeconds / 5)
        case .resetBeforeResponse: return .reset
        case .stall: return .stall(body: body)
        }
    }

    /// Makes `close` send a TCP reset instead of a FIN.
    static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }
}
