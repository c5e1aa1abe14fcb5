import XCTest

/// A test case with a fresh `Workspace` per test (and, when `servesTiles`, the demo tiles served
/// from its loopback server), torn down after it.
class WorkspaceTestCase: XCTestCase {
    var ws: Workspace!

    /// Whether each test starts with the demo tiles served.
    class var servesTiles: Bool { false }

    override func setUpWithError() throws {
        ws = try Workspace()
        if Self.servesTiles { try ws.serveTiles() }
    }

    override func tearDown() {
        ws?.tearDown()
        ws = nil
    }
}
