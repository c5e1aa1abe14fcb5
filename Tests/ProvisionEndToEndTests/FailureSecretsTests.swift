import Foundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// Issue 20 #8, one URL policy: every failure kind (TLS, redirect loop, timeout, HTTP 403, 404 and
/// 500, a body that fails verification) on a URL that carries a `?key=${VAR}`, a `k=${VAR}` (a
/// name no pattern knows), a literal `access_token` and a user-info password, for a style and for
/// tiles, through `validate`, `plan` and `apply` with text, `--json`, `--progress json`, `--report`
/// and `--out`: no byte of stdout, stderr, the reports, the saved plan (its documents decoded), the
/// lock or any stored body (inflated) holds a secret.
final class FailureSecretsTests: WorkspaceTestCase {
    private static let key = "KEY-e2e-SECRET-7f3a"
    private static let k = "K-e2e-SECRET-91c2"
    private static let token = "at-e2e-SECRET-LITERAL"
    private static let password = "pw-e2e-SECRET"
    private static let secrets = [key, k, token, password]
    private static let environment = ["E2E_KEY": key, "E2E_K": k]

    private var outputs: [(String, ProcessResult)] = []
    private var files: [URL] = []

    override class var servesTiles: Bool { true }

    /// How a failing origin answers every request under its prefix.
    private enum Kind: String, CaseIterable {
        case tls, redirectLoop, timeout, status403, status404, status500, verification
    }

    /// `base` (`scheme://127.0.0.1:port`) with the user info, then `path` with the secret parameters.
    private static func secretURL(_ base: String, _ path: String) -> String {
        let scheme = base.hasPrefix("https") ? "https://" : "http://"
        return scheme + "e2e-user:" + password + "@" + base.dropFirst(scheme.count) + path
            + "?key=${E2E_KEY}&access_token=" + token + "&k=${E2E_K}&v=2"
    }

    /// Serves `kind` under `/fail/` (nginx for TLS) and returns the base URL of the failing origin.
    private func failingOrigin(_ kind: Kind) throws -> (base: String, nginx: NginxTLSServer?) {
        let prefix = "/fail/"
        switch kind {
        case .tls:
            let nginx = try NginxTLSServer(serving: [(prefix, Demo.directory)])
            return (nginx.baseURL, nginx)
        case .redirectLoop:
            // The loop echoes the request's query (the expanded keys) into every Location.
            ws.server.setHandler(prefix: prefix) { request in
                .status(302, headers: [.init("Location", request.target)])
            }
        case .timeout:
            ws.server.setHandler(prefix: prefix) { _ in .stall(body: Data(repeating: 0x1A, count: 64)) }
        case .status403, .status404, .status500:
            let code = Int(kind.rawValue.dropFirst("status".count)) ?? 500
            ws.server.setHandler(prefix: prefix) { request in .status(code, body: "no: \(request.target)") }
        case .verification:
            ws.server.setHandler(prefix: prefix) { request in .html("<!DOCTYPE html><html><body>\(request.target)</body></html>") }
        }
        return (ws.server.baseURL, nil)
    }

    private func job(style: String?, tileset: String?, name: String) throws -> String {
        let region = Demo.paris.region(zoom: 10...11, extra: tileset.map { [("tilesets", [.string($0)])] } ?? [])
        let job = Demo.job(regions: [region], origins: ws.origins(tiles: .http),
                           stylePacks: [style.map { Demo.stylePack(style: $0) } ?? Demo.stylePack()])
        guard var object = job.objectValue else { throw CocoaError(.coderInvalidValue) }
        object["download"] = ["concurrency": 4, "retries": 0, "timeoutSeconds": 1, "stallSeconds": 1]
        object["store"] = .string("store-" + name)
        return try ws.write(.object(object), to: name + ".json").path
    }

    private func run(_ arguments: String...) throws -> ProcessResult {
        let result = try ProvisionProcess.provision(arguments, in: ws.root, environment: Self.environment)
        outputs.append((arguments.joined(separator: " "), result))
        return result
    }

    private func report(_ name: String) -> String {
        let url = ws.root.appendingPathComponent(name)
        files.append(url)
        return url.path
    }

