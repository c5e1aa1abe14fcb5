import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import XCTest

/// The text, Markdown and JSON renderings of plans, apply reports and audits, pinned by golden
/// files under `Goldens/` (`PROVISION_RECORD_GOLDENS=1` rewrites them and fails once).
final class GoldenRenderingTests: XCTestCase {
    private func json(_ value: JSONValue) -> String { value.serialized(.prettySorted) + "\n" }

    // MARK: - Plans

    func testPlanWithEveryKindOfRow() {
        let doc = Samples.planDocument()
        assertGolden(PlanRenderer.text(doc), named: "plan.txt")
        assertGolden(PlanRenderer.markdown(doc), named: "plan.md")
        assertGolden(json(doc.json), named: "plan.json")
    }

    func testPlanWithoutChanges() {
        let doc = Samples.planDocument(changes: false)
        assertGolden(PlanRenderer.text(doc), named: "plan-no-changes.txt")
        assertGolden(PlanRenderer.markdown(doc), named: "plan-no-changes.md")
    }

    func testPlanWhereEveryCountIsOne() {
        let doc = PlanDocument(plan: Samples.singularPlan(), store: "./store", limits: Limits(maxTiles: 1, maxBytes: nil))
        assertGolden(PlanRenderer.text(doc), named: "plan-singular.txt")
        assertGolden(PlanRenderer.markdown(doc), named: "plan-singular.md")
        assertGolden(json(doc.json), named: "plan-singular.json")
    }

    // MARK: - Apply reports

    func testPartialApplyThatWasStopped() {
        let report = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(), planSeconds: 0.25,
                                 lock: Samples.lock(), footprint: Samples.storeFootprint())
        assertGolden(report.text, named: "apply-partial.txt")
        assertGolden(json(report.json), named: "apply-partial.json")
    }

    func testApplyWithMoreFailuresThanTheReportLists() {
        let report = ApplyReport(plan: Samples.planDocument(), outcome: Samples.partialOutcome(failures: 150, notAttempted: 0),
                                 planSeconds: 0.25, lock: Samples.lock(), footprint: Samples.storeFootprint())
        assertGolden(report.text, named: "apply-many-failures.txt")
    }

    func testApplyWhereEveryCountIsOne() {
        let report = ApplyReport(plan: PlanDocument(plan: Samples.singularPlan(), store: "./store", limits: Limits()),
                                 outcome: Samples.singularOutcome(), planSeconds: 0.1, lock: Samples.singularLock(), footprint: nil)
        assertGolden(report.text, named: "apply-singular.txt")
        assertGolden(json(report.json), named: "apply-singular.json")
    }

    func testApplyWithNothingToDo() {
        var outcome = ApplyOutcome()
        outcome.seconds = 0.02
        let report = ApplyReport(plan: Samples.planDocument(changes: false), outcome: outcome, planSeconds: 0.1,
                                 lock: Samples.singularLock(), footprint: nil)
        assertGolden(report.text, named: "apply-nothing.txt")
    }

    // MARK: - Audits

    func testAuditWithProblems() {
        let audit = Samples.auditWithProblems()
        assertGolden(audit.text, named: "audit-problems.txt")
        assertGolden(json(audit.json), named: "audit-problems.json")
    }

    func testAuditWithoutALock() {
        let audit = Samples.auditWithoutLock()
        assertGolden(audit.text, named: "audit-no-lock.txt")
        assertGolden(json(audit.json), named: "audit-no-lock.json")
    }

    func testAuditWhereEveryCountIsOne() {
        let audit = Samples.auditSingular()
        assertGolden(audit.text, named: "audit-singular.txt")
        assertGolden(json(audit.json), named: "audit-singular.json")
    }
}

/// The golden helper itself: it compares, reports where texts differ, and a record run fails.
final class GoldenHelperTests: XCTestCase {
    private func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("goldens-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return directory.appendingPathComponent("x.txt")
    }

    func testRecordingWritesTheFileAndFailsThenTheNextRunPasses() throws {
        let url = try temporaryFile()
        XCTAssertEqual(checkGolden("a\nb\n", at: url, record: false),
                       .missing("no golden file x.txt: run with PROVISION_RECORD_GOLDENS=1 to record it"))
        let recorded = checkGolden("a\nb\n", at: url, record: true)
        XCTAssertNotNil(recorded.failure, "a record run is never green")
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), "a\nb\n")
        XCTAssertEqual(checkGolden("a\nb\n", at: url, record: false), .matches)
        XCTAssertNotNil(checkGolden("a\nb\n", at: url, record: true).failure, "even when nothing changed")
    }

    func testADifferenceNamesTheFirstDifferingLine() throws {
        let url = try temporaryFile()
        _ = checkGolden("one\ntwo\nthree\n", at: url, record: true)
        XCTAssertEqual(checkGolden("one\n2\nthree\n", at: url, record: false), .differs("""
            x.txt differs at line 2:
              golden: 'two'
              actual: '2'
            (PROVISION_RECORD_GOLDENS=1 rewrites the golden files)
            """))
        XCTAssertEqual(checkGolden("one\ntwo\n", at: url, record: false).failure?.contains("line 3:\n  golden: 'three'\n  actual: ''"),
                       true)
        XCTAssertEqual(checkGolden("one\ntwo\nthree", at: url, record: false).failure?.contains("line 4:\n  golden: ''\n  actual: (end of text)"),
                       true)
    }
}
