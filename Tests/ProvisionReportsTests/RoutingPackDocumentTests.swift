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

    func testThePlanShowsEachLevelsChanges() {
        let pack = RoutingPack(id: "drive", tiles: "https://graph.example.com/{tilePath}")
        let plan = RoutingPackPlan(
            pack: pack, regions: ["west", "east"],
            regionTiles: [.init(region: "west", level: 2, tiles: 4, absent: 2), .init(region: "east", level: 2, tiles: 1, absent: 0)],
            add: [RoutingTile(level: 2, index: 807_142)], keep: [RoutingTile(level: 0, index: 3196), RoutingTile(level: 2, index: 807_140)],
            absent: [RoutingTile(level: 2, index: 807_139)], remove: [RoutingTile(level: 1, index: 50_584)],
            action: .build, reason: "tiles change")
        let json = PlanDocument.routingPackJSON(plan)
        XCTAssertEqual(json["levels"], [["level": 0, "add": 0, "remove": 0, "keep": 1], ["level": 1, "add": 0, "remove": 1, "keep": 0],
                                        ["level": 2, "add": 1, "remove": 0, "keep": 2]])
        XCTAssertEqual(json["tilesToDownload"], 1)
        XCTAssertEqual(json["regionTiles"]?[0], ["region": "west", "level": 2, "tiles": 4, "absent": 2])
        XCTAssertEqual(PlanRenderer.routingPacksText([plan]),
                       "\n~ routing pack drive: build (tiles change), routing/drive.tar over 2 regions, 1 graph tile to download\n"
                       + "      level 0 +0 -0 =1\n      level 1 +0 -1 =0\n      level 2 +1 -0 =2\n")
        var document = PlanDocument(plan: Samples.plan(), store: "/s", limits: Limits())
        document.routingPacks = [plan]
        XCTAssertTrue(PlanRenderer.markdown(document).contains(
            "Routing pack `drive`: build (tiles change), 1 graph tile to download (level 0 +0 -0 =1, level 1 +0 -1 =0, level 2 +1 -0 =2).\n"))
    }
}
