import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest
@testable import ProvisionStore

final class AtomicFileTests: XCTestCase {
    func testWritesPrettySortedJSONWithANewlineAndReadsItBack() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("provision.lock.json")
        XCTAssertNil(try AtomicFile.readJSON(from: url))
        let value: JSONValue = ["schemaVersion": 1, "b": [1.0, "x"], "a": ["z": true, "y": nil]]
        try AtomicFile.write(value, to: url)
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        XCTAssertEqual(text, value.serialized(.prettySorted) + "\n")
        XCTAssertTrue(text.hasPrefix("{\n  \"a\": {\n    \"y\": null,"), text)
        XCTAssertEqual(try AtomicFile.readJSON(from: url)?.serialized(.canonical), value.serialized(.canonical))
        // Overwrite replaces the whole file and leaves no temporary file behind.
        try AtomicFile.write(["schemaVersion": 2], to: url)
        XCTAssertEqual(try AtomicFile.readJSON(from: url), ["schemaVersion": 2])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["provision.lock.json"])
    }

    func testInvalidJSONAndUnwritableDirectoryAreStoreErrors() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("provision.lock.json")
        try Data("{ nope".utf8).write(to: url)
        XCTAssertThrowsError(try AtomicFile.readJSON(from: url)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .invalidFile)
            XCTAssertTrue("\(error)".contains("line 1"), "\(error)")
        }
        let missingDir = dir.appendingPathComponent("no/such/dir/provision.lock.json")
        XCTAssertThrowsError(try AtomicFile.write(["a": 1], to: missingDir)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .io)
        }
    }

    func testWritesBytesAsGivenAndReplacesAFileByRenaming() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("report.json")
        try AtomicFile.write(Data("first".utf8), to: url)
        try AtomicFile.write(Data([0, 1, 2]), to: url)
        XCTAssertEqual(try Data(contentsOf: url), Data([0, 1, 2]), "bytes as given, no newline added")
        let next = dir.appendingPathComponent("next.db")
        try Data("next".utf8).write(to: next)
        try AtomicFile.replace(url, with: next)
        XCTAssertEqual(try Data(contentsOf: url), Data("next".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: next.path), "moved, not copied")
        XCTAssertThrowsError(try AtomicFile.replace(url, with: dir.appendingPathComponent("missing"))) {
            XCTAssertEqual(($0 as? StoreError)?.code, .io)
        }
        XCTAssertEqual(try Data(contentsOf: url), Data("next".utf8), "a failed replace leaves the file as it was")
    }
}

final class StoreDirectoryTests: XCTestCase {
    func testCreatesTheDirectoryAndListsUnexpectedFiles() throws {
        let root = try makeTemporaryDirectory(self)
        let store = try StoreDirectory(url: root.appendingPathComponent("a/b/store"))
        XCTAssertEqual(store.databaseURL.lastPathComponent, "offline.db")
        XCTAssertEqual(store.lockURL.lastPathComponent, "provision.lock.json")
        XCTAssertEqual(try store.listUnexpectedFiles(), [])
        let db = try OfflineDatabase(url: store.databaseURL, epoch: 0)
        try db.finish()
        try AtomicFile.write(["schemaVersion": 1], to: store.lockURL)
        XCTAssertEqual(try store.listUnexpectedFiles(), [])
        try Data().write(to: store.url.appendingPathComponent("offline.db-journal"))
        try Data().write(to: store.url.appendingPathComponent("notes.txt"))
        XCTAssertEqual(try store.listUnexpectedFiles(), ["notes.txt", "offline.db-journal"])
    }

    func testRefusesAFileOrAMissingDirectoryWhenNotCreating() throws {
        let root = try makeTemporaryDirectory(self)
        let file = root.appendingPathComponent("file")
        try Data().write(to: file)
        XCTAssertThrowsError(try StoreDirectory(url: file)) { XCTAssertEqual(($0 as? StoreError)?.code, .io) }
        XCTAssertThrowsError(try StoreDirectory(url: root.appendingPathComponent("missing"), create: false)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .cannotOpen)
        }
    }
}
