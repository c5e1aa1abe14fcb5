import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionModel
import ProvisionReports
import XCTest

/// The lock an apply writes and the audit of a store, built from the values the applier and the
/// store give (no store, no network).
final class DocumentBuilderTests: XCTestCase {
    func testTheLockRecordsRowsExpectedTilesCompletenessAndDigests() throws {
        var plan = Samples.plan()
        plan.documents = [Samples.styleURL: FetchedBody(data: Data("style".utf8)),
                          Samples.tileJSONURL: FetchedBody(data: Data("tilejson".utf8))]
        var outcome = ApplyOutcome()
        outcome.regionRows = ["paris/streets": 1, "london/streets": 2]  // berlin was not written
        outcome.incompleteRegions = ["london/streets"]
        let content = ContentDigest(tileCount: 11, resourceCount: 7, byteCount: 4_096, digest: "ab12",
                                    chunks: [ChunkDigest(start: .resource(url: "a"), rows: 7, digest: "cd")])
        let lock = LockDocument(plan: plan, outcome: outcome, content: content, epoch: 1_700_000_000)

        XCTAssertEqual(lock.regions.map(\.key), ["paris/streets", "london/streets"], "only the rows written, in plan order")
        XCTAssertEqual(lock.regions.map(\.rowID), [1, 2])
        XCTAssertEqual(lock.regions.map(\.isComplete), [true, false])
        XCTAssertEqual(lock.regions[0].expectedTiles.map(\.count), [1, 4])
        XCTAssertEqual(lock.regions[1].expectedTiles.map(\.count), [3], "add + keep")
        XCTAssertEqual(lock.regions[0].definitionDigest, "sha256:" + SHA256.hex(plan.regions[0].definition))
        XCTAssertEqual(lock.stylePacks.first?.styleDigest, "sha256:" + SHA256.hex(Data("style".utf8)))
        XCTAssertEqual(lock.stylePacks.first?.tileJSONDigests, [Samples.tileJSONURL: "sha256:" + SHA256.hex(Data("tilejson".utf8))])
        XCTAssertEqual(lock.contentDigest, "sha256:ab12")
        XCTAssertEqual(lock.content, content, "the content round-trips")
        XCTAssertTrue(lock.hasIncompleteRegions)
        XCTAssertEqual(lock.epoch, 1_700_000_000)
        XCTAssertEqual(LockDocument(json: try JSONValue.parse(lock.fileBytes))?.regions.count, 2, "the file reads back")
        XCTAssertEqual(lock.fileBytes.last, UInt8(ascii: "\n"))
    }

    func testTheAuditSetsExpectedTilesBesidePresentOnesAndNamesMissingRegions() throws {
        let template = Samples.template
        let lock = LockDocument(jobName: "j", jobDigest: Samples.jobDigest, epoch: 1, stylePacks: [], regions: [
            .init(key: "paris/streets", regionID: "paris", stylePack: "streets", rowID: 1, definitionDigest: "d",
                  expectedTiles: [TileCount(urlTemplate: template, zoom: 10, count: 4), TileCount(urlTemplate: template, zoom: 11, count: 9)],
                  expectedResources: 5, isComplete: true),
            .init(key: "rome/streets", regionID: "rome", stylePack: "streets", rowID: 2, definitionDigest: "d",
                  expectedTiles: [], expectedResources: 5, isComplete: true),
        ], tileCount: 13, resourceCount: 5, byteCount: 100, contentDigest: "sha256:x")
        let summary = StoreSummary(
            regions: [
                .init(rowID: 1, definition: Data(#"{"bounds":[1,2,3,4]}"#.utf8), description: Data(#"{"name":"Paris"}"#.utf8),
                      tileCounts: [TileCount(urlTemplate: template, zoom: 10, count: 4), TileCount(urlTemplate: template, zoom: 12, count: 1)],
                      resourceCount: 5, tileBytes: 70, resourceBytes: 30, emptyTileCount: 0),
                .init(rowID: 3, definition: Data("not json".utf8), description: nil, tileCounts: [], resourceCount: 0,
                      tileBytes: 0, resourceBytes: 0, emptyTileCount: 0),
            ],
            tileCount: 5, resourceCount: 5, tileBytes: 70, resourceBytes: 30, orphanTileCount: 0, orphanResourceCount: 1,
            emptyTileCount: 0, resourceCountsByKind: [])
        let audit = AuditDocument(store: "/s", summary: summary, integrity: [], lock: lock, unexpectedFiles: ["junk"])

        let paris = try XCTUnwrap(audit.regions.first)
        XCTAssertEqual(paris.key, "paris/streets")
        XCTAssertEqual(paris.zooms.map { "\($0.zoom):\($0.expected.map(String.init) ?? "-")/\($0.present)" }, ["10:4/4", "11:9/0", "12:0/1"])
        XCTAssertFalse(paris.isComplete, "z11 is missing")
        XCTAssertEqual(paris.metadata, ["name": "Paris"])
        XCTAssertEqual(audit.regions[1].key, nil, "a row the lock does not know")
        XCTAssertEqual(audit.regions[1].definition, "not json")
        XCTAssertEqual(audit.missingRegions, ["rome/streets"])
        XCTAssertEqual(audit.byteCount, 100)
        XCTAssertEqual(audit.unexpectedFiles, ["junk"])
        XCTAssertFalse(audit.isOK)
    }

    func testDifferencesNameEveryChangedRemovedAndDriftedThing() {
        var plan = Samples.plan()
        plan.drift = [DocumentDrift(url: Samples.styleURL, pinned: "sha256:a", current: "sha256:b")]
        let differences = AuditDocument.differences(plan)
        XCTAssertEqual(differences.filter { $0.hasPrefix("region paris/streets: create") }.count, 1, "\(differences)")
        XCTAssertTrue(differences.contains("region rome/streets is not in the job (20 tiles)"), "\(differences)")
        XCTAssertTrue(differences.contains("region row 9 is not in the job (4 tiles)"), "\(differences)")
        XCTAssertTrue(differences.contains("\(Samples.styleURL) changed upstream since the last apply"), "\(differences)")
        XCTAssertFalse(differences.contains { $0.hasPrefix("region berlin") }, "a kept region is no difference")
        XCTAssertEqual(AuditDocument.differences(Samples.plan(changes: false)), [])
    }
}
