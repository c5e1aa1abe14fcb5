import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore
import XCTest

/// `apply --shard I/N`: equal shares of the job's tiles, whose stores laid end to end are the
/// whole store's tile rows, on a job with overlapping regions, a polygon and two style packs.
final class ShardTests: XCTestCase {
    private var fixture: EngineFixtures.OverlappingJobRoot!
    private var root: URL { fixture.url }

    override func setUpWithError() throws {
        fixture = try EngineFixtures.OverlappingJobRoot("shards")
    }

    override func tearDown() {
        fixture = nil
    }

    private func apply(into store: String, shard: Shard? = nil) throws -> ApplyRun.Result {
        try fixture.apply(into: store, shard: shard)
    }

    /// Every tile row of a store in id order (its key, stamps, flags and stored bytes), read by
    /// the sqlite3 shell, not by our store code.
    private func tileRows(_ store: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", root.appendingPathComponent(store + "/offline.db").path,
                             "SELECT url_template, pixel_ratio, z, x, y, expires, modified, etag, hex(data), compressed, accessed, "
                                + "must_revalidate FROM tiles ORDER BY id"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func lock(_ store: String) throws -> LockDocument {
        try XCTUnwrap(LockDocument(json: try JSONValue.parse(Data(contentsOf: root.appendingPathComponent(store + "/provision.lock.json")))))
    }

    func testShardsAreEqualSharesWhoseRowsLaidEndToEndAreTheWholeStore() throws {
        _ = try apply(into: "whole")
        let whole = try tileRows("whole")
        let wholeLock = try lock("whole")
        XCTAssertNil(wholeLock.shard)
        XCTAssertGreaterThan(whole.count, 30)
        for count in [1, 2, 3, 7] {
            var laid: [String] = []
            var sizes: [Int] = []
            for index in 0..<count {
                let name = "s\(count)-\(index)"
                let result = try apply(into: name, shard: Shard(index: index, count: count))
                XCTAssertTrue(result.outcome.isComplete, "\(name): \(result.outcome.failures)")
                let rows = try tileRows(name)
                laid += rows
                sizes.append(rows.count)
                let shardLock = try lock(name)
                XCTAssertEqual(shardLock.shard?.shard, Shard(index: index, count: count))
                XCTAssertEqual(shardLock.shard?.totalTiles, whole.count)
                XCTAssertEqual(shardLock.shard?.tiles.count, rows.count)
                XCTAssertTrue(shardLock.regions.allSatisfy(\.isComplete), "\(name): complete for its share")
                XCTAssertEqual(shardLock.regions.map(\.expectedTiles), wholeLock.regions.map(\.expectedTiles),
                               "the plan-derived fields are the whole job's")
                XCTAssertEqual(shardLock.resourceCount, wholeLock.resourceCount, "every shard holds every resource")
            }
            XCTAssertEqual(laid, whole, "\(count) shards laid end to end are the whole store's tile rows")
            XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1, "\(count) shards: \(sizes)")
        }
    }

    func testAResumedShardFetchesNothingAgain() throws {
        let first = try apply(into: "s", shard: Shard(index: 1, count: 3))
        XCTAssertGreaterThan(first.outcome.downloaded, 0)
        let again = try apply(into: "s", shard: Shard(index: 1, count: 3))
        XCTAssertEqual(again.outcome.downloaded, 0)
        XCTAssertTrue(again.outcome.isComplete)
        var request = RunRequest(job: root.appendingPathComponent("job.json").path, store: root.appendingPathComponent("s").path)
        request.shard = Shard(index: 1, count: 3)
        let run = PlanRun(request: request, context: fixture.context, progress: SilentProgress())
        let plan = try run.run().plan
        XCTAssertTrue(plan.notes.contains { $0.subject == "shard 1/3" && $0.message.contains("; 0 of them are not in this store yet") },
                      "\(plan.notes)")
    }

    /// The plan of a shard (overlapping regions, a polygon, two packs) counts what its apply
    /// does: the shards' downloads add up to the whole job's, each row's tiles are split over
    /// the shards, and each shard's apply downloads and links exactly what its plan counted;
    /// re-planned against the shard's store, nothing changes.
    func testEachShardsPlanIsWhatItsApplyDoes() throws {
        func plan(_ store: String, shard: Shard?) throws -> Plan {
            var request = RunRequest(job: root.appendingPathComponent("job.json").path, store: root.appendingPathComponent(store).path)
            request.shard = shard
            let run = PlanRun(request: request, context: fixture.context, progress: SilentProgress())
            return try run.run().plan
        }
        let whole = try plan("whole", shard: nil)
        XCTAssertNil(whole.shard)
        let wanted = whole.regions.map { $0.totals.add + $0.totals.keep }
        for count in [2, 3] {
            var downloads = 0
            var held = [Int](repeating: 0, count: whole.regions.count)
            for index in 0..<count {
                let name = "plan-s\(count)-\(index)", shard = Shard(index: index, count: count)
                let planned = try plan(name, shard: shard)
                let shardPlan = try XCTUnwrap(planned.shard)
                XCTAssertEqual(shardPlan.tilesToDownload, shardPlan.share.tiles.count, "a fresh store lacks the whole share")
                XCTAssertEqual(planned.appliedTilesToDownload, shardPlan.tilesToDownload)
                downloads += shardPlan.tilesToDownload
                for region in whole.regions.indices {
                    let counts = planned.tileTotals(of: region)
                    XCTAssertEqual(counts.keep, 0)
                    held[region] += counts.add
                }
                let applied = try apply(into: name, shard: shard)
                XCTAssertEqual(applied.outcome.plannedTiles, shardPlan.tilesToDownload, "\(name): downloads as planned")
                XCTAssertEqual(applied.plan.shard?.tilesToDownload, shardPlan.tilesToDownload)
                for (region, row) in whole.regions.enumerated() {
                    let counts = planned.tileTotals(of: region)
                    XCTAssertEqual(applied.report.plan.regions[region].tiles.add, counts.add, "\(name) \(row.key)")
                }
                let again = try plan(name, shard: shard)
                XCTAssertFalse(again.hasChanges, "\(name): its own store holds its share")
                XCTAssertEqual(again.appliedTilesToDownload, 0)
                XCTAssertTrue(try plan(name, shard: Shard(index: (index + 1) % count, count: count)).hasChanges,
                              "\(name): another shard's share is not in it")
            }
            XCTAssertEqual(downloads, whole.tilesToDownload, "\(count) shards download the whole job's tiles once")
            XCTAssertEqual(held, wanted, "\(count) shards: each row's tiles are split over the shards")
        }
    }
}

