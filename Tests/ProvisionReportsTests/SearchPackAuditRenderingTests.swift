import ProvisionFoundation
import ProvisionModel
@testable import ProvisionReports
import XCTest

/// How an audit shows its search packs: each pack's line marked, its problems named with the pack
/// and file, files the lock does not know, and the checks made or not (issue 23).
final class SearchPackAuditRenderingTests: XCTestCase {
    private func audit() -> AuditDocument {
        var audit = Samples.auditWithoutLock()
        audit.hasLock = true
        audit.regions[0].key = "oslo/streets"
        audit.regions[0].zooms = [(Samples.template, 10, 9, 9)]
        audit.regions[0].expectedResources = 8
        var whole = AuditDocument.SearchPack(id: "places", file: "search/places.db", entries: 26, bytes: 73_728)
        whole.fileChecked = true
        whole.tilesChecked = true
        var damaged = AuditDocument.SearchPack(id: "streets", file: "search/streets.db", entries: 1, bytes: 8_192)
        damaged.fileChecked = true
        damaged.problems = ["integrity check: database disk image is malformed"]
        let missing = AuditDocument.SearchPack(id: "pois", file: "search/pois.db", entries: 3, bytes: 12_288)
        audit.searchPacks = [whole, damaged, missing]
        audit.searchPacks[2].problems = ["the file is missing; 'apply --repair' builds it again"]
        audit.unknownSearchPackFiles = ["search/.places.db.tmp-41"]
        return audit
    }

    func testDamagedMissingAndUnknownPacksAreNamed() {
        let audit = audit()
        XCTAssertFalse(audit.isOK)
        XCTAssertFalse(audit.isWhole)
        XCTAssertEqual(audit.searchPacks.map(\.isWhole), [true, false, false], "a pack not read is never whole")
        XCTAssertEqual(audit.problems.filter { $0.hasPrefix("search") }, [
            "search pack streets (search/streets.db): integrity check: database disk image is malformed",
            "search pack pois (search/pois.db): the file is missing; 'apply --repair' builds it again",
            "search/.places.db.tmp-41 is in the store's search/ but the lock records no pack of it (left by a build that "
                + "failed, or put there by hand): remove it, or apply the job whose pack it is",
        ])
        XCTAssertEqual(audit.checked.suffix(2), [.searchPacks, .searchPackTiles])
        assertGolden(audit.text, named: "audit-search-packs.txt")
        assertGolden(audit.json.serialized(.prettySorted) + "\n", named: "audit-search-packs.json")
    }

    func testPacksNotRebuiltAreNotCheckedAgainstTheirTiles() {
        var audit = audit()
        audit.searchPackTilesNotChecked = "audit --verify --manifest JOB rebuilds them from the stored tiles"
        XCTAssertEqual(audit.notChecked.last?.check, .searchPackTiles)
        XCTAssertTrue(audit.text.contains("the search packs against their tiles (audit --verify --manifest JOB rebuilds them "
                                          + "from the stored tiles)"), audit.text)
        // A store with packs but no lock checks none of them.
        audit.hasLock = false
        audit.searchPacks = []
        audit.unknownSearchPackFiles = []
        audit.searchPackFilesUnchecked = true
        XCTAssertEqual(audit.notChecked.filter { $0.check == .searchPacks }.map(\.reason), ["no provision.lock.json"])
    }
}
