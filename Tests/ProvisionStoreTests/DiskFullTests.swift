import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath
import ProvisionTestSupport
import XCTest
@testable import ProvisionStore

/// A full disk ends a write with `.diskFull` and a message a user can act on; the store keeps
/// exactly the batches committed before and opens sound.
final class DiskFullTests: XCTestCase {
    private let template = "https://t.example.com/{z}/{x}/{y}.png"
    private let batchSize = 8

    private func key(_ index: Int) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: 16, x: index, y: 7))
    }

    /// Batch `number`: `batchSize` incompressible tiles of 3,000 bytes.
    private func batch(_ number: Int) -> [FetchedItem] {
        (0..<batchSize).map { i in
            let key = key(number * batchSize + i)
            return FetchedItem(request: FetchRequest(url: "https://t.example.com/16/\(key.tile.x)/7.png", kind: .tile,
                                                     tileKey: key, tile: key.tile),
                               body: FetchedBody(data: randomBytes(3_000, seed: UInt64(number * batchSize + i + 1))))
        }
    }

    /// Writes batches until one fails; returns how many were committed and the error.
    private func writeUntilFull(_ store: OfflineDatabase, limit: Int = 1_000) throws -> (committed: Int, error: StoreError) {
        for number in 0..<limit {
            do {
                try store.write(batch(number))
            } catch let error as StoreError {
                return (number, error)
            }
        }
        throw DiskNeverFilled(batches: limit)  // a swallowed ENOSPC looks exactly like this: a failure, never a skip
    }

    /// Reopens the file and checks it holds batches 0..<committed and nothing else.
    private func assertHoldsExactly(_ committed: Int, at url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let reopened = try OfflineDatabase(url: url, epoch: 1)
        defer { try? reopened.close() }
        XCTAssertEqual(try reopened.integrityCheck(), [], file: file, line: line)
        XCTAssertEqual(try reopened.summary().tileCount, committed * batchSize, file: file, line: line)
        let expected = Set((0..<(committed * batchSize)).map(key))
        XCTAssertEqual(try reopened.storedKeys(Array(expected)), expected, file: file, line: line)
        let failing = (committed * batchSize..<(committed + 1) * batchSize).map(key)
        XCTAssertEqual(try reopened.storedKeys(failing), [], "no part of the failing batch", file: file, line: line)
        XCTAssertEqual(try reopened.tileData(key(0)), randomBytes(3_000, seed: 1), file: file, line: line)
    }

    private func assertDiskFullMessage(_ error: StoreError, path: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(error.code, .diskFull, "\(error)", file: file, line: line)
        XCTAssertTrue(error.message.hasPrefix("the disk is full while writing \(path): free space and run apply again; "
                                                + "the store keeps every committed batch"), error.message, file: file, line: line)
        XCTAssertEqual(error.path, path, file: file, line: line)
    }

    func testSQLiteFullFromMaxPageCountKeepsEveryCommittedBatch() throws {
        let url = try makeTemporaryDirectory(self).appendingPathComponent("offline.db")
        let store = try OfflineDatabase(url: url, epoch: 1)
        try store.tuneForBulkWrites()
        try store.write(batch(0))
        let pages = try XCTUnwrap(store.db.queryFirst("PRAGMA page_count") { $0.int64(0) })
        // Room for a few more batches, then SQLITE_FULL (13) at a deterministic point.
        try store.db.exec("PRAGMA max_page_count = \(pages + 30)")
        let (committed, error) = try writeUntilFull(store)
        XCTAssertGreaterThan(committed, 1)
        assertDiskFullMessage(error, path: url.path)
        XCTAssertEqual(error.underlyingCode, 13)
        XCTAssertTrue(error.description.hasSuffix("(disk-full, sqlite 13)"), error.description)
        XCTAssertFalse(store.db.isInTransaction, "the failing batch was rolled back")
        // The connection stays usable after the failure.
        XCTAssertEqual(try store.storedKeys([key(0)]), [key(0)])
        try store.close()
        try assertHoldsExactly(committed, at: url)
        XCTAssertEqual(try StoreDirectory(url: url.deletingLastPathComponent()).listUnexpectedFiles(), [],
                       "no journal left behind")
    }

    func testENOSPCFromALockFileWriteIsDiskFull() throws {
        // /dev/full answers every write with ENOSPC; the rename target is never reached.
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw MissingTool("/dev/full", package: "nothing: Linux has it") }
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("provision.lock.json")
        try AtomicFile.write(["schemaVersion": 1], to: url)
        let temporary = dir.appendingPathComponent(".provision.lock.json.tmp-\(getpid())")
        try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: "/dev/full")
        XCTAssertThrowsError(try AtomicFile.write(["schemaVersion": 2], to: url)) { error in
            guard let error = error as? StoreError else { return XCTFail("\(error)") }
            self.assertDiskFullMessage(error, path: url.path)
            XCTAssertEqual(error.underlyingCode, ENOSPC)
            XCTAssertTrue(error.description.contains("errno \(ENOSPC)"), error.description)
        }
        XCTAssertEqual(try AtomicFile.readJSON(from: url), ["schemaVersion": 1], "the previous lock is intact")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["provision.lock.json"])
    }

    /// A real full file system: a 384 KiB tmpfs mounted for the test (root only).
    func testARealFullFileSystemLeavesTheStoreAndTheLockAsTheyWere() throws {
        let dir = try makeTemporaryDirectory(self).appendingPathComponent("mnt")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try mountSmallFileSystem(at: dir)
        let store = try StoreDirectory(url: dir)
        try AtomicFile.write(["schemaVersion": 1, "note": "before"], to: store.lockURL)

        let database = try OfflineDatabase(url: store.databaseURL, epoch: 1)
        try database.tuneForBulkWrites()
        let (committed, error) = try writeUntilFull(database)
        XCTAssertGreaterThan(committed, 0)
        assertDiskFullMessage(error, path: store.databaseURL.path)
        XCTAssertFalse(database.db.isInTransaction)
        try database.close()
        try assertHoldsExactly(committed, at: store.databaseURL)
        XCTAssertEqual(try store.listUnexpectedFiles(), [], "no journal left behind")

        // Take whatever room is left, then a bigger lock cannot be written: the old one stays.
        let filler = dir.appendingPathComponent("filler")
        XCTAssertTrue(FileManager.default.createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        let chunk = Data(count: 4_096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try handle.close()
        let big: JSONValue = ["schemaVersion": 2, "padding": .string(String(repeating: "x", count: 64_000))]
        XCTAssertThrowsError(try AtomicFile.write(big, to: store.lockURL)) { error in
            guard let error = error as? StoreError else { return XCTFail("\(error)") }
            self.assertDiskFullMessage(error, path: store.lockURL.path)
        }
        XCTAssertEqual(try AtomicFile.readJSON(from: store.lockURL), ["note": "before", "schemaVersion": 1], "written sorted")
        XCTAssertEqual(try store.listUnexpectedFiles(), ["filler"], "the temporary lock file was removed")
    }

    private func mountSmallFileSystem(at dir: URL) throws {
        guard geteuid() == 0 else { throw XCTSkip("full-disk test needs root to mount a small tmpfs") }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=384k", "tmpfs", dir.path]
        let errors = Pipe()
        mount.standardError = errors
        do { try mount.run() } catch { throw MissingTool("/bin/mount (\(error))", package: "mount") }
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw XCTSkip("cannot mount a tmpfs (\(text.trimmingCharacters(in: .whitespacesAndNewlines)))")
        }
        addTeardownBlock {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [dir.path]
            if (try? umount.run()) != nil { umount.waitUntilExit() }
        }
    }
}

/// The small file system took every batch: the test never reached the ENOSPC it checks.
private struct DiskNeverFilled: Error, CustomStringConvertible {
    var batches: Int
    var description: String { "the small file system never filled up after \(batches) batches: ENOSPC was swallowed, or the mount is not the size asked" }
}
