import Foundation
import ProvisionModel
import TileMath
import XCTest
@testable import ProvisionStore

/// SIGKILL a process writing batches through `OfflineDatabase` at several moments: each time
/// the store opens sound and holds exactly the batches it had committed (the one in flight at
/// most in addition, whole), so nothing finished is lost and nothing is torn.
///
/// The writer is this test bundle itself, run again with one `KillSafetyTests` test selected and an
/// environment variable naming the database (the class's set-up then writes, see `setUp()`): no
/// helper executable, and the code killed is the product's own.
final class KillSafetyTests: XCTestCase {
    private static let databaseVariable = "PROVISION_KILL_TEST_DATABASE"
    private static let holdVariable = "PROVISION_KILL_TEST_HOLD"
    private static let batchSize = 60
    private static let template = "https://t.example.com/{z}/{x}/{y}.png"

    private static func key(_ index: Int) -> TileKey {
        TileKey(urlTemplate: template, pixelRatio: 1, tile: TileID(z: 18, x: index, y: 5))
    }

    private static func payload(_ index: Int) -> Data {
        randomBytes(2_500, seed: UInt64(index) &+ 0x5151)
    }

    private static func batch(_ number: Int) -> [FetchedItem] {
        (number * batchSize..<(number + 1) * batchSize).map { index in
            let key = key(index)
            return FetchedItem(request: FetchRequest(url: "https://t.example.com/18/\(index)/5.png", kind: .tile,
                                                     tileKey: key, tile: key.tile),
                               body: FetchedBody(data: payload(index)))
        }
    }

