import Foundation
import ProvisionModel
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 3 #7: one writer per store. A second apply exits 73 at once naming the holder; an
/// owner file left by a dead process is taken over.
final class OneWriterTests: WorkspaceTestCase {
    override class var servesTiles: Bool { true }

    func testSecondApplyOnTheSameStoreExits73NamingTheHolder() throws {
        let slow = try ws.serveSlowTiles([Demo.manhattan], delay: 0.1)
        let job = try ws.write(ws.job([Demo.manhattan], tiles: .http)).path
        let first = try ws.start("apply", "--quiet", job)
        XCTAssertTrue(first.waitUntil(timeout: 20, watching: ws.server) { !ws.tileRequestPaths.isEmpty }, "the first apply is downloading")

        let requestsBefore = ws.server.requests.count
        let second = try ws.provision("apply", job)
        XCTAssertTrue(first.process.isRunning, "the first apply was still running during the second")
        second.expect(73, "second apply while the first runs")
        XCTAssertTrue(second.stderr.contains("\(first.pid)"), "stderr names the holder's pid \(first.pid): \(second.stderr)")
        XCTAssertTrue(second.stderr.contains("started"), "stderr says when the holder started: \(second.stderr)")
        XCTAssertEqual(second.stdout, "")
        let duringSecond = ws.server.requests.dropFirst(requestsBefore).filter { !slow.contains($0.path) }
        XCTAssertEqual(duringSecond.map(\.path), [], "the refused apply fetches nothing (not even the style)")

        // The first apply is not disturbed.
        first.wait(timeout: 30).expect(0, "the first apply")
        XCTAssertEqual(try ws.storedTilePaths(), slow)
        XCTAssertEqual(try ws.storeEntries(), ["offline.db", "provision.lock.json"])
        XCTAssertEqual(ws.tileRequestPaths.count, slow.count, "each tile fetched once")
    }

    func testOwnerFileOfADeadProcessIsTakenOver() throws {
        // The pid of a process that has ended.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/sh")
        gone.arguments = ["-c", "exit 0"]
        try gone.run()
        gone.waitUntilExit()
        let deadPid = gone.processIdentifier
        XCTAssertNotEqual(kill(deadPid, 0), 0, "the pid is free")

        try FileManager.default.createDirectory(at: ws.store, withIntermediateDirectories: true)
        let owner = ws.store.appendingPathComponent(".provision.lock-owner")
        let record = "{\"host\":\"elsewhere\",\"pid\":\(deadPid),\"startedAt\":\"2020-01-01T00:00:00Z\"}"
        try Data(record.utf8).write(to: owner)

        let job = try ws.write(ws.job([Demo.paris], tiles: .http)).path
        let result = try ws.provision("apply", job)
        result.expect(0, "apply takes over a stale owner file")
        XCTAssertTrue(result.stderr.contains("pid \(deadPid)"), "the takeover names the dead holder: \(result.stderr)")
        XCTAssertEqual(try ws.storeEntries(), ["offline.db", "provision.lock.json"], "the owner file is released")
        try ws.provision("audit", "--store", ws.store.path).expect(0)
    }
}
