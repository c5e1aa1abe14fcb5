import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport
import XCTest
@testable import ProvisionStore

final class ApplyLeaseTests: XCTestCase {
    private let started = Date(timeIntervalSince1970: 1_700_000_000)

    func testOneHolderAtATimeInOneProcessAndTheFileIsGoneAfterRelease() throws {
        let dir = try makeTemporaryDirectory(self)
        let store = try StoreDirectory(url: dir)
        let first = try ApplyLease.acquire(directory: dir, startedAt: started)
        XCTAssertTrue(first.isHeld)
        XCTAssertNil(first.previousHolder)
        XCTAssertEqual(first.url, store.lockOwnerURL)
        XCTAssertEqual(first.holder.pid, getpid())
        XCTAssertEqual(first.holder.startedAt, "2023-11-14T22:13:20Z")
        XCTAssertFalse(first.holder.host.isEmpty)
        // The owner file names the holder.
        let recorded = try XCTUnwrap(ApplyLease.recordedHolder(directory: dir))
        XCTAssertEqual(recorded, first.holder)
        XCTAssertEqual(try store.listUnexpectedFiles(), [".provision.lock-owner"])

        // A second lock (a separate open file description) conflicts and names the holder.
        XCTAssertThrowsError(try ApplyLease.acquire(directory: dir)) { error in
            guard let error = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .locked)
            XCTAssertTrue(error.message.contains("pid \(getpid())"), error.message)
            XCTAssertTrue(error.message.contains("host \(first.holder.host)"), error.message)
            XCTAssertTrue(error.message.contains("started 2023-11-14T22:13:20Z"), error.message)
            XCTAssertTrue(error.message.contains(dir.path), error.message)
        }
        // The failed attempt did not disturb the holder's record.
        XCTAssertEqual(ApplyLease.recordedHolder(directory: dir), first.holder)

        first.release()
        XCTAssertFalse(first.isHeld)
        first.release()  // harmless twice
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.lockOwnerURL.path))
        XCTAssertEqual(try store.listUnexpectedFiles(), [])

        let second = try ApplyLease.acquire(directory: dir)
        XCTAssertNil(second.previousHolder, "a released lock leaves nothing behind")
        second.release()
    }

    func testDroppingTheLockReleasesIt() throws {
        let dir = try makeTemporaryDirectory(self)
        do { _ = try ApplyLease.acquire(directory: dir) }
        let again = try ApplyLease.acquire(directory: dir)
        XCTAssertTrue(again.isHeld)
        again.release()
    }

    func testAStaleFileWithNoLockIsTakenOverAndItsHolderReported() throws {
        let dir = try makeTemporaryDirectory(self)
        let stale = ApplyLease.Holder(pid: 999_999, host: "gone.example", startedAt: "2020-01-01T00:00:00Z")
        try Data(stale.json.serialized(.canonical).utf8).write(to: dir.appendingPathComponent(ApplyLease.fileName))
        let lock = try ApplyLease.acquire(directory: dir)
        XCTAssertEqual(lock.previousHolder, stale)
        XCTAssertEqual(ApplyLease.recordedHolder(directory: dir), lock.holder, "record rewritten, not appended to")
        lock.release()
        // Garbage in a stale file is taken over too (no previous holder to report).
        try Data("not json at all, and longer than the new record is going to be".utf8)
            .write(to: dir.appendingPathComponent(ApplyLease.fileName))
        let other = try ApplyLease.acquire(directory: dir)
        XCTAssertNil(other.previousHolder)
        XCTAssertEqual(ApplyLease.recordedHolder(directory: dir), other.holder)
        other.release()
    }

    func testAMissingDirectoryIsAnIOError() throws {
        let dir = try makeTemporaryDirectory(self).appendingPathComponent("missing")
        XCTAssertThrowsError(try ApplyLease.acquire(directory: dir)) { XCTAssertEqual(($0 as? StoreError)?.code, .io) }
    }

    /// A child process holds the lock; once it is killed with SIGKILL the kernel releases it
    /// and the file it left behind is taken over.
    func testALockHeldByAnotherProcessThenKilledIsTakenOver() throws {
        let dir = try makeTemporaryDirectory(self)
        let script = """
            import fcntl, json, os, signal, socket, sys
            fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, json.dumps({"pid": os.getpid(), "host": "child.example",
                                     "startedAt": "2024-02-03T04:05:06Z"}).encode())
            print("held", os.getpid(), flush=True)
            signal.pause()  # until the parent kills it
            """
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = ["python3", "-c", script, dir.appendingPathComponent(ApplyLease.fileName).path]
        let out = Pipe()
        child.standardOutput = out
        try child.run()
        addTeardownBlock { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        var output = Data()
        while !output.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
        }
        let line = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let words = line.split(separator: " ")
        XCTAssertEqual(words.first, "held", "child said: \(line)")
        // The python process itself (a pyenv shim may stand between it and `child`).
        let childPID = try XCTUnwrap(words.last.flatMap { Int32($0) }, "child said: \(line)")
        addTeardownBlock { kill(childPID, SIGKILL) }

        XCTAssertThrowsError(try ApplyLease.acquire(directory: dir)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .locked)
            let message = (error as? StoreError)?.message ?? ""
            XCTAssertTrue(message.contains("pid \(childPID) on host child.example, started 2024-02-03T04:05:06Z"),
                          message)
        }
        XCTAssertEqual(kill(childPID, SIGKILL), 0)
        child.waitUntilExit()

        let lock = try ApplyLease.acquire(directory: dir)
        XCTAssertEqual(lock.previousHolder,
                       ApplyLease.Holder(pid: childPID, host: "child.example", startedAt: "2024-02-03T04:05:06Z"))
        lock.release()
    }

    /// flock(1) in a child process: the lock excludes it while held, and the other way round.
    func testExcludesAndIsExcludedByFlockOne() throws {
        let flockTool = "/usr/bin/flock"
        guard FileManager.default.isExecutableFile(atPath: flockTool) else {
            throw MissingTool(flockTool, package: "util-linux")
        }
        let dir = try makeTemporaryDirectory(self)
        let lockPath = dir.appendingPathComponent(ApplyLease.fileName).path
        func runFlock() throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: flockTool)
            process.arguments = ["--nonblock", "--conflict-exit-code", "9", lockPath, "true"]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        let lock = try ApplyLease.acquire(directory: dir)
        XCTAssertEqual(try runFlock(), 9, "flock(1) must find the file locked")
        lock.release()
        XCTAssertEqual(try runFlock(), 0, "and free once released")
    }
}
