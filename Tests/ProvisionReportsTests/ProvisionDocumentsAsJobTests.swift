import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import XCTest

/// Every document provision writes, given where a job file is expected, is named in one
/// diagnostic, so the loader's list of kinds cannot fall behind the documents.
final class ProvisionDocumentsAsJobTests: XCTestCase {
    func testEveryProvisionDocumentIsNamedInsteadOfValidated() {
        let plan = Samples.planDocument()
        let cases: [(name: String, document: JSONValue, what: String)] = [
            ("saved plan", SavedPlan(plan: Samples.plan(), jobPath: "jobs/cities.json", storePath: "/s",
                                     storeDigest: Samples.digest("store")).json, "a saved plan"),
            ("plan JSON", plan.json, "a provision plan document (plan --json)"),
            ("apply report", ApplyReport(plan: plan, outcome: Samples.partialOutcome(), planSeconds: 0,
                                         lock: Samples.lock(), footprint: Samples.storeFootprint()).json, "a provision apply report"),
            ("audit", Samples.auditWithProblems().json, "a provision audit document"),
            ("lock", Samples.lock().json, "a provision lock file"),
        ]
        for c in cases {
            XCTAssertTrue(c.document["schemaVersion"] != nil, c.name)
            let result = JobLoader.parse(data: c.document.data(.prettySorted), baseDirectory: URL(fileURLWithPath: "/"),
                                         displayName: "x.json")
            XCTAssertEqual(result.diagnostics.map(\.message), ["x.json is \(c.what), not a job file"], c.name)
            XCTAssertEqual(result.diagnostics.first?.pointer, "", c.name)
        }
        XCTAssertTrue(SavedPlan.isSavedPlan(cases[0].document))
        XCTAssertEqual(NotAJobFile.documentKinds[SavedPlan.kind], "a saved plan")
    }
}
