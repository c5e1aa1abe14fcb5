import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// Issue 22: a sharded apply fetches an equal, contiguous share of each routing pack's graph-tile
/// cells per shard (each tile fetched once over all shards), and `merge` writes the extract and
/// lock one apply of the whole job writes, byte for byte.
final class RoutingPackMergeTests: WorkspaceTestCase {
    private func file(_ store: URL, _ name: String) throws -> Data {
        try Data(contentsOf: store.appendingPathComponent(name))
    }

    func testShardsFetchTheirShareAndMergeToTheSingleApplysBytes() throws {
        let job = try RoutingTown.job(ws, [RoutingTown.west, RoutingTown.east], graph: .string(try RoutingTown.serve(ws)),
                                      mapped: [Demo.london])
        try ws.provision("apply", "--quiet", job, environment: RoutingTown.epoch).expect(0)
        let single = ws.requests(under: "/graph/").count
        XCTAssertEqual(single, 8, "5 tiles and 3 cells without roads")
        let schema = try SchemaSubset(named: "lock.schema.json")

        for count in [2, 3] {
            let before = ws.requests(under: "/graph/").count
            var held: [Int] = []
            let shards = (0..<count).map { ws.root.appendingPathComponent("shard\($0)of\(count)") }
            for (index, store) in shards.enumerated() {
                if count == 3 && index == 2 {
                    // A saved plan's routing packs are planned again from the job: to the shard's share too.
                    let saved = ws.root.appendingPathComponent("shard2of3.plan.json").path
                    try ws.provision("plan", "--quiet", job, "--shard", "2/3", "--store", store.path, "--out", saved,
                                     environment: RoutingTown.epoch).expect(0)
                    try ws.provision("apply", "--quiet", saved, environment: RoutingTown.epoch).expect(0, "saved shard plan")
                } else {
                    try ws.provision("apply", "--quiet", job, "--shard", "\(index)/\(count)", "--store", store.path,
                                     environment: RoutingTown.epoch).expect(0, "shard \(index)/\(count)")
                }
                let lock = try readJSON(store.appendingPathComponent("provision.lock.json"))
                XCTAssertEqual(schema.problems(lock), [], "shard \(index)/\(count)'s lock")
                let record = try XCTUnwrap(lock["routingPacks"]?.arrayValue?.first)
                held.append((record["tiles"]?.arrayValue?.count ?? 0) + (record["absent"]?.arrayValue?.count ?? 0))
            }
            XCTAssertEqual(held.reduce(0, +), 8, "the shares of \(count) shards cover the 8 cells once: \(held)")
            XCTAssertLessThanOrEqual(held.max()! - held.min()!, 1, "equal shares: \(held)")
            XCTAssertEqual(ws.requests(under: "/graph/").count - before, single, "each cell asked for once over \(count) shards")

            let merged = ws.root.appendingPathComponent("merged\(count)")
            let result = try ProvisionProcess.provision(["merge"] + shards.reversed().map(\.path) + ["--store", merged.path],
                                                        in: ws.root, environment: RoutingTown.epoch)
            result.expect(0, "merge of \(count)")
            XCTAssertTrue(result.stdout.contains("Routing pack drive: routing/drive.tar, 5 graph tiles."), result.stdout)
            for name in ["routing/drive.tar", "provision.lock.json", "offline.db"] {
                XCTAssertTrue(try file(merged, name) == file(ws.store, name), "\(name) of \(count) shards equals the single apply's")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: merged.appendingPathComponent("routing/.merging").path))
        }
    }

    /// A shard whose apply did not write the pack, or whose extract is damaged, fails the merge by name (65).
    func testAMissingOrDamagedShardPackFailsTheMerge() throws {
        let town = try ValhallaFixture.town()
        let job = try RoutingTown.job(ws, [RoutingTown.west, RoutingTown.east], graph: .string(town.tileDirectory.path),
                                      mapped: [Demo.london])
        let shards = (0..<2).map { ws.root.appendingPathComponent("shard\($0)") }
        for (index, store) in shards.enumerated() {
            try ws.provision("apply", "--quiet", job, "--shard", "\(index)/2", "--store", store.path,
                             environment: RoutingTown.epoch).expect(0)
        }
        let tar = shards[1].appendingPathComponent("routing/drive.tar")
        var bytes = try Data(contentsOf: tar)
        let path = try XCTUnwrap(RoutingTown.tiles.last)
        bytes[try RoutingTown.offset(of: path, in: bytes) + 400] ^= 0xFF
        try bytes.write(to: tar)
        let merged = ws.root.appendingPathComponent("merged")
        let damaged = try ws.provision("merge", shards[0].path, shards[1].path, "--store", merged.path, environment: RoutingTown.epoch)
        damaged.expect(65, "a damaged shard pack")
        XCTAssertTrue(damaged.stderr.contains("routing pack 'drive'") && damaged.stderr.contains(path), damaged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: merged.appendingPathComponent("routing/drive.tar").path))
    }
}
