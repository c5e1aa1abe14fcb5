import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest
@testable import ProvisionReports

/// A routing pack in the lock (version 7) and in the plan (version 6): read back as written, and
/// shown per level in the plan's text.
final class RoutingPackDocumentTests: XCTestCase {
    private static let record = RoutingPackRecord(
        id: "drive", file: "routing/drive.tar", source: "https://graph.example.com/{tilePath}", gzip: true,
        digest: "sha256:" + String(repeating: "a", count: 64), bytes: 71_680, datasetID: 4242, version: "3.9.1",
        tiles: [RoutingPackRecord.Tile(tile: RoutingTile(level: 0, index: 3196), path: "0/003/196.gph", bytes: 1234,
                                       digest: "sha256:" + String(repeating: "b", count: 64)),
                RoutingPackRecord.Tile(tile: RoutingTile(level: 2, index: 807_140), path: "2/000/807/140.gph", bytes: 56_789,
                                       digest: "sha256:" + String(repeating: "c", count: 64))],
        absent: [RoutingTile(level: 2, index: 807_139)])

    func testTheLockRecordsEachTileWithItsDigestAndReadsItBack() throws {
        var lock = Samples.lock()
        lock.routingPacks = [Self.record]
        let json = lock.json
        XCTAssertEqual(json["schemaVersion"], 7)
        let b: String = String(repeating: "b", count: 64), c: String = String(repeating: "c", count: 64)
        let lines: JSONValue = .array([.string("0/003/196.gph 1234 " + b), .string("2/000/807/140.gph 56789 " + c)])
        XCTAssertEqual(json["routingPacks"]?[0]?["tiles"], lines)
        XCTAssertEqual(json["routingPacks"]?[0]?["absent"], ["2/807139"])
        XCTAssertEqual(json["routingPacks"]?[0]?["build"], ["datasetId": "4242", "version": "3.9.1"])
        let read = try XCTUnwrap(LockDocument(json: json))
        XCTAssertEqual(read.routingPacks, [Self.record])
        XCTAssertNil(Samples.lock().json["routingPacks"], "a job without routing packs writes none")
    }

    /// A plan of `drive` adding the south-east tile (which both regions meet), keeping one tile of
    /// level 0 and one of level 2 (and an absent cell), removing one of level 1; the source's sizes
    /// are `sourceBytes`, the stored tiles' the lock's.
    private static func plan(sourceBytes: [RoutingTile: Int]?) -> RoutingPackPlan {
        let pack = RoutingPack(id: "drive", tiles: "https://graph.example.com/{tilePath}")
        let absent = RoutingTile(level: 2, index: 807_139), kept = RoutingTile(level: 2, index: 807_140)
        let added = RoutingTile(level: 2, index: 807_142)
        return RoutingPackPlan(
            pack: pack, regions: ["west", "east"],
            regionTiles: [.init(region: "west", level: 2, tiles: 3, absent: 1, cover: [absent, kept, added]),
                          .init(region: "east", level: 2, tiles: 1, absent: 0, cover: [added])],
            add: [added], keep: [RoutingTile(level: 0, index: 3196), kept],
            absent: [absent], remove: [RoutingTile(level: 1, index: 50_584)],
            action: .build, reason: "tiles change", sourceBytes: sourceBytes,
            storedBytes: [RoutingTile(level: 0, index: 3196): 1234, kept: 56_789, RoutingTile(level: 1, index: 50_584): 2048])
    }

    func testThePlanShowsEachLevelsChangesWithTheirBytes() {
        let plan = Self.plan(sourceBytes: [RoutingTile(level: 2, index: 807_142): 10_000])
        let json = PlanDocument.routingPackJSON(plan)
        XCTAssertEqual(json["levels"], [
            ["level": 0, "add": 0, "remove": 0, "keep": 1, "addBytes": 0, "removeBytes": 0, "keepBytes": 1234],
            ["level": 1, "add": 0, "remove": 1, "keep": 0, "addBytes": 0, "removeBytes": 2048, "keepBytes": 0],
            ["level": 2, "add": 1, "remove": 0, "keep": 2, "addBytes": 10_000, "removeBytes": 0, "keepBytes": 56_789],
        ])
        XCTAssertEqual(json["tilesToDownload"], 1)
        XCTAssertEqual(json["bytesToDownload"], 10_000)
        // The tile both regions meet counts for both.
        XCTAssertEqual(json["regionTiles"], [
            ["region": "west", "level": 2, "tiles": 3, "absent": 1, "add": 1, "keep": 2, "addBytes": 10_000, "keepBytes": 56_789],
            ["region": "east", "level": 2, "tiles": 1, "absent": 0, "add": 1, "keep": 0, "addBytes": 10_000, "keepBytes": 0],
        ])
        XCTAssertEqual(PlanRenderer.routingPacksText([plan]),
                       "\n~ routing pack drive: build (tiles change), routing/drive.tar over 2 regions, 1 graph tile to download (9.8 KiB)\n"
                       + "      level 0 +0 -0 =1, bytes +0 B -0 B =1.2 KiB\n"
                       + "      level 1 +0 -1 =0, bytes +0 B -2.0 KiB =0 B\n"
                       + "      level 2 +1 -0 =2, bytes +9.8 KiB -0 B =55.5 KiB\n"
                       + "    region west level 2 +1 =2, bytes +9.8 KiB =55.5 KiB\n"
                       + "    region east level 2 +1 =0, bytes +9.8 KiB =0 B\n")
        var document = PlanDocument(plan: Samples.plan(), store: "/s", limits: Limits())
        document.routingPacks = [plan]
        XCTAssertTrue(PlanRenderer.markdown(document).contains(
            "Routing pack `drive`: build (tiles change), 1 graph tile to download, 9.8 KiB (level 0 +0 -0 =1 (+0 B -0 B =1.2 KiB), "
            + "level 1 +0 -1 =0 (+0 B -2.0 KiB =0 B), level 2 +1 -0 =2 (+9.8 KiB -0 B =55.5 KiB)).\n"), PlanRenderer.markdown(document))
    }

    /// Tiles over HTTP: what they weigh is known only once fetched; a level with nothing to add adds 0 bytes.
    func testTheBytesOfTilesFetchedOverHTTPAreUnknownUntilFetched() {
        let plan = Self.plan(sourceBytes: nil)
        let json = PlanDocument.routingPackJSON(plan)
        XCTAssertEqual(json["bytesToDownload"], .null)
        XCTAssertEqual(json["levels"]?.arrayValue?.map { $0["addBytes"] }, [0, 0, .null])
        XCTAssertEqual(json["levels"]?[2]?["keepBytes"], 56_789, "kept bytes come from the lock")
        XCTAssertEqual(json["regionTiles"]?.arrayValue?.map { $0["addBytes"] }, [.null, .null])
        let text = PlanRenderer.routingPacksText([plan])
        XCTAssertTrue(text.contains("1 graph tile to download (size unknown until fetched)\n"), text)
        XCTAssertTrue(text.contains("      level 2 +1 -0 =2, bytes +? -0 B =55.5 KiB\n"), text)
    }
}