    func testNoFailureKindShowsOrStoresASecret() throws {
        for kind in Kind.allCases {
            let (base, nginx) = try failingOrigin(kind)
            defer { nginx?.stop() }
            outputs = []
            files = []

            // The style fails: plan and apply stop before any tile, naming the style's URL.
            let styleJob = try job(style: Self.secretURL(base, "/fail/styles/streets.json"), tileset: nil, name: "style-\(kind)")
            try run("validate", styleJob).expect(0)
            try run("validate", "--json", styleJob).expect(0)
            let plans = [try run("plan", "--verbose", styleJob), try run("plan", "--json", styleJob),
                         try run("plan", "--progress", "json", "--json", styleJob)]
            for plan in plans { XCTAssertNotEqual(plan.status, 0, "\(kind): the style cannot be fetched") }
            XCTAssertTrue(plans[0].stderr.contains("/fail/styles/streets.json"), "\(kind): \(plans[0].stderr)")
            let styleApply = try run("apply", "--progress", "json", "--report", report("report-style-\(kind).json"), styleJob)
            XCTAssertNotEqual(styleApply.status, 0, "\(kind)")
            _ = try run("apply", "--verbose", styleJob)

            // The style is fine, the tiles of a tileset fail: apply names them in text, events and reports.
            let tileJob = try job(style: nil, tileset: Self.secretURL(base, "/fail/{z}/{x}/{y}.pbf"), name: "tiles-\(kind)")
            try run("plan", "--verbose", tileJob).expect(0, "\(kind): a plan fetches no tile")
            try run("plan", "--json", "--progress", "json", tileJob).expect(0, "\(kind)")
            let saved = report("plan-tiles-\(kind).json")
            try run("plan", "--out", saved, tileJob).expect(0, "\(kind)")
            files.append(try ws.decodedSavedPlan(URL(fileURLWithPath: saved)))
            let text = try run("apply", "--verbose", "--report", report("report-tiles-\(kind)-1.json"), tileJob)
            XCTAssertNotEqual(text.status, 0, "\(kind): the tiles failed")
            XCTAssertTrue(text.stderr.contains("/fail/"), "\(kind): the failures are named: \(text.stderr)")
            let events = try run("apply", "--json", "--progress", "json", "--report", report("report-tiles-\(kind)-2.json"), tileJob)
            XCTAssertNotEqual(events.status, 0, "\(kind)")
            XCTAssertTrue(events.stderr.contains("/fail/"), "\(kind): the events name the failures")

            let stores = ["style", "tiles"].map { ws.root.appendingPathComponent("store-\($0)-\(kind)") }
            try ws.assertNoSecrets(Self.secrets, outputs: outputs, files: files, stores: stores)
        }

        // The keys did go out, on the wire only: in the query and as HTTP basic authentication.
        let sent = ws.requests(under: "/fail/")
        XCTAssertTrue(sent.contains { $0.target.contains("key=\(Self.key)") && $0.target.contains("k=\(Self.k)")
            && $0.target.contains("access_token=\(Self.token)") }, "\(sent.prefix(3).map(\.target))")
        let basic = "Basic " + Data("e2e-user:\(Self.password)".utf8).base64EncodedString()
        XCTAssertTrue(sent.contains { $0.headers["authorization"] == basic }, "\(sent.prefix(3).map(\.headers))")
    }

    /// A URL the validator refuses is quoted with its password and token hidden.
    func testValidationErrorsQuoteNoSecret() throws {
        let style = Self.secretURL(ws.server.baseURL, "/demo/styles/${E2E_KEY}/streets.json")
        let file = try job(style: style, tileset: nil, name: "invalid")
        let texts = [try run("validate", file), try run("validate", "--json", file), try run("plan", "--json", file),
                     try run("apply", "--progress", "json", file)]
        for result in texts { result.expect(65, "a ${VAR} in a path is refused") }
        XCTAssertTrue(texts[0].stdout.contains("e2e-user:REDACTED@127.0.0.1") || texts[0].stderr.contains("e2e-user:REDACTED@127.0.0.1"),
                      texts[0].stdout + texts[0].stderr)
        try ws.assertNoSecrets(Self.secrets, outputs: outputs, files: [], stores: [ws.root.appendingPathComponent("store-invalid")])
    }
}
