import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionStore

final class LockFileTests: XCTestCase {
    func testWritesPrettySortedJSONWithANewlineAndReadsItBack() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("provision.lock.json")
        XCTAssertNil(try LockFile.read(from: url))
        let value: JSONValue = ["schemaVersion": 1, "b": [1.0, "x"], "a": ["z": true, "y": nil]]
        try LockFile.write(value, to: url)
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        XCTAssertEqual(text, value.serialized(.prettySorted) + "\n")
        XCTAssertTrue(text.hasPrefix("{\n  \"a\": {\n    \"y\": null,"), text)
        XCTAssertEqual(try LockFile.read(from: url)?.serialized(.canonical), value.serialized(.canonical))
        // Overwrite replaces the whole file and leaves no temporary file behind.
        try LockFile.write(["schemaVersion": 2], to: url)
        XCTAssertEqual(try LockFile.read(from: url), ["schemaVersion": 2])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["provision.lock.json"])
    }

    func testInvalidJSONAndUnwritableDirectoryAreStoreErrors() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("provision.lock.json")
        try Data("{ nope".utf8).write(to: url)
        XCTAssertThrowsError(try LockFile.read(from: url)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .invalidFile)
            XCTAssertTrue("\(error)".contains("line 1"), "\(error)")
        }
        let missingDir = dir.appendingPathComponent("no/such/dir/provision.lock.json")
        XCTAssertThrowsError(try LockFile.write(["a": 1], to: missingDir)) {
            XCTAssertEqual(($0 as? StoreError)?.code, .io)
        }
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
        try LockFile.write(["schemaVersion": 1], to: store.lockURL)
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
