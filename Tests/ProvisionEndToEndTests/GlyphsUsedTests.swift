import Foundation
import ProvisionModel
import XCTest

/// `"glyphs": "used"` on the real binary, over the glyphs fixture (Tests/Fixtures/glyphs: labels
/// in Latin, kanji and kana, Arabic, Cyrillic and Greek, written by mapbox-vector-tile): the plan
/// says the glyph ranges are determined at apply, the apply stores exactly the ranges each
/// region's labels need (expected.json, derived from the data by the fixture script), a re-plan
/// is exact and has no changes, and `audit --verify` proves every label's ranges are stored.
final class GlyphsUsedTests: WorkspaceTestCase {
    static let fixtures = Demo.repositoryRoot.appendingPathComponent("Tests/Fixtures/glyphs")
    static let host = "https://glyphs.example.com/"
    static let fonts = ["Noto Sans Bold", "Noto Sans Italic", "Noto Sans Regular"]

    /// Writes the light glyph PBFs with the fixture script and a job over the four regions.
    @discardableResult
    func makeJob(glyphs: String, zoom: [Int] = [10, 12], name: String = "job.json") throws -> URL {
        let fonts = ws.root.appendingPathComponent("fonts")
        if !FileManager.default.fileExists(atPath: fonts.path) {
            let python = try XCTUnwrap(ProvisionProcess.onPath("python3"), "python3 is missing")
            let result = try ProvisionProcess.run(python, [Self.fixtures.appendingPathComponent("make_fixture.py").path,
                                                           "--fonts", fonts.path, "--light"],
                                                  in: ws.root, environment: ProcessInfo.processInfo.environment, timeout: 120)
            result.expect(0, "make_fixture.py --fonts")
        }
        let regions = try readJSON(Self.fixtures.appendingPathComponent("regions.json"))
        let job: JSONValue = [
            "version": 1, "name": "glyphs", "store": "store",
            "stylePacks": [["id": "labels", "style": .string(Self.host + "style.json"), "glyphs": .string(glyphs)]],
            "regions": .array(try XCTUnwrap(regions.objectValue).members.map { id, bbox in
                ["id": .string(id), "name": .string(id), "bbox": bbox, "zoom": .array(zoom.map { .int($0) }),
                 "stylePacks": ["labels"], "metadata": ["name": .string(id)]]
            }),
            "origins": [
                Self.host + "tiles/": .string("mbtiles:" + Self.fixtures.appendingPathComponent("labels.mbtiles").path),
                Self.host + "fonts/": .string(fonts.path),
                Self.host: .string(Self.fixtures.path),
            ],
        ]
        return try ws.write(job, to: name)
    }

    /// The glyph range URLs linked to each region row, as (region, font, range start).
    func storedRanges() throws -> Set<String> {
        let rows = try ws.sqlite.rows("""
            SELECT json_extract(g.description, '$.name'), r.url FROM regions g
            JOIN region_resources rr ON rr.region_id = g.id JOIN resources r ON r.id = rr.resource_id WHERE r.kind = 4
            """)
        return Set(rows.map { row in
            let url = row[1].dropFirst((Self.host + "fonts/").count)
            let parts = url.split(separator: "/")
            let font = parts[0].removingPercentEncoding ?? ""
            let start = parts[1].split(separator: "-")[0]
            return "\(row[0]) \(font) \(start)"
        })
    }

    /// expected.json's ranges for `zooms`, in the form of `storedRanges`.
    func expectedRanges(_ zooms: String) throws -> Set<String> {
        let expected = try readJSON(Self.fixtures.appendingPathComponent("expected.json"))
        var out = Set<String>()
        for (region, stacks) in try XCTUnwrap(expected[zooms]?.objectValue).members {
            for (font, starts) in try XCTUnwrap(stacks.objectValue).members {
                for start in starts.arrayValue ?? [] { out.insert("\(region) \(font) \(start.intValue ?? -1)") }
            }
        }
        return out
    }

    func testApplyStoresExactlyTheRangesTheLabelsNeedAndReplanIsExact() throws {
        try makeJob(glyphs: "used")
        let plan = try parseJSON(try ws.provision("plan", "job.json", "--json").stdout)
        XCTAssertEqual(plan["countsArePrecise"], .bool(false))
        XCTAssertEqual(plan["stylePacks"]?.arrayValue?.first?["glyphPolicy"], .string("used"))
        XCTAssertEqual(plan["stylePacks"]?.arrayValue?.first?["glyphsAtApply"], .bool(true))
        XCTAssertEqual(plan["regions"]?.arrayValue?.map { $0["glyphsAtApply"] }, Array(repeating: .bool(true), count: 4))
        let text = try ws.provision("plan", "job.json").stdout
        XCTAssertTrue(text.contains("glyphs \"used\": determined at apply"), text)
        XCTAssertTrue(text.contains("estimated)"), text)

        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply")
        XCTAssertEqual(try storedRanges(), try expectedRanges("z10-12"))
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
        try makeJob(glyphs: "used")
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply")
        let cyrillic = Self.host + "fonts/Noto%20Sans%20Regular/1024-1279.pbf"
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
        try makeJob(glyphs: "used", zoom: [10, 10])
        try ws.provision("apply", "job.json", "--quiet").expect(0, "apply z10")
        XCTAssertEqual(try storedRanges(), try expectedRanges("z10-10"))
        let used = try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 4")

        try makeJob(glyphs: "ideographs-local", zoom: [10, 10], name: "local.json")
        try ws.provision("apply", "local.json", "--quiet").expect(0, "apply ideographs-local")
        XCTAssertEqual(try ws.sqlite.int("SELECT count(*) FROM resources WHERE kind = 4"), 3 * 130)
        XCTAssertLessThan(used, 3 * 130)
    }

    func testShardRefusesAUsedPack() throws {
        try makeJob(glyphs: "used")
        let result = try ws.provision("apply", "job.json", "--shard", "0/2")
        result.expect(64, "apply --shard with glyphs used")
        XCTAssertTrue(result.stderr.contains("--shard cannot split style pack 'labels'"), result.stderr)
    }
}
