import Foundation
import ProvisionFoundation
import XCTest

/// The lock's `files` (the size and SHA-256 of `offline.db`, what an app checks against a signed
/// lock before side-loading) as every writer of a lock records it, `audit --verify` checking it,
/// and a signature that no longer matches the lock a writer rewrote being removed. Digests are
/// checked against `openssl dgst`, signatures with `openssl pkeyutl`.
final class SignedFilesTests: SigningTestCase {
    private var job = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job).expect(0)
    }

    private func signature(of store: URL) -> URL { store.appendingPathComponent("provision.lock.json.sig") }

    /// The lock's `files` entry of `offline.db` in `store`.
    private func recorded(_ store: URL) throws -> JSONValue? {
        try readJSON(store.appendingPathComponent("provision.lock.json"))["files"]?.arrayValue?.first { $0["path"] == "offline.db" }
    }

    /// `offline.db`'s entry as `openssl dgst -sha256` and the file system give it (members in the
    /// lock's sorted order).
    private func actual(_ store: URL) throws -> JSONValue {
        let file = store.appendingPathComponent("offline.db")
        let digest = try run(openssl, "dgst", "-sha256", "-r", file.path)
        digest.expect(0)
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? -1
        return ["bytes": .int(size), "path": "offline.db", "sha256": .string(String(digest.stdout.prefix(64)))]
    }

    func testTheLockRecordsOfflineDBsSizeAndDigestAndAnUnchangedApplyKeepsIt() throws {
        let lock = try readJSON(ws.lock)
        XCTAssertEqual(lock["schemaVersion"], 7)
        XCTAssertEqual(try SchemaSubset(named: "lock.schema.json").problems(lock), [])
        XCTAssertEqual(lock["files"]?.arrayValue?.count, 1, "offline.db only: search packs have their own digest")
        XCTAssertEqual(try recorded(ws.store), try actual(ws.store))
        let before = try Data(contentsOf: ws.lock)
        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(try Data(contentsOf: ws.lock), before, "an apply that changes nothing writes the same lock")
        XCTAssertEqual(try recorded(ws.store), try actual(ws.store))
    }

    /// Bytes appended to `offline.db` change no row SQLite reads (the header says how many pages
    /// the database has), so only the file's digest tells: audit names the file, what the lock
    /// expects and what was found. The next apply records the file as it is.
    func testAuditVerifyNamesAnOfflineDBThatIsNotTheFileTheLockRecords() throws {
        let expected = try XCTUnwrap(try recorded(ws.store))
        let handle = try FileHandle(forWritingTo: ws.database)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0, count: 4096))
        try handle.close()
        let found = try actual(ws.store)
        try ws.provision("audit", "--store", ws.store.path).expect(0, "without --verify the file is not read")
        let audit = try ws.provision("audit", "--verify", "--json", "--store", ws.store.path)
        audit.expect(1)
        let problems = try parseJSON(audit.stdout)["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let bytes = expected["bytes"]?.intValue ?? 0
        XCTAssertEqual(problems, ["offline.db is not the file the lock records: expected \(grouped(bytes)) bytes, sha256 "
                                  + "\(expected["sha256"]?.stringValue ?? ""); found \(grouped(bytes + 4096)) bytes, sha256 "
                                  + "\(found["sha256"]?.stringValue ?? "")"], audit.stdout)
        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(try recorded(ws.store), found, "a file of another size is hashed again")
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)
    }

    /// Proven unchanged (its recorded size, modified before the lock was written), the file is not
    /// read again: the recorded entry stays, here a made-up digest to tell. Modified since, it is.
    func testAnApplyHashesOfflineDBAgainOnlyWhenItMayHaveChanged() throws {
        let made = String(repeating: "0", count: 64)
        let real = try actual(ws.store)
        var text = String(decoding: try Data(contentsOf: ws.lock), as: UTF8.self)
        text = text.replacingOccurrences(of: real["sha256"]?.stringValue ?? "-", with: made)
        try Data(text.utf8).write(to: ws.lock)
        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(try recorded(ws.store)?["sha256"]?.stringValue, made, "not read again")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: ws.database.path)
        try ws.provision("apply", "--quiet", job).expect(0)
        XCTAssertEqual(try recorded(ws.store), real, "modified after the lock: hashed again")
    }

    func testAnApplyWithoutTheKeyRemovesTheSignatureOfTheLockItReplaced() throws {
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        try ws.provision("apply", "--quiet", job).expect(0, "the same job: the same lock")
        try opensslVerify(ws.store).expect(0, "the signature of an unchanged lock stays, and still holds")

        let london = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "london.json").path
        let apply = try ws.provision("apply", london, "--progress", "json")
        apply.expect(0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: signature(of: ws.store).path), "it no longer matched the lock")
        let events = try apply.stderr.split(separator: "\n").map { try parseJSON(String($0)) }
        let removed = try XCTUnwrap(events.first { $0["event"] == "signature-removed" }, apply.stderr)
        XCTAssertEqual(try SchemaSubset(named: "events.schema.json").problems(removed), [])
        XCTAssertEqual(removed["signature"]?.stringValue, signature(of: ws.store).path)

        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        let text = try ws.provision("apply", job)
        text.expect(0)
        XCTAssertTrue(text.stderr.contains("The lock changed: its signature was removed"), text.stderr)
        XCTAssertTrue(text.stderr.contains("run 'provision sign --key KEY.pem'"), text.stderr)
    }

    /// A merge of shards into a signed store: the merged lock of the same bytes keeps its valid
    /// signature; a merge that replaces another lock removes it. Merged, the file digests are
    /// those of the whole apply (the files are the same bytes).
    func testMergeOfShardsRemovesAnOutdatedSignatureAndRecordsTheMergedFile() throws {
        let shard = ws.root.appendingPathComponent("shard0")
        try FileManager.default.copyItem(at: ws.store, to: shard)
        guard case .object(var lock) = try readJSON(ws.lock), let tiles = lock["store"]?["tiles"] else { return XCTFail("no lock") }
        lock["shard"] = ["index": 0, "count": 1, "firstTile": 0, "endTile": tiles, "totalTiles": tiles]
        try (JSONValue.object(lock).data(.prettySorted) + Data("\n".utf8)).write(to: shard.appendingPathComponent("provision.lock.json"))

        let out = ws.root.appendingPathComponent("out")
        let paris = try ws.write(ws.job([Demo.paris], tiles: .mbtiles), to: "paris.json").path
        try ws.provision("apply", "--quiet", paris, "--store", out.path, "--sign-key", "key.pem").expect(0)
        let merged = try ws.provision("merge", shard.path, "--store", out.path)
        merged.expect(0)
        XCTAssertTrue(merged.stderr.contains("The lock changed: its signature was removed"), merged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: signature(of: out).path))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("provision.lock.json")), try Data(contentsOf: ws.lock))
        XCTAssertEqual(try recorded(out), try actual(out))

        try ws.provision("sign", "--key", "key.pem", "--store", out.path).expect(0)
        try ws.provision("merge", "--quiet", shard.path, "--store", out.path).expect(0)
        try opensslVerify(out).expect(0, "the same merged lock: its signature stays and holds")
    }

    /// A side-loaded database with newer rows changes `offline.db`: the lock records the merged
    /// file, and the signature of the old lock is removed.
    func testSideLoadRecordsTheMergedFileAndRemovesTheOutdatedSignature() throws {
        let london = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "london.json").path
        let later = String(Int(Date().timeIntervalSince1970) + 3600)
        let device = ws.root.appendingPathComponent("device")
        try ws.provision("apply", "--quiet", london, "--store", device.path, environment: ["SOURCE_DATE_EPOCH": later]).expect(0)
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        let before = try recorded(ws.store)
        let merged = try ws.provision("merge", device.appendingPathComponent("offline.db").path, "--store", ws.store.path)
        merged.expect(0)
        XCTAssertTrue(merged.stderr.contains("The lock changed: its signature was removed"), merged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: signature(of: ws.store).path))
        XCTAssertNotEqual(try recorded(ws.store), before)
        XCTAssertEqual(try recorded(ws.store), try actual(ws.store))
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0)
    }

    /// `openssl pkeyutl -verify` of `store`'s lock and signature with `pub.pem`.
    private func opensslVerify(_ store: URL) throws -> ProcessResult {
        try run(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin",
                "-in", store.appendingPathComponent("provision.lock.json").path, "-sigfile", signature(of: store).path)
    }
}
