import Foundation
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

/// Each test starts with London and Paris applied from the MBTiles origin at a fixed build time:
/// the store the repair tests damage, and its bytes as a fresh build wrote them.
class AppliedDemoTestCase: WorkspaceTestCase {
    let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
    var job = ""
    var freshBytes = Data()

    override func setUpWithError() throws {
        try super.setUpWithError()
        job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        freshBytes = try Data(contentsOf: ws.database)
    }
}
