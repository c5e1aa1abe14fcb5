import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import XCTest

/// Checks documents built from real report values against the schemas in Jobs/schema, and that
/// the checks can fail.
final class DocumentSchemaTests: XCTestCase {
    // MARK: plan

    func testPlanDocumentWithEveryKindOfChangeMatchesTheSchema() throws {
        let json = Samples.planDocument().json
        try assertValid(json, against: "plan")
        XCTAssertEqual(json["regions"]?.arrayValue?.compactMap { $0["action"]?.stringValue }, ["create", "update", "keep"])
        XCTAssertEqual(json["regions"]?[0]?["rowId"], .null)
        XCTAssertEqual(json["regions"]?[2]?["stylePack"], .null)
        XCTAssertEqual(json["removedRegions"]?.arrayValue?.map { $0["key"] }, [.string("rome/streets"), .null])
        XCTAssertEqual(json["limits"]?["maxBytes"], .null)
        let sources = json["stylePacks"]?[0]?["sources"]
        XCTAssertEqual(sources?[0]?["tileset"]?["tileJSON"], .string(Samples.tileJSONURL))
        XCTAssertEqual(sources?[1]?["tileset"]?["tileJSON"], .null)
        XCTAssertEqual(sources?[1]?["tileset"]?["scheme"], "tms")
        XCTAssertEqual(sources?.arrayValue?.compactMap { $0["fetch"]?.stringValue }, ["tiles", "tiles", "resource", "skipped"])
        XCTAssertEqual(sources?[0]?["templates"], 2)
        XCTAssertEqual(sources?[1]?["zooms"], [["region": "paris", "min": 11, "max": 12], ["region": "london", "min": nil, "max": nil]])
        XCTAssertEqual(sources?[2]?["url"], "https://tiles.example.com/demo/points.geojson")
        XCTAssertEqual(sources?[2]?["tileset"], .null)
        XCTAssertEqual(sources?[3]?["reason"]?.stringValue?.hasPrefix("it has neither"), true)
        XCTAssertEqual(json["stylePacks"]?[0]?["fontStacks"], [["fonts": ["Noto Sans Regular", "Noto Sans CJK"], "glyphRanges": 3]])
        XCTAssertEqual(json["stylePacks"]?[0]?["glyphs"], "https://tiles.example.com/demo/fonts/{fontstack}/{range}.pbf")
        XCTAssertEqual(json["stylePacks"]?[0]?["sprites"], ["https://tiles.example.com/demo/sprites/streets"])
    }

    func testPlanSchemaRejectsMalformedStyleSources() throws {
        let json = Samples.planDocument().json
        try assertValid(json, against: "plan")
        try assertInvalid(json.setting("/stylePacks/0/sources/0/fetch", to: "maybe"), against: "plan", mentioning: "is not one of")
        try assertInvalid(json.setting("/stylePacks/0/sources/1/zooms/0/min", to: -1), against: "plan", mentioning: "less than 0")
        try assertInvalid(json.setting("/stylePacks/0/sources/0/tileset/scheme", to: "wms"), against: "plan",
                          mentioning: "/stylePacks/0/sources/0/tileset")
        try assertInvalid(json.setting("/stylePacks/0/fontStacks/0/fonts", to: "Noto"), against: "plan",
                          mentioning: "expected array, found string")
        try assertInvalid(json.setting("/stylePacks/0/glyphs", to: nil), against: "plan", mentioning: "missing required property \"glyphs\"")
    }

    func testPlanDocumentWithNotesMatchesTheSchema() throws {
        var plan = Samples.plan()
        plan.notes = [PlanNote(subject: "stylePack 'streets'", message: "a note")]
        let json = PlanDocument(plan: plan, store: "./store", limits: Limits()).json
        try assertValid(json, against: "plan")
        XCTAssertEqual(json["notes"]?[0]?["subject"], "stylePack 'streets'")
    }

    func testPlanDocumentWithoutChangesOrLimitsMatchesTheSchema() throws {
        let json = Samples.planDocument(changes: false, limits: Limits()).json
        try assertValid(json, against: "plan")
        XCTAssertEqual(json["hasChanges"], false)
        XCTAssertEqual(json["limits"], ["maxTiles": nil, "maxBytes": nil])
    }