    /// In the child (the test bundle run again with `databaseVariable` set), the class's set-up is
    /// the writer: it never returns to run a test, so the suite has no test that only a child can
    /// run (and that skips everywhere else).
    override class func setUp() {
        super.setUp()
        guard let path = ProcessInfo.processInfo.environment[databaseVariable] else { return }
        do {
            try childWriter(path: path)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("child writer: \(error)\n".utf8))
            exit(1)
        }
    }

    /// The child: resumes after the batches already stored and writes until killed, printing
    /// `committed <n>` after batch n is committed.
    private static func childWriter(path: String) throws {
        let store = try OfflineDatabase(url: URL(fileURLWithPath: path), epoch: 1)
        try store.tuneForBulkWrites()
        let first = try store.summary().tileCount / batchSize
        if ProcessInfo.processInfo.environment[holdVariable] != nil {
            // Spill pages to the file mid-transaction, then wait inside it to be killed.
            try store.db.exec("PRAGMA cache_size = 2")
            try store.db.inTransaction {
                try store.write(batch(first))
                try store.write(batch(first + 1))
                FileHandle.standardOutput.write(Data("inside\n".utf8))
                pause()  // until the parent's SIGKILL
            }
            return
        }
        for number in first..<(first + 10_000) {
            try store.write(batch(number))
            FileHandle.standardOutput.write(Data("committed \(number)\n".utf8))
        }
    }

    private func startChild(_ executable: String, database: URL, hold: Bool = false) throws -> (Process, Pipe) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["ProvisionStoreTests.KillSafetyTests/testAColdJournalIsRemovedByRecoveryAndByFinish"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.databaseVariable] = database.path
        environment[Self.holdVariable] = hold ? "1" : nil
        child.environment = environment
        let out = Pipe()
        child.standardOutput = out
        child.standardError = FileHandle.nullDevice
        try child.run()
        addTeardownBlock { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        return (child, out)
    }

    /// Killed inside a transaction whose pages already reached the file: the journal left
    /// behind is hot, a read-only open says so, and one read-write open rolls it back.
    func testAKillMidTransactionLeavesAHotJournalThatRollsBack() throws {
        #if !os(Linux)
        throw XCTSkip("re-running the test bundle is only wired up for Linux")
        #else
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent(StoreDirectory.databaseName)
        let setup = try OfflineDatabase(url: url, epoch: 1)
        try setup.write(Self.batch(0))
        let before = try setup.contentDigest()
        try setup.finish()

        let (child, out) = try startChild(executable, database: url, hold: true)
        var said = ""
        while !said.contains("inside\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { return XCTFail("child ended early: \(said)") }
            said += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertEqual(kill(child.processIdentifier, SIGKILL), 0)
        child.waitUntilExit()
        let journal = try FileManager.default.attributesOfItem(atPath: url.path + "-journal")
        XCTAssertGreaterThan((journal[.size] as? NSNumber)?.intValue ?? 0, 0)

        XCTAssertThrowsError(try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true))) { error in
            XCTAssertEqual((error as? StoreError)?.code, .hotJournal, "\(error)")
            XCTAssertTrue("\(error)".contains("interrupted"), "\(error)")
        }
        XCTAssertTrue(try OfflineDatabase.recoverInterruptedWrite(at: url))
        XCTAssertFalse(try OfflineDatabase.recoverInterruptedWrite(at: url), "nothing left to recover")
        let reader = try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true))
        XCTAssertEqual(try reader.integrityCheck(), [])
        XCTAssertEqual(try reader.contentDigest(), before, "exactly the state before the transaction")
        try reader.close()
        XCTAssertEqual(try StoreDirectory(url: dir).listUnexpectedFiles(), [])
        #endif
    }

    /// A writer killed between creating the journal and writing its header leaves a "cold"
    /// journal: readers ignore it, SQLite never deletes it; recovery and `finish()` do.
    func testAColdJournalIsRemovedByRecoveryAndByFinish() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent(StoreDirectory.databaseName)
        let journal = URL(fileURLWithPath: url.path + "-journal")
        let setup = try OfflineDatabase(url: url, epoch: 1)
        try setup.write(Self.batch(0))
        try setup.finish()
        try Data().write(to: journal)
        try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true)).close()
        XCTAssertTrue(try OfflineDatabase.recoverInterruptedWrite(at: url))
        XCTAssertEqual(try StoreDirectory(url: dir).listUnexpectedFiles(), [])

        try Data(count: 512).write(to: journal)
        let writer = try OfflineDatabase(url: url, epoch: 1)
        XCTAssertEqual(try writer.summary().tileCount, Self.batchSize)
        try writer.finish()
        XCTAssertEqual(try StoreDirectory(url: dir).listUnexpectedFiles(), [])
    }

    func testKilledWriterLeavesWholeCommittedBatches() throws {
        #if !os(Linux)
        throw XCTSkip("re-running the test bundle is only wired up for Linux")
        #else
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent(StoreDirectory.databaseName)
        try OfflineDatabase(url: url, epoch: 1).finish()
        var journals = 0
        var hotJournals = 0
        for round in 0..<6 {
            let (child, out) = try startChild(executable, database: url)

            // Wait for a few commits of this run (more each round), then kill at once: the child
            // goes on writing while its line is read, so the kill lands somewhere in a later batch
            // (a kill inside a transaction whose pages reached the file is made certain by
            // testAKillMidTransactionLeavesAHotJournalThatRollsBack). No sleep picks the moment.
            var lastReported = -1
            var reportedThisRun = 0
            var pending = ""
            while reportedThisRun < 2 + round {
                let chunk = out.fileHandleForReading.availableData
                guard !chunk.isEmpty else { return XCTFail("child ended early in round \(round)") }
                pending += String(decoding: chunk, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = pending[..<newline]
                    pending = String(pending[pending.index(after: newline)...])
                    if line.hasPrefix("committed "), let n = Int(line.dropFirst("committed ".count)) {
                        lastReported = n
                        reportedThisRun += 1
                    }
                }
            }
            XCTAssertEqual(kill(child.processIdentifier, SIGKILL), 0)
            child.waitUntilExit()
            XCTAssertEqual(child.terminationReason, .uncaughtSignal)

            if FileManager.default.fileExists(atPath: url.path + "-journal") {
                journals += 1
                // A read-only reader cannot roll a hot journal back and says so (a cold one,
                // left before its header was written, does not stop it).
                do {
                    try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true)).close()
                } catch let error as StoreError {
                    XCTAssertEqual(error.code, .hotJournal, "\(error)")
                    hotJournals += 1
                }
                XCTAssertTrue(try OfflineDatabase.recoverInterruptedWrite(at: url), "round \(round)")
            }
            let reader = try OfflineDatabase(url: url, epoch: 1, options: .init(readOnly: true))
            XCTAssertEqual(try reader.integrityCheck(), [], "round \(round)")
            let count = try reader.summary().tileCount
            XCTAssertEqual(count % Self.batchSize, 0, "round \(round): a torn batch (\(count) tiles)")
            let batches = count / Self.batchSize
            // Reporting lags committing, so more may be stored than was reported, never less.
            XCTAssertGreaterThanOrEqual(batches, lastReported + 1,
                                        "round \(round): \(batches) batches stored, \(lastReported + 1) reported committed")
            let lastIndex = count - 1
            XCTAssertEqual(try reader.tileData(Self.key(lastIndex)), Self.payload(lastIndex), "round \(round)")
            XCTAssertEqual(try reader.storedKeys([Self.key(count)]), [], "round \(round)")
            try reader.close()
        }
        let final = try OfflineDatabase(url: url, epoch: 1)
        let digest = try final.contentDigest()
        XCTAssertEqual(digest.byteCount, Int64(digest.tileCount * 2_500), "every payload whole")
        try final.finish()
        XCTAssertEqual(try StoreDirectory(url: dir).listUnexpectedFiles(), [])
        print("kill safety: 6 kills, \(journals) left a journal (\(hotJournals) hot), \(digest.tileCount) tiles intact")
        #endif
    }
}
