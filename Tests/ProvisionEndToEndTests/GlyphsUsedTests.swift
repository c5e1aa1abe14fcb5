import Foundation
import ProvisionModel
import XCTest

/// `"glyphs": "used"` on the real binary, over the glyphs fixture (Tests/Fixtures/glyphs: labels
/// in Latin, kanji and kana, Arabic, Cyrillic and Greek, written by mapbox-vector-tile): the plan
/// says the glyph ranges are determined at apply, the apply stores exactly the ranges each
/// region's labels need (expected.json, derived from the data by the fixture script), a re-plan
/// is exact and has no changes, and `audit --verify` proves every label's ranges are stored.
final class GlyphsUsedTests: WorkspaceTestCase {
    func testApplyStoresExactlyTheRangesTheLabelsNeedAndReplanIsExact() throws {
        try ws.makeGlyphsJob(glyphs: "used")
        let plan = try parseJSON(try ws.provision("plan", "job.json", "--json").stdout)
        XCTAssertEqual(plan["countsArePrecise"], .bool(false))
        XCTAssertEqual(plan["stylePacks"]?.arrayValue?.first?["glyphPolicy"], .string("used"))
        XCTAssertEqual(plan["stylePacks"]?.arrayValue?.first?["glyphsAtApply"], .bool(true))
        XCTAssertEqual(plan["regions"]?.arrayValue?.map { $0["glyphsAtApply"] }, Array(repeating: .bool(true), count: 4))
        let text = try ws.provision("plan", "job.json").stdout
        XCTAssertTrue(text.contains("glyphs \"used\": determined at apply"), text)
        XCTAssertTrue(text.contains("estimated)"), text)

        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply")
        XCTAssertEqual(try ws.storedGlyphRanges(), try GlyphsFixture.expectedRanges("z10-12"))
        // Not the Hangul of a feature no filter lets through, nor the Greek of a layer drawn from z13.5.
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE url LIKE '%/44032-44287.pbf'"), 0)
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE url LIKE '%/768-1023.pbf'"), 0)
        let lock = try readJSON(ws.lock)
        XCTAssertEqual(lock["stylePacks"]?.arrayValue?.first?["glyphs"], .string("used"))

        let again = try ws.provision("plan", "job.json", "--json", "--detailed-exitcode")
        again.expect(0, "re-plan after apply")
        let replan = try parseJSON(again.stdout)
        XCTAssertEqual(replan["countsArePrecise"], .bool(true))
        XCTAssertEqual(replan["regions"]?.arrayValue?.map { $0["glyphsAtApply"] }, Array(repeating: .bool(false), count: 4))

        let audit = try ws.provision("audit", "--verify", "--json")
        audit.expect(0, "audit --verify")
        let glyphs = try parseJSON(audit.stdout)["verification"]?["glyphs"]
        XCTAssertEqual(glyphs?["regions"], .int(4))
        XCTAssertEqual(glyphs?["missing"], .int(0))
        XCTAssertGreaterThan(glyphs?["tilesRead"]?.intValue ?? 0, 10)
    }

    func testAuditVerifyNamesTheLabelWhoseRangeIsMissing() throws {
        try ws.makeGlyphsJob(glyphs: "used")
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply")
        let cyrillic = GlyphsFixture.host + "fonts/Noto%20Sans%20Regular/1024-1279.pbf"
        _ = try ws.sqlite.rows("""
            DELETE FROM region_resources WHERE resource_id = (SELECT id FROM resources WHERE url = '\(cyrillic)');
            DELETE FROM resources WHERE url = '\(cyrillic)';
            """, writing: true)
        let audit = try ws.provision("audit", "--verify")
        audit.expect(1, "audit --verify with a glyph range removed")
        XCTAssertTrue(audit.stdout.contains("glyphs: region moscow/labels: glyph range \(cyrillic) is not stored, needed by the label"),
                      audit.stdout)
        // apply puts it back, and the audit is whole again.
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply again")
        try ws.provision("audit", "--verify").expect(0, "audit after the apply")
    }

    func testNarrowerZoomsNeedFewerRangesAndBothOtherModesFetchMore() throws {
        try ws.makeGlyphsJob(glyphs: "used", zoom: [10, 10])
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply z10")
        XCTAssertEqual(try ws.storedGlyphRanges(), try GlyphsFixture.expectedRanges("z10-10"))
        let used = try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 4")

        try ws.makeGlyphsJob(glyphs: "ideographs-local", zoom: [10, 10], name: "local.json")
        try ws.provision("apply", "local.json", "--quiet").expect(0, "apply ideographs-local")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 4"), 3 * 130)
        XCTAssertLessThan(used, 3 * 130)
    }

    func testASavedPlanCarriesTheLabelLayersToTheApply() throws {
        try ws.makeGlyphsJob(glyphs: "used")
        try ws.provision("plan", "job.json", "--out", "plan.json", "--quiet").expect(0, "plan --out")
        try ws.provision("apply", "plan.json", "--quiet").expect(0, "apply the saved plan")
        XCTAssertEqual(try ws.storedGlyphRanges(), try GlyphsFixture.expectedRanges("z10-12"))
    }

    func testTheStoreIsByteIdenticalWhateverItsHistory() throws {
        let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
        try ws.makeGlyphsJob(glyphs: "used", name: "fresh.json", store: "fresh")
        try ws.provision("apply", "fresh.json", "--quiet", environment: epoch).expect(0, "fresh apply")
        // The same store reached through a narrower job first: its glyphs planned exactly, then widened.
        try ws.makeGlyphsJob(glyphs: "used", zoom: [10, 10], name: "narrow.json", store: "grown")
        try ws.provision("apply", "narrow.json", "--quiet", environment: epoch).expect(0, "narrow apply")
        try ws.makeGlyphsJob(glyphs: "used", name: "wide.json", store: "grown")
        try ws.provision("apply", "wide.json", "--quiet", environment: epoch).expect(0, "widened apply")
        let fresh = try Data(contentsOf: ws.root.appendingPathComponent("fresh/offline.db"))
        let grown = try Data(contentsOf: ws.root.appendingPathComponent("grown/offline.db"))
        XCTAssertEqual(fresh, grown, "offline.db differs between a fresh and a grown store")
    }

    func testShardRefusesAUsedPack() throws {
        try ws.makeGlyphsJob(glyphs: "used")
        let result = try ws.provision("apply", "job.json", "--shard", "0/2", environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        result.expect(64, "apply --shard with glyphs used")
        XCTAssertTrue(result.stderr.contains("--shard cannot split style pack 'labels'"), result.stderr)
    }
}
