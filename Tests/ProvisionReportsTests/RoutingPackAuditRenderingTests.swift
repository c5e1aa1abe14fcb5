import ProvisionFoundation
import ProvisionModel
@testable import ProvisionReports
import XCTest

/// How an audit shows its routing packs: each pack's line marked, its problems and damaged tiles
/// named with the pack, file and tile, files the lock does not know, and the checks made or not
/// (issue 22).
final class RoutingPackAuditRenderingTests: XCTestCase {
    private func audit(verified: Bool) -> AuditDocument {
        var audit = Samples.auditWithoutLock()
        audit.hasLock = true
        audit.regions[0].key = "oslo/streets"
        audit.regions[0].zooms = [(Samples.template, 10, 9, 9)]
        audit.regions[0].expectedResources = 8
        if verified {
            audit.verification = AuditDocument.Verification(checked: 9, corrupt: [], corruptCount: 0, expired: 0, digestMatchesLock: true)
        }
        var whole = AuditDocument.RoutingPack(id: "drive", file: "routing/drive.tar", tiles: 5, bytes: 71_680)
        whole.fileChecked = true
        whole.tilesChecked = verified
        var damaged = AuditDocument.RoutingPack(id: "bike", file: "routing/bike.tar", tiles: 3, bytes: 30_720)
        damaged.fileChecked = true
        damaged.tilesChecked = verified
        damaged.damagedTiles = [.init(path: "2/000/807/142.gph", problem: "missing from the tar")]
        var cut = AuditDocument.RoutingPack(id: "walk", file: "routing/walk.tar", tiles: 2, bytes: 20_480)
        cut.problems = ["its index.bin cannot be trusted: entry 1 points past the end"]
        audit.routingPacks = [whole, damaged, cut]
        audit.unknownRoutingPackFiles = ["routing/.drive.partial"]
        return audit
    }

    func testDamagedTilesAndUnknownFilesAreNamedAndAnUnopenedPackIsNeverWhole() {
        let audit = audit(verified: true)
        XCTAssertFalse(audit.isOK)
        XCTAssertEqual(audit.routingPacks.map(\.isWhole), [true, false, false])
        XCTAssertEqual(audit.problems.filter { $0.contains("routing") }, [
            "routing pack bike (routing/bike.tar): graph tile 2/000/807/142.gph missing from the tar; 'apply --repair' fetches it again",
            "routing pack walk (routing/walk.tar): its index.bin cannot be trusted: entry 1 points past the end; "
                + "'apply --repair' writes it again",
            "routing/.drive.partial is in the store's routing/ but the lock records no pack of it (left by an apply that failed, "
                + "or put there by hand): remove it, or apply the job whose pack it is",
        ])
        XCTAssertEqual(audit.checked.suffix(2), [.routingPacks, .routingPackTiles])
        XCTAssertTrue(audit.text.contains("Routing packs:\n    ✓ drive: routing/drive.tar, 5 graph tiles, 70.0 KiB, every tile equal "
                                          + "to the lock's\n    ✗ bike: routing/bike.tar, 3 graph tiles, 30.0 KiB (1 problem)\n"), audit.text)
        let json = audit.json["routingPacks"]?.arrayValue?[1]
        XCTAssertEqual(json?["damagedTiles"], [["path": "2/000/807/142.gph", "problem": "missing from the tar"]])
        XCTAssertEqual(json?["whole"], false)
    }

    func testTilesAreNotCheckedWithoutVerifyNorAnythingWithoutALock() {
        var audit = audit(verified: false)
        XCTAssertEqual(audit.notChecked.filter { $0.check == .routingPackTiles }.map(\.reason), ["audit --verify reads them"])
        XCTAssertFalse(audit.checked.contains(.routingPackTiles))
        audit.hasLock = false
        audit.routingPacks = []
        audit.unknownRoutingPackFiles = []
        audit.routingPackFilesUnchecked = true
        XCTAssertEqual(audit.notChecked.filter { $0.check == .routingPacks }.map(\.reason), ["no provision.lock.json"])
        // A store without routing packs says nothing of them.
        audit.routingPackFilesUnchecked = false
        XCTAssertFalse(audit.checked.contains(.routingPacks) || audit.notChecked.contains { $0.check == .routingPacks })
    }
}
