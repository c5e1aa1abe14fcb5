import Foundation
import ProvisionModel
import ProvisionTestSupport
import XCTest

/// MapLibre Native (mapli, from PyPI, rendering headless) draws views of the fixture's regions
/// from the store alone (Tests/Fixtures/glyphs/render_check.py serves it through a scheme
/// handler) and asks for no glyph range a `"glyphs": "used"` store lacks; the same views from an
/// `ideographs-local` store miss the CJK ranges, so the check can fail.
final class GlyphsRenderTests: WorkspaceTestCase {
    /// The oracles' python (`.ci/run` installs mapli into `.oracles`); a missing one fails the test.
    func python() throws -> URL {
        guard let python = Oracles.python else {
            XCTFail(Oracles.missing)
            throw Oracles.Failure(description: Oracles.missing)
        }
        return python
    }

    func renderCheck(_ job: String, store: String) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["EGL_PLATFORM"] = "surfaceless"
        return try ProvisionProcess.run(try python(), [GlyphsFixture.fixtures.appendingPathComponent("render_check.py").path,
                                                      ws.root.appendingPathComponent(job).path, ws.root.appendingPathComponent(store).path],
                                        in: ws.root, environment: environment, timeout: 300)
    }

    func testMapLibreRenderOfAUsedStoreAsksForNoMissingGlyph() throws {
        _ = try python()
        try ws.makeGlyphsJob(glyphs: "used")
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply used")
        let used = try renderCheck("job.json", store: "store")
        used.expect(0, "render check of the used store")
        let report = try parseJSON(used.stdout)
        XCTAssertEqual(report["missingGlyphs"], .array([]))
        XCTAssertGreaterThan(report["requests"]?["glyphs"]?.intValue ?? 0, 8, "the views ask for glyphs")
        XCTAssertGreaterThanOrEqual(report["views"]?.intValue ?? 0, 20)

        try ws.makeGlyphsJob(glyphs: "ideographs-local", name: "local.json", store: "store-local")
        try ws.provision("apply", "local.json", "--quiet").expect(0, "apply ideographs-local")
        let check = try renderCheck("local.json", store: "store-local")
        check.expect(1, "render check of the ideographs-local store")
        let missing = try parseJSON(check.stdout)["missingGlyphs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(missing.contains("https://glyphs.example.com/fonts/Noto%20Sans%20Regular/26368-26623.pbf"), "\(missing)")
    }
}
