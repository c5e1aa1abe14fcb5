import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: `audit` checks each routing pack the lock records (`--verify` re-reads every graph
/// tile), and `apply --repair` fetches again only the tiles found damaged, writing the extract a
/// fresh build writes.
final class RoutingPackAuditTests: WorkspaceTestCase {
    private var tar: URL { ws.store.appendingPathComponent("routing/drive.tar") }
    private let epoch = RoutingTown.epoch

    /// The audit's JSON (`--verify` when asked); `whole` says whether the routing packs should have
    /// no problem (the demo regions get no map tiles in the town, which the audit names too, exit 1).
    private func audit(verify: Bool, whole: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let result = try ProvisionProcess.provision(["audit", "--json", "--store", ws.store.path] + (verify ? ["--verify"] : []),
                                                    in: ws.root, environment: epoch)
        result.expect(1, "audit", file: file, line: line)
        let document = try parseJSON(result.stdout)
        XCTAssertEqual(try SchemaSubset(named: "audit.schema.json").problems(document), [], file: file, line: line)
        let routing = (document["problems"]?.arrayValue ?? []).compactMap(\.stringValue).filter { $0.contains("routing") }
        XCTAssertEqual(routing.isEmpty, whole, "\(routing)", file: file, line: line)
        return document
    }

    private func pack(_ audit: JSONValue) throws -> JSONValue {
        try XCTUnwrap(audit["routingPacks"]?.arrayValue?.first)
    }

    private func damagedPaths(_ audit: JSONValue) throws -> [String] {
        (try pack(audit)["damagedTiles"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
    }

    /// Applies the pack of both regions from the served town; returns the job and the fresh tar's bytes.
    private func applied() throws -> (job: String, fresh: Data) {
        let job = try RoutingTown.job(ws, [RoutingTown.west, RoutingTown.east], graph: .string(try RoutingTown.serve(ws)))
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        return (job, try Data(contentsOf: tar))
    }

    /// `apply --repair` after the damage: the graph paths it asked the server for; the tar is then
    /// the fresh build's bytes and `audit --verify` passes.
    private func repair(_ job: String, fresh: Data, file: StaticString = #filePath, line: UInt = #line) throws -> Set<String> {
        let served = ws.requests(under: "/graph/").count
        try ws.provision("apply", "--quiet", "--repair", job, environment: epoch).expect(0, "apply --repair")
        let fetched = Set(ws.requests(under: "/graph/").dropFirst(served).map { String($0.path.dropFirst("/graph/".count)) })
        XCTAssertEqual(try Data(contentsOf: tar), fresh, "the repaired tar is a fresh build's", file: file, line: line)
        XCTAssertEqual(try pack(try audit(verify: true, whole: true))["whole"], true, file: file, line: line)
        return fetched
    }

    func testAWholePackIsWholeAndEachDamageIsNamed() throws {
        let (job, fresh) = try applied()
        let clean = try audit(verify: false, whole: true)
        XCTAssertEqual(clean["schemaVersion"], 6)
        XCTAssertEqual(try pack(clean)["fileChecked"], true)
        XCTAssertEqual(try pack(clean)["tilesChecked"], false)
        XCTAssertEqual(clean["checked"]?.arrayValue?.contains("routingPacks"), true)
        XCTAssertEqual(clean["notChecked"]?.arrayValue?.contains { $0["check"] == "routingPackTiles" }, true)
        let verified = try audit(verify: true, whole: true)
        XCTAssertEqual(try pack(verified)["whole"], true)
        XCTAssertEqual(try pack(verified)["tilesChecked"], true)
        XCTAssertEqual(try pack(verified)["tiles"], 5)
        XCTAssertEqual(verified["checked"]?.arrayValue?.contains("routingPackTiles"), true)
        let text = try ws.provision("audit", "--verify", "--store", ws.store.path, environment: epoch)
        XCTAssertTrue(text.stdout.contains("✓ drive: routing/drive.tar, 5 graph tiles"), text.stdout)

        // Bytes flipped inside a tile past its header: the index is whole, the tile's digest is not.
        var bytes = fresh
        let southEast = try RoutingTown.offset(of: "2/000/807/142.gph", in: bytes)
        bytes[southEast + 400] ^= 0xFF
        try bytes.write(to: tar)
        XCTAssertEqual(try pack(try audit(verify: false, whole: true))["whole"], true, "only --verify reads the tiles")
        let flipped = try audit(verify: true, whole: false)
        XCTAssertEqual(try pack(flipped)["whole"], false)
        XCTAssertEqual(try damagedPaths(flipped), ["2/000/807/142.gph"])
        XCTAssertTrue((flipped["problems"]?.arrayValue ?? []).contains {
            $0.stringValue?.contains("routing pack drive (routing/drive.tar): graph tile 2/000/807/142.gph its SHA-256") == true
        }, "\(flipped["problems"] ?? .null)")
        let planned = try ws.provision("plan", "--json", "--repair", job, environment: epoch)
        planned.expect(0)
        let plannedPack = try XCTUnwrap(try parseJSON(planned.stdout)["routingPacks"]?.arrayValue?.first)
        XCTAssertEqual(plannedPack["action"], "build")
        XCTAssertEqual(plannedPack["reason"], "repair: 1 damaged graph tile")
        XCTAssertEqual(plannedPack["tilesToDownload"], 1)
        XCTAssertEqual(try repair(job, fresh: fresh), ["2/000/807/142.gph"])

        // A graph id that is another tile's: the header check names it.
        bytes = fresh
        let level1 = try RoutingTown.offset(of: "1/050/585.gph", in: bytes)
        bytes[level1 + 1] ^= 0x01
        try bytes.write(to: tar)
        let moved = try audit(verify: true, whole: false)
        XCTAssertEqual(try damagedPaths(moved), ["1/050/585.gph"])
        let movedPack = try pack(moved)
        XCTAssertTrue(movedPack["damagedTiles"]?.arrayValue?.first?["problem"]?.stringValue?.contains("header check") == true,
                      "\(movedPack)")
        XCTAssertEqual(try repair(job, fresh: fresh), ["1/050/585.gph"])
    }

    func testACutShortTarAndAReplacedIndexAreRepairedFromWhatCanBeRead() throws {
        let (job, fresh) = try applied()
        // Cut inside the last tile: the index points past the end, the tiles before are whole.
        let last = try RoutingTown.offset(of: "2/000/808/580.gph", in: fresh)
        try fresh.prefix(last + 100).write(to: tar)
        let cut = try audit(verify: false, whole: false)
        let cutPack = try pack(cut)
        XCTAssertEqual(cutPack["fileChecked"], false)
        XCTAssertTrue(cutPack["problems"]?.arrayValue?.first?.stringValue?.hasPrefix("its index.bin cannot be trusted") == true, "\(cutPack)")
        let cutVerified = try audit(verify: true, whole: false)
        XCTAssertEqual(try damagedPaths(cutVerified), ["2/000/808/580.gph"])
        XCTAssertEqual(try pack(cutVerified)["damagedTiles"]?.arrayValue?.first?["problem"], "missing from the tar")
        XCTAssertEqual(try repair(job, fresh: fresh), ["2/000/808/580.gph"])

        // index.bin zeroed: nothing can be found through it, every tile is still whole in the tar.
        var bytes = fresh
        for i in 512 ..< 512 + 16 * 5 { bytes[i] = 0 }
        try bytes.write(to: tar)
        let zeroed = try audit(verify: true, whole: false)
        XCTAssertEqual(try damagedPaths(zeroed), [])
        XCTAssertEqual(try pack(zeroed)["whole"], false)
        XCTAssertEqual(try repair(job, fresh: fresh), [], "nothing to fetch: the tiles are read from the tar")

        // A plain apply over a tar the lock does not describe rebuilds it (fetching every tile).
        try fresh.prefix(last + 100).write(to: tar)
        try ws.provision("apply", "--quiet", job, environment: epoch).expect(0)
        XCTAssertEqual(try Data(contentsOf: tar), fresh)
    }

    func testAMissingTarAndAnUnknownFileAreNamed() throws {
        let (job, fresh) = try applied()
        try FileManager.default.removeItem(at: tar)
        try Data("not a pack".utf8).write(to: ws.store.appendingPathComponent("routing/bike.tar"))
        let missing = try audit(verify: true, whole: false)
        XCTAssertEqual(try pack(missing)["problems"], ["the file is missing"])
        XCTAssertEqual(try pack(missing)["fileChecked"], false)
        XCTAssertEqual(missing["unknownRoutingPackFiles"], ["routing/bike.tar"])
        XCTAssertTrue((missing["problems"]?.arrayValue ?? []).contains {
            $0.stringValue?.hasPrefix("routing/bike.tar is in the store's routing/ but the lock records no pack of it") == true
        })
        try FileManager.default.removeItem(at: ws.store.appendingPathComponent("routing/bike.tar"))
        XCTAssertEqual(try repair(job, fresh: fresh), Set(RoutingTown.tiles))
    }
}