    func testPlanSchemaEnumsAreTheModelsCases() throws {
        let schema = try loadSchema("plan")
        let actions: [PlanAction] = [.add, .update, .keep, .remove]
        XCTAssertEqual(schema["$defs"]?["region"]?["properties"]?["action"]?["enum"], .array(actions.map { .string($0.rawValue) }))
        XCTAssertEqual(schema["$defs"]?["stylePack"]?["properties"]?["resourcesByKind"]?["propertyNames"]?["enum"],
                       .array(ResourceKind.allCases.map { .string($0.name) }))
    }

    func testPlanSchemaRejectsAnExtraKeyAWrongTypeAndAnUnknownAction() throws {
        let json = Samples.planDocument().json
        try assertInvalid(json.setting("/surprise", to: 1), against: "plan", mentioning: "unexpected property \"surprise\"")
        try assertInvalid(json.setting("/regions/0/zooms/0/extra", to: true), against: "plan", mentioning: "/regions/0/zooms/0/extra")
        try assertInvalid(json.setting("/summary/tilesToDownload", to: "7"), against: "plan", mentioning: "expected integer, found string")
        try assertInvalid(json.setting("/summary/bytesToDownload", to: 1.5), against: "plan", mentioning: "expected integer, found number")
        try assertInvalid(json.setting("/regions/1/action", to: "destroy"), against: "plan", mentioning: "is not one of")
        try assertInvalid(json.setting("/kind", to: "apply-report"), against: "plan", mentioning: "expected \"plan\"")
        try assertInvalid(json.setting("/job/digest", to: "md5:00"), against: "plan", mentioning: "does not match")
        try assertInvalid(json.setting("/regions/0/tiles", to: nil), against: "plan", mentioning: "missing required property \"tiles\"")
        try assertInvalid(json.setting("/regions/0/tiles/add", to: -1), against: "plan", mentioning: "less than 0")
        try assertInvalid(json.setting("/stylePacks/0/resourcesByKind/fonts", to: 2), against: "plan", mentioning: "fonts")
    }

    // MARK: apply report

