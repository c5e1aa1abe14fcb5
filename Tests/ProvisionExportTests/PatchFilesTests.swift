import Foundation
@testable import ProvisionExport
import ProvisionModel
import ProvisionReports
import XCTest

/// Which search and routing packs a patch ships whole, from the two locks alone: new or changed
/// files (by digest) are shipped, unchanged ones are not, dropped ones are listed.
final class PatchFilesTests: XCTestCase {
    private func lock(search: [(String, String)], routing: [(String, String)]) -> LockDocument {
        var lock = LockDocument(jobName: "job", jobDigest: "sha256:job", epoch: 0, stylePacks: [], regions: [], tileCount: 0,
                                resourceCount: 0, byteCount: 0, contentDigest: "sha256:content")
        lock.searchPacks = search.map { id, hex in
            SearchPackRecord(id: id, file: "search/\(id).db", digest: "sha256:" + hex, inputDigest: "sha256:in",
                             settingsDigest: "sha256:settings", entries: 1, bytes: 10, tiles: 1)
        }
        lock.routingPacks = routing.map { id, hex in
            RoutingPackRecord(id: id, file: "routing/\(id).tar", source: "https://example.com/{tile}", gzip: false,
                              digest: "sha256:" + hex, bytes: 20, datasetID: nil, version: nil, tiles: [], absent: [])
        }
        return lock
    }

    func testNewAndChangedPacksAreShippedUnchangedOnesNotAndDroppedOnesListed() {
        let a = String(repeating: "a", count: 64), b = String(repeating: "b", count: 64)
        let old = lock(search: [("places", a), ("kept", a), ("old", a)], routing: [("drive", a), ("walk", a), ("gone", a)])
        let new = lock(search: [("places", b), ("kept", a), ("added", b)], routing: [("drive", b), ("walk", a), ("bike", b)])
        let files = PatchFiles(old: old, current: new)
        XCTAssertEqual(files.packs.map(\.path), ["search/places.db", "search/added.db", "routing/drive.tar", "routing/bike.tar"])
        XCTAssertEqual(files.packs.map(\.change), [.changed, .new, .changed, .new])
        XCTAssertEqual(files.packs.map(\.sha256), [b, b, b, b], "the lock's digest without its prefix")
        XCTAssertEqual(files.packs.map(\.bytes), [10, 10, 20, 20])
        XCTAssertEqual(files.droppedPacks, [ExportResult.PatchPack(kind: .search, pack: "old", path: "search/old.db", change: .dropped),
                                            ExportResult.PatchPack(kind: .routing, pack: "gone", path: "routing/gone.tar", change: .dropped)])
        XCTAssertTrue(PatchFiles(old: new, current: new).packs.isEmpty, "the same locks: nothing to ship")
    }

    func testTheDirectoryIsNamedAfterThePatch() {
        XCTAssertEqual(PatchFiles.directory(for: URL(fileURLWithPath: "/out/v1-to-v2.db")).path, "/out/v1-to-v2.files")
        XCTAssertEqual(PatchFiles.directory(for: URL(fileURLWithPath: "/out/patch")).path, "/out/patch.files")
    }
}
