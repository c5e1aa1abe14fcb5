import Foundation
import ProvisionTestSupport
import XCTest

/// Headless Chromium (Debian's `chromium`, which `.ci/run` installs): screenshots of local pages
/// and the requests a page made, read from Chromium's own net log.
///
/// Every run gets a fresh profile, and every host name resolves to nothing
/// (`--host-resolver-rules`), so neither the page nor the browser's background services reach
/// another address; the net log still records each request a page starts, which is what
/// `pageRequests` reports.
struct Chromium {
    let executable: URL

    /// The browser on PATH; fails the test when the machine has none.
    static func find() throws -> Chromium {
        for name in ["chromium", "chromium-browser"] {
            if let url = ProvisionProcess.onPath(name) { return Chromium(executable: url) }
        }
        throw MissingTool("chromium", package: "Debian's chromium")
    }

    /// What loading a page left: the requests it started, and the screenshot when one was asked for.
    struct Load {
        /// URLs of the requests the page started (not the browser's own), in the order logged.
        var pageRequests: [String]
        var screenshot: URL?
    }

    /// Loads `page` in a `width`×`height` window, writing scratch files (profile, net log,
    /// screenshot) under `scratch`.
    func load(_ page: URL, width: Int = 1000, height: Int = 1000, screenshot: Bool = false, scratch: URL,
              file: StaticString = #filePath, line: UInt = #line) throws -> Load {
        let run = scratch.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        let netLog = run.appendingPathComponent("netlog.json")
        let shot = run.appendingPathComponent("screenshot.png")
        var arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
            "--disable-extensions", "--mute-audio", "--force-device-scale-factor=1", "--force-color-profile=srgb",
            "--user-data-dir=\(run.appendingPathComponent("profile").path)", "--host-resolver-rules=MAP * ~NOTFOUND",
            "--log-net-log=\(netLog.path)", "--net-log-capture-mode=Default", "--window-size=\(width),\(height)",
        ]
        if screenshot { arguments.append("--screenshot=\(shot.path)") } else { arguments.append("--dump-dom") }
        arguments.append(page.absoluteString)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = run.path
        let result = try ProvisionProcess.run(executable, arguments, in: run, environment: environment, timeout: 120, file: file, line: line)
        guard result.status == 0 else {
            XCTFail("chromium exited \(result.status): \(result.stderr.suffix(2000))", file: file, line: line)
            throw CocoaError(.executableLoad)
        }
        return Load(pageRequests: try Self.pageRequests(netLog), screenshot: screenshot ? shot : nil)
    }

    /// The URLs of the requests a page started, from a net log: `URL_REQUEST_START_JOB` events
    /// whose network isolation key is a `file://` page's (the browser's own requests have none).
    static func pageRequests(_ netLog: URL) throws -> [String] {
        let data = try Data(contentsOf: netLog)
        guard let log = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let constants = log["constants"] as? [String: Any], let types = constants["logEventTypes"] as? [String: Int],
              let start = types["URL_REQUEST_START_JOB"], let events = log["events"] as? [[String: Any]] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return events.compactMap { event -> String? in
            guard event["type"] as? Int == start, let params = event["params"] as? [String: Any],
                  let url = params["url"] as? String else { return nil }
            let key = params["network_isolation_key"] as? String ?? ""
            let initiator = params["initiator"] as? String ?? ""
            return key.contains("file://") || initiator == "null" ? url : nil
        }
    }
}
