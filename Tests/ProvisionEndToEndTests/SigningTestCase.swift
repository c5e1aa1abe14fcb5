import Foundation
import XCTest

/// A test case with a fresh `Workspace` and an Ed25519 key pair Debian's `openssl` made in it
/// (`key.pem`, `pub.pem`): the signed-lock tests' start.
class SigningTestCase: XCTestCase {
    var ws: Workspace!
    var openssl: URL!

    override func setUpWithError() throws {
        guard let tool = ProvisionProcess.onPath("openssl") else {
            XCTFail("openssl is not installed (.ci/setup installs it: apt-get install openssl)")
            throw CocoaError(.fileNoSuchFile)
        }
        openssl = tool
        ws = try Workspace()
        try run(openssl, "genpkey", "-algorithm", "ed25519", "-out", "key.pem").expect(0)
        try run(openssl, "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem").expect(0)
    }

    override func tearDown() {
        ws?.tearDown()
        ws = nil
    }

    /// `tool arguments…` in the workspace.
    func run(_ tool: URL, _ arguments: String...) throws -> ProcessResult {
        try ProvisionProcess.run(tool, arguments, in: ws.root, environment: ProcessInfo.processInfo.environment, timeout: 60)
    }
}
