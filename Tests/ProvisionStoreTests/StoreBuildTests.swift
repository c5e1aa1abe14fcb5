import Foundation
import ProvisionModel
import ProvisionStore
import XCTest

/// One apply's hold on a store: the lock, recovery, the canonical file and the build time.
final class StoreBuildTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("build-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    private var path: StorePath { StorePath(url: root) }

    func testASecondBuildIsRefusedWhileTheFirstHoldsTheStore() throws {
        let first = try StoreBuild(locking: path)
        XCTAssertThrowsError(try StoreBuild(locking: path)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .locked)
        }
        first.release()
        XCTAssertNoThrow(try StoreBuild(locking: path).release())
    }

    func testFinishRenamesTheCanonicalFileOverTheDatabaseAndWritesTheLockOnce() throws {
        let build = try StoreBuild(locking: path)
        _ = try build.openStaging(epoch: 5)
        let writer = try build.beginCanonical(epoch: 5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path.partialBuildURL.path))
        _ = try writer.addRegion(definition: Data(#"{"a":1}"#.utf8), description: nil)
        let content = try build.finish(epoch: 5, unchanged: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path.partialBuildURL.path), "the canonical file was renamed")
        XCTAssertTrue(path.hasDatabase)
        XCTAssertEqual(content.tileCount, 0)

        try build.writeLock(Data("{}\n".utf8))
        let written = try FileManager.default.attributesOfItem(atPath: path.lockURL.path)[.modificationDate] as? Date
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: path.lockURL.path)
        try build.writeLock(Data("{}\n".utf8))
        let after = try FileManager.default.attributesOfItem(atPath: path.lockURL.path)[.modificationDate] as? Date
        XCTAssertNotNil(written)
        XCTAssertEqual(after, Date(timeIntervalSince1970: 0), "the same bytes are not written again")
        build.release()
    }

    func testAbandonRemovesTheCanonicalFile() throws {
        let build = try StoreBuild(locking: path)
        _ = try build.openStaging(epoch: 5)
        _ = try build.beginCanonical(epoch: 5)
        build.abandon()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path.partialBuildURL.path))
        XCTAssertEqual(try build.recover(), 0, "nothing is left to take back")
        build.release()
    }

    func testBuildTimeOrder() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        XCTAssertEqual(path.buildTime(sourceDateEpoch: 42, clock: 100, lockEpoch: 90, lockIsIncomplete: true), 42)
        XCTAssertEqual(path.buildTime(sourceDateEpoch: nil, clock: 100, lockEpoch: 90, lockIsIncomplete: true), 90,
                       "an unfinished build keeps its time")
        XCTAssertEqual(path.buildTime(sourceDateEpoch: nil, clock: 100, lockEpoch: 90, lockIsIncomplete: false), 100)
        XCTAssertEqual(path.buildTime(sourceDateEpoch: nil, clock: 50, lockEpoch: 90, lockIsIncomplete: false), 91,
                       "never earlier than the last build")
    }

    func testStateDigestChangesWithTheFiles() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let empty = try path.stateDigest()
        try Data("x".utf8).write(to: path.lockURL)
        let withLock = try path.stateDigest()
        XCTAssertNotEqual(empty, withLock)
        try Data("y".utf8).write(to: path.lockURL)
        XCTAssertNotEqual(withLock, try path.stateDigest())
        try FileManager.default.createDirectory(at: path.databaseURL, withIntermediateDirectories: true)
        XCTAssertThrowsError(try path.stateDigest(), "an offline.db that is there but cannot be read is an error, not 'absent'")
    }

    func testUnexpectedFilesAreListedAndADirectoryThatCannotBeListedIsAnError() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: path.lockURL)
        try Data("y".utf8).write(to: root.appendingPathComponent("notes.txt"))
        XCTAssertEqual(try path.unexpectedFiles(), ["notes.txt"])
        try FileManager.default.removeItem(at: root)
        try Data("a file".utf8).write(to: root)
        XCTAssertThrowsError(try path.unexpectedFiles(), "a store path that cannot be listed is not 'nothing unexpected'")
    }
}
