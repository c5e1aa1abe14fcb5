import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Issue 20 #1: a plan of a shard is exact about what that shard's apply does. A saved plan
/// records its shard (its apply holds that share, a different `--shard` is refused), the plan's
/// counts and exit code are the shard's, and `--shard` without a fixed build time is refused
/// before anything is fetched.
final class ShardedPlanTests: WorkspaceTestCase {
    private let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]

    private func writeJob() throws {
        try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles))
    }

    func testASavedShardPlanAppliesItsShardAndRefusesAnother() throws {
        try writeJob()
        try ws.provision("plan", "job.json", "--shard", "0/2", "--out", "shard0.json", "--quiet", environment: epoch).expect(0)
        let saved = try readJSON(ws.root.appendingPathComponent("shard0.json"))
        XCTAssertEqual(saved["shard"]?["index"], 0, "the saved plan records its shard")
        XCTAssertEqual(saved["shard"]?["count"], 2)

        let other = try ws.provision("apply", "shard0.json", "--shard", "1/2", environment: epoch)
        other.expect(64, "apply of a shard-0 plan as shard 1")
        XCTAssertTrue(other.stderr.contains("--shard 1/2") && other.stderr.contains("shard 0/2"), other.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.database.path), "a refused apply writes nothing")

        // Applied without --shard and without SOURCE_DATE_EPOCH: the plan's shard and build time.
        try ws.provision("apply", "shard0.json", "--quiet").expect(0, "apply the saved shard plan")
        let lock = try readJSON(ws.lock)
        XCTAssertEqual(lock["shard"]?["index"], 0)
        XCTAssertEqual(lock["shard"]?["count"], 2)
        XCTAssertEqual(lock["epoch"], 1_700_000_000, "the saved plan fixes the build time")
        let first = try XCTUnwrap(lock["shard"]?["firstTile"]?.intValue), end = try XCTUnwrap(lock["shard"]?["endTile"]?.intValue)
        let total = try XCTUnwrap(lock["shard"]?["totalTiles"]?.intValue)
        XCTAssertEqual(try ws.sqlite.scalar("SELECT count(*) FROM tiles"), "\(end - first)", "only the shard's tiles")
        XCTAssertLessThan(end - first, total)

        // A plan of the whole job is not a shard's: applying it as one is refused.
        try ws.provision("plan", "job.json", "--store", "whole", "--out", "whole.json", "--quiet", environment: epoch).expect(0)
        let asShard = try ws.provision("apply", "whole.json", "--shard", "0/2", environment: epoch)
        asShard.expect(64, "apply of a whole-job plan as a shard")
        XCTAssertTrue(asShard.stderr.contains("whole job") && asShard.stderr.contains("--shard 0/2"), asShard.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.root.appendingPathComponent("whole/offline.db").path))
    }

    func testShardWithoutAFixedBuildTimeIsRefusedBeforeAnyDownload() throws {
        try writeJob()
        for command in ["plan", "apply"] {
            let result = try ws.provision(command, "job.json", "--shard", "1/2")
            result.expect(64, "\(command) --shard without SOURCE_DATE_EPOCH")
            XCTAssertTrue(result.stderr.contains("SOURCE_DATE_EPOCH"), "says what to set: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("merge") && result.stderr.contains("65"), "says why: \(result.stderr)")
        }
        XCTAssertEqual(ws.server.requests.count, 0, "nothing was fetched")
        XCTAssertFalse(FileManager.default.fileExists(atPath: ws.store.path), "nothing was written")
    }

    func testAShardsPlanCountsWhatTheShardsApplyDoes() throws {
        try writeJob()
        let whole = try parseJSON(try ws.provision("plan", "job.json", "--json", "--quiet", environment: epoch).stdout)
        let planned = try ws.provision("plan", "job.json", "--shard", "1/2", "--json", "--quiet", environment: epoch)
        planned.expect(0)
        let plan = try parseJSON(planned.stdout)
        let shard = try XCTUnwrap(plan["shard"])
        let share = try XCTUnwrap(shard["endTile"]?.intValue) - XCTUnwrap(shard["firstTile"]?.intValue)
        let wholeDownloads = try XCTUnwrap(whole["summary"]?["tilesToDownload"]?.intValue)
        XCTAssertLessThan(share, wholeDownloads)
        XCTAssertEqual(plan["summary"]?["tilesToDownload"]?.intValue, share, "a fresh store: the shard downloads its share")
        let regionAdds = plan["regions"]?.arrayValue?.reduce(0) { $0 + ($1["tiles"]?["add"]?.intValue ?? 0) }
        XCTAssertEqual(plan["summary"]?["tiles"]?["add"]?.intValue, regionAdds)
        XCTAssertEqual(shard["jobTilesToDownload"]?.intValue, wholeDownloads, "the whole job's downloads beside")
        XCTAssertNil(whole["shard"], "a plan of the whole job has no shard")
        XCTAssertEqual(try SchemaSubset(named: "plan.schema.json").problems(plan), [])

        let streamed = try ws.provision("plan", "job.json", "--shard", "1/2", "--progress", "json", environment: epoch)
        let finished = streamed.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
            .first { $0["event"] == "plan-finished" }
        XCTAssertEqual(finished?["tilesToDownload"]?.intValue, share, "the plan-finished event counts the shard: \(streamed.stderr)")
        let text = try ws.provision("plan", "job.json", "--shard", "1/2", "--quiet", environment: epoch).stdout
        XCTAssertTrue(text.contains("Downloads: \(grouped(share)) tiles"), text)
        XCTAssertTrue(text.contains("Plan (shard 1/2, this shard's apply): \(grouped(share)) tiles to add"), text)
        let markdown = try ws.provision("plan", "job.json", "--shard", "1/2", "--format", "markdown", "--quiet", environment: epoch)
        XCTAssertTrue(markdown.stdout.contains("\(grouped(share)) tiles to download"), markdown.stdout)
        XCTAssertTrue(markdown.stdout.hasPrefix("### provision plan: e2e (shard 1/2)"), markdown.stdout)

        // The shard's apply downloads exactly that; then its plan has no changes, the whole job's has.
        let applied = try parseJSON(try ws.provision("apply", "job.json", "--shard", "1/2", "--json", "--quiet", environment: epoch).stdout)
        XCTAssertEqual(applied["downloads"]?["plannedTiles"]?.intValue, share)
        XCTAssertEqual(applied["plan"]?["tilesToDownload"]?.intValue, share, "the report's plan summary is the shard's")
        try ws.provision("plan", "job.json", "--shard", "1/2", "--detailed-exitcode", "--quiet", environment: epoch)
            .expect(0, "the shard's store holds its share: no changes")
        try ws.provision("plan", "job.json", "--shard", "0/2", "--detailed-exitcode", "--quiet", environment: epoch)
            .expect(2, "the other shard's tiles are missing")
        let again = try parseJSON(try ws.provision("plan", "job.json", "--shard", "1/2", "--json", "--quiet", environment: epoch).stdout)
        XCTAssertEqual(again["hasChanges"], false)
        let unchanged = try ws.provision("plan", "job.json", "--shard", "1/2", "--quiet", environment: epoch).stdout
        XCTAssertTrue(unchanged.contains("No changes: the store holds shard 1/2's share of the job."), unchanged)
        XCTAssertEqual(again["summary"]?["tilesToDownload"], 0)
        XCTAssertEqual(again["summary"]?["tiles"]?["keep"]?.intValue, share, "every tile of the share is kept")
    }

    /// Issue 20 #7: a shard's store says it is one: the apply's text and report give each
    /// region's share, audit names the shard and does not call the other shards' tiles missing,
    /// and export warns that the archive is partial.
    func testAShardsStoreSaysItIsAShard() throws {
        try writeJob()
        let applied = try ws.provision("apply", "job.json", "--shard", "0/2", "--report", "report.json", environment: epoch)
        applied.expect(0)
        XCTAssertTrue(applied.stdout.contains("Shard 0/2: a partial store"), applied.stdout)
        let report = try readJSON(ws.root.appendingPathComponent("report.json"))
        XCTAssertEqual(report["shard"]?["index"], 0)
        XCTAssertEqual(report["shard"]?["count"], 2)
        let regions = try XCTUnwrap(report["regions"]?.arrayValue)
        var held = 0
        for region in regions {
            let shardTiles = try XCTUnwrap(region["shardTiles"]?.intValue, "\(region)")
            let tiles = try XCTUnwrap(region["tiles"]?.intValue)
            XCTAssertLessThanOrEqual(shardTiles, tiles)
            XCTAssertTrue(applied.stdout.contains("\(grouped(shardTiles)) of its \(grouped(tiles)) tiles (shard 0/2's share)"), applied.stdout)
            held += shardTiles
        }
        XCTAssertLessThan(held, regions.reduce(0) { $0 + ($1["tiles"]?.intValue ?? 0) }, "the shard holds part of the regions' tiles")
        XCTAssertEqual(try SchemaSubset(named: "report.schema.json").problems(report), [])
        // Its region events want the share's tiles, which the finished shard holds.
        let again = try ws.provision("apply", "job.json", "--shard", "0/2", "--progress", "json", environment: epoch)
        again.expect(0)
        let regionEvents = again.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
            .filter { $0["event"] == "region" }
        XCTAssertEqual(regionEvents.count, regions.count)
        for event in regionEvents {
            XCTAssertEqual(event["tiles"], event["wanted"], "\(event)")
            XCTAssertEqual(event["wanted"]?.intValue, regions.first { $0["key"] == event["key"] }?["shardTiles"]?.intValue)
        }

        let audit = try ws.provision("audit", "--store", ws.store.path, "--json")
        audit.expect(0, "a finished shard is whole for its share")
        let document = try parseJSON(audit.stdout)
        XCTAssertEqual(document["shard"]?["index"], 0)
        XCTAssertEqual(document["problems"], [], "the other shard's tiles are not missing from this one")
        XCTAssertEqual(try SchemaSubset(named: "audit.schema.json").problems(document), [])
        let auditText = try ws.provision("audit", "--store", ws.store.path).stdout
        XCTAssertTrue(auditText.contains("Shard 0/2 of a sharded apply"), auditText)
        // A tile of the share gone is a problem naming the shard.
        try WritableSQLite(database: ws.database).exec("DELETE FROM tiles WHERE id = (SELECT max(id) FROM tiles);")
        let damaged = try ws.provision("audit", "--store", ws.store.path)
        damaged.expect(1)
        XCTAssertTrue(damaged.stdout.contains("shard 0/2: 1 of its"), damaged.stdout)

        let export = try ws.provision("export", "--store", ws.store.path, "--format", "mbtiles", "--out", "shard.mbtiles", "--json")
        export.expect(0)
        XCTAssertTrue(export.stderr.contains("warning: the export is partial: the store is shard 0/2"), export.stderr)
        let streamed = try ws.provision("export", "--store", ws.store.path, "--format", "mbtiles", "--out", "again.mbtiles",
                                        "--progress", "json")
        let events = streamed.stderr.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
        let warning = try XCTUnwrap(events.first { $0["event"] == "warning" }, streamed.stderr)
        XCTAssertTrue(warning["message"]?.stringValue?.contains("shard 0/2") ?? false)
        let eventSchema = try SchemaSubset(named: "events.schema.json")
        for event in events { XCTAssertEqual(eventSchema.problems(event), [], event.serialized()) }
        let exported = try parseJSON(export.stdout)
        XCTAssertTrue(exported["partial"]?.stringValue?.contains("provision merge") ?? false, export.stdout)
        XCTAssertEqual(try SchemaSubset(named: "export-report.schema.json").problems(exported), [])
    }

    /// An export of a store whose last apply did not finish warns that it is partial.
    func testAnExportOfAnIncompleteStoreWarns() throws {
        try ws.serveTiles()
        try ws.write(ws.job([Demo.london], tiles: .http))
        let tile = try XCTUnwrap(Demo.london.tiles.max())
        ws.server.setRoute(ws.tilePath(tile), .status(500))
        try ws.provision("apply", "job.json", "--quiet").expect(75, "one tile fails")
        let export = try ws.provision("export", "--store", ws.store.path, "--format", "pmtiles", "--out", "part.pmtiles", "--json")
        export.expect(0)
        XCTAssertTrue(export.stderr.contains("warning: the export is partial: the store is incomplete: region london/streets"),
                      export.stderr)
        XCTAssertNotNil(try parseJSON(export.stdout)["partial"])

        ws.server.setRoute(ws.tilePath(tile), .ok(try ws.tileBytes(tile), contentType: "application/x-protobuf"))
        try ws.provision("apply", "job.json", "--quiet").expect(0)
        let complete = try ws.provision("export", "--store", ws.store.path, "--format", "pmtiles", "--out", "all.pmtiles", "--json")
        complete.expect(0)
        XCTAssertFalse(complete.stderr.contains("partial"), complete.stderr)
        XCTAssertNil(try parseJSON(complete.stdout)["partial"])
    }
}