    func testPartialApplyReportMatchesTheSchema() throws {
        let report = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(), planSeconds: 0.25,
                                 lock: Samples.lock(), footprint: Samples.storeFootprint())
        let json = report.json
        try assertValid(json, against: "report")
        XCTAssertEqual(json["status"], "stopped", "a signal stopped it (exit 130/143), which is not partial (75)")
        XCTAssertEqual(json["downloads"]?["stoppedEarly"]?.stringValue?.hasPrefix("stopped by a signal: "), true)
        let failed = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(notAttempted: 0), planSeconds: 0.25,
                                 lock: Samples.lock(), footprint: nil)
        try assertValid(failed.json, against: "report")
        XCTAssertEqual(failed.json["status"], "partial")
        XCTAssertEqual(failed.json["downloads"]?["stoppedEarly"], .null)
        XCTAssertEqual(json["failureCounts"], ["HTTP 500": 8, "timeout": 4])
        // The planned downloads add up: written + failed + missing upstream + not attempted.
        XCTAssertEqual(json["downloads"]?["planned"], 1_573)
        XCTAssertEqual(json["downloads"]?["plannedResources"], 13)
        XCTAssertEqual(json["downloads"]?["plannedTiles"], 1_560)
        XCTAssertEqual(json["downloads"]?["notAttempted"], 1_236)
        XCTAssertEqual(json["downloads"]?["succeeded"], 325)
        XCTAssertEqual(json["downloads"]?["missingTiles"], 30)
        XCTAssertEqual(json["regions"]?[1]?["stylePack"], .null)
        // The report's `plan` is the plan document's `summary`, so one $def describes both.
        XCTAssertEqual(json["plan"], Samples.planDocument().json["summary"])
    }

    func testCompleteApplyReportMatchesTheSchema() throws {
        var outcome = ApplyOutcome()
        outcome.requested = 7
        outcome.downloaded = 7
        let report = ApplyReport(plan: Samples.planDocument(changes: false), outcome: outcome, planSeconds: 0,
                                 lock: Samples.lock(), footprint: nil)
        try assertValid(report.json, against: "report")
        XCTAssertEqual(report.json["status"], "complete")
        XCTAssertEqual(report.json["failureCounts"], .object(JSONObject()))
    }

    func testApplyReportKeepsAtMostAHundredFailures() throws {
        let report = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(failures: 150),
                                 planSeconds: 1, lock: Samples.lock(), footprint: Samples.storeFootprint())
        try assertValid(report.json, against: "report")
        XCTAssertEqual(report.json["failures"]?.arrayValue?.count, 100)
        XCTAssertEqual(report.json["downloads"]?["failed"], 150)
        let tooMany = report.json.setting("/failures", to: .array(Array(repeating: ["url": "u", "reason": "r"], count: 101)))
        try assertInvalid(tooMany, against: "report", mentioning: "more than 100 items")
    }

    func testReportSchemaRejectsAnExtraKeyAndAWrongStatus() throws {
        let json = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(), planSeconds: 0.25,
                               lock: Samples.lock(), footprint: Samples.storeFootprint()).json
        try assertInvalid(json.setting("/downloads/skipped", to: 0), against: "report", mentioning: "unexpected property \"skipped\"")
        try assertInvalid(json.setting("/status", to: "failed"), against: "report", mentioning: "is not one of")
        try assertInvalid(json.setting("/durations/applySeconds", to: "1s"), against: "report", mentioning: "expected number")
        try assertInvalid(json.setting("/failureCounts/timeout", to: 0), against: "report", mentioning: "less than 1")
    }

    // MARK: audit

    func testAuditWithProblemsMatchesTheSchema() throws {
        let doc = Samples.auditWithProblems()
        try assertValid(doc.json, against: "audit")
        XCTAssertEqual(doc.json["ok"], false)
        XCTAssertEqual(doc.json["regions"]?[2]?["key"], .null)
        XCTAssertEqual(doc.json["regions"]?[2]?["zooms"]?[0]?["expected"], .null)
        XCTAssertEqual(doc.problems, [
            "integrity: row 3 missing from index tiles_idx",
            "region paris/streets: 3 of 4 tiles missing at z11 (\(Samples.template))",
            "region paris/streets: 2 of 7 resources missing",
            "region rome/streets is in the lock but not in offline.db",
            "unexpected file in the store: notes.txt",
        ])
    }

    func testAuditWithoutLockMatchesTheSchema() throws {
        let doc = Samples.auditWithoutLock()
        try assertValid(doc.json, against: "audit")
        XCTAssertEqual(doc.json["ok"], true)
        XCTAssertEqual(doc.json["integrity"], "ok")
        XCTAssertEqual(doc.json["regions"]?[0]?["resources"], ["expected": nil, "present": 8])
    }

    func testAuditSchemaRejectsAWrongType() throws {
        let json = Samples.auditWithProblems().json
        try assertInvalid(json.setting("/ok", to: "no"), against: "audit", mentioning: "expected boolean")
        try assertInvalid(json.setting("/regions/0/definition", to: 3), against: "audit", mentioning: "expected object or string")
        try assertInvalid(json.setting("/totals/wasted", to: 3), against: "audit", mentioning: "unexpected property")
    }

    // MARK: lock

    func testLockDocumentMatchesTheSchema() throws {
        let json = Samples.lock().json
        try assertValid(json, against: "lock")
        XCTAssertNil(json["kind"], "the lock has no kind today; the schema would reject one")
        XCTAssertEqual(json["stylePacks"]?[0]?["sources"]?[0]?["tileJSONDigest"], .string(Samples.digest(Samples.tileJSONURL)))
        XCTAssertNil(json["stylePacks"]?[0]?["sources"]?[1]?["tileJSONDigest"], "inline sources have no TileJSON digest")
    }

    func testLockSchemaRejectsANonNumericZoomKeyAndAnExtraKey() throws {
        let json = Samples.lock().json
        XCTAssertEqual(json["regions"]?[0]?["expectedTiles"]?[Samples.template]?["11"], 4)
        try assertInvalid(json.setting("/regions/0/expectedTiles", to: .object(JSONObject([(Samples.template, ["z11": 4])]))),
                          against: "lock", mentioning: "does not match")
        try assertInvalid(json.setting("/regions/0/expectedTiles", to: .object(JSONObject([(Samples.template, ["11": "4"])]))),
                          against: "lock", mentioning: "expected integer")
        try assertInvalid(json.setting("/appliedAt", to: "2024-01-01"), against: "lock", mentioning: "unexpected property")
    }
}
