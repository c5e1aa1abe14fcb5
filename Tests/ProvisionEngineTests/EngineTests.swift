import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore
import XCTest

/// The engine in process, on the bundled demo data (Paris and London at z10–12): plan, apply,
/// audit and their refusals, without the binary.
final class EngineTests: XCTestCase {
    private var root: URL!
    private let context = RunContext(environment: [:], now: 1_800_000_000, sourceDateEpoch: 1_700_000_000)

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    private static let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/demo")

    /// Writes a demo job with `regions` (ids of London and Paris) and returns its path.
    private func job(_ regions: [String] = ["london", "paris"], name: String = "job.json") throws -> String {
        let boxes = ["london": "[-0.1278, 51.4874, -0.0978, 51.5174]", "paris": "[2.3522, 48.8366, 2.3822, 48.8666]"]
        let entries = regions.map { id in
            """
            {"id": "\(id)", "name": "\(id)", "bbox": \(boxes[id] ?? "[]"), "zoom": [10, 12], "stylePacks": ["streets"]}
            """
        }
        let text = """
        {"version": 1, "name": "engine", "store": "store",
         "stylePacks": [{"id": "streets", "style": "https://tiles.example.com/demo/styles/streets.json", "pixelRatio": 1,
                         "glyphs": "ideographs-local"}],
         "regions": [\(entries.joined(separator: ","))],
         "origins": {"https://tiles.example.com/demo/tiles/streets/": "mbtiles:\(Self.demo.path)/streets.mbtiles",
                     "https://tiles.example.com/demo/": "\(Self.demo.path)"}}
        """
        let url = root.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    private var store: URL { root.appendingPathComponent("store") }

    private func plan(_ job: String) throws -> Plan {
        try PlanRun(request: RunRequest(job: job), context: context, progress: SilentProgress()).run().plan
    }

    private func apply(_ job: String, outputs: [(flag: String, path: String)] = []) throws -> ApplyRun.Result {
        var request = RunRequest(job: job)
        request.outputs = outputs
        return try ApplyRun(request: request, context: context, progress: SilentProgress()).run()
    }

    func testPlanWritesNothingAndApplyConverges() throws {
        let path = try job()
        let first = try plan(path)
        XCTAssertTrue(first.hasChanges)
        XCTAssertGreaterThan(first.tilesToDownload, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "plan writes nothing")

        let result = try apply(path)
        XCTAssertTrue(result.outcome.isComplete)
        XCTAssertEqual(result.report.status, "complete")
        XCTAssertGreaterThan(result.outcome.downloaded, first.tilesToDownload, "every tile and the resources")
        XCTAssertEqual(result.outcome.failed, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted(),
                       ["offline.db", "provision.lock.json"])
        let lock = try XCTUnwrap(LockDocument(json: try JSONValue.parse(Data(contentsOf: store.appendingPathComponent("provision.lock.json")))))
        XCTAssertEqual(lock.regions.map(\.key), ["london/streets", "paris/streets"])
        XCTAssertEqual(lock.epoch, 1_700_000_000, "SOURCE_DATE_EPOCH is the build time")
        XCTAssertEqual(lock.tileCount, first.tilesToDownload)

        XCTAssertFalse(try plan(path).hasChanges, "plan after apply: no changes")
        let before = try Data(contentsOf: store.appendingPathComponent("offline.db"))
        let again = try apply(path)
        XCTAssertEqual(again.outcome.downloaded, 0)
        XCTAssertEqual(try Data(contentsOf: store.appendingPathComponent("offline.db")), before, "a no-op apply writes nothing")
    }

    func testDroppingARegionRemovesIt() throws {
        _ = try apply(try job())
        let smaller = try job(["paris"])
        let plan = try self.plan(smaller)
        XCTAssertEqual(plan.removedRegions.count, 1)
        _ = try apply(smaller)
        let audit = try AuditRun(store: store.path, verify: true, manifest: smaller, context: context, progress: SilentProgress()).run()
        XCTAssertTrue(audit.isOK, audit.problems.joined(separator: "\n"))
        XCTAssertEqual(audit.regions.map(\.key), ["paris/streets"])
        XCTAssertEqual(audit.manifestDifferences, [])
        XCTAssertEqual(audit.verification?.corruptCount, 0)
        XCTAssertEqual(audit.verification?.digestMatchesLock, true)
    }

    func testAuditWithAManifestUsesTheJobsStore() throws {
        let path = try job()
        _ = try apply(path)
        // Whatever ./store holds (the README's demo leaves one), the manifest's store is the one audited.
        let audit = try AuditRun(store: nil, verify: false, manifest: path, context: context, progress: SilentProgress()).run()
        XCTAssertEqual(audit.store, store.standardizedFileURL.path)
        XCTAssertEqual(audit.regions.count, 2)
    }

    func testAnOutputOverTheStoreIsRefusedBeforeAnyWork() throws {
        let path = try job()
        for output in [store.appendingPathComponent("offline.db").path, store.appendingPathComponent("provision.lock.json").path,
                       store.path] {
            XCTAssertThrowsError(try apply(path, outputs: [("--report", output)])) { error in
                let failure = error as? ProvisionError
                XCTAssertEqual(failure?.kind, .usage)
                XCTAssertTrue(failure?.message.contains("--report \(output) would overwrite") == true, "\(String(describing: failure))")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "nothing was written")
    }

    func testAStorePathThatIsAFileIsRefusedNamingIt() throws {
        let path = try job()
        try Data("x".utf8).write(to: store)
        XCTAssertThrowsError(try plan(path)) { error in
            let failure = error as? ProvisionError
            XCTAssertEqual(failure?.kind, .cannotWriteStore)
            XCTAssertTrue(failure?.message.contains(store.standardizedFileURL.path) == true, "\(String(describing: failure))")
            XCTAssertTrue(failure?.message.contains("is a file, not a directory") == true, "\(String(describing: failure))")
        }
    }

    func testAnUnavailableOriginIsUpstreamUnavailableNamingTheURL() throws {
        let path = try job()
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let empty = root.appendingPathComponent("empty-mirror")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        text = text.replacingOccurrences(of: "\"\(Self.demo.path)\"", with: "\"\(empty.path)\"")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try plan(path)) { error in
            let failure = error as? ProvisionError
            XCTAssertEqual(failure?.kind, .upstreamUnavailable)
            XCTAssertTrue(failure?.message.contains("https://tiles.example.com/demo/styles/streets.json") == true,
                          "\(String(describing: failure))")
        }
    }

    func testAMissingJobIsMissingInputAndAnInvalidOneListsItsProblems() throws {
        XCTAssertThrowsError(try plan(root.appendingPathComponent("nope.json").path)) { error in
            XCTAssertEqual((error as? ProvisionError)?.kind, .missingInput)
        }
        let bad = root.appendingPathComponent("bad.json")
        try Data(#"{"version": 1, "name": "x", "stylePacks": [], "regions": [{"id": "a", "zoom": [9, 3]}]}"#.utf8).write(to: bad)
        XCTAssertThrowsError(try plan(bad.path)) { error in
            let failure = error as? ProvisionError
            XCTAssertEqual(failure?.kind, .invalidJob)
            XCTAssertFalse(failure?.diagnostics.isEmpty ?? true)
            XCTAssertTrue(failure?.diagnostics.contains { $0.pointer.hasPrefix("/regions/0") } == true)
        }
    }
}
