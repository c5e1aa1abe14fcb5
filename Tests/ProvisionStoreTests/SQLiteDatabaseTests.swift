import Foundation
import XCTest
@testable import ProvisionStore

final class SQLiteDatabaseTests: XCTestCase {
    private func openScratch() throws -> SQLiteDatabase {
        let dir = try makeTemporaryDirectory(self)
        let db = try SQLiteDatabase(path: dir.appendingPathComponent("t.db").path)
        try db.exec("CREATE TABLE t (a, b TEXT UNIQUE)")
        return db
    }

    func testBindsEveryTypeAndKeepsStorageClasses() throws {
        let db = try openScratch()
        let values: [SQLiteValue] = [
            .int(-42), .double(1.5), .text("héllo"), .text(""), .blob(Data([0, 1, 2])), .blob(Data()), .null,
            .textBytes(Data("raw".utf8)),
        ]
        for (n, value) in values.enumerated() {
            try db.run("INSERT INTO t (a, b) VALUES (?1, ?2)", [value, .text("k\(n)")])
        }
        let rows = try db.query("SELECT typeof(a), a FROM t ORDER BY rowid") { ($0.text(0), $0.data(1)) }
        XCTAssertEqual(try db.query("SELECT a FROM t ORDER BY rowid") { $0.typeName(0) }, rows.map(\.0))
        XCTAssertEqual(rows.map(\.0), ["integer", "real", "text", "text", "blob", "blob", "null", "text"])
        XCTAssertEqual(rows[2].1, Data("héllo".utf8))
        XCTAssertEqual(rows[4].1, Data([0, 1, 2]))
        XCTAssertEqual(rows[5].1, Data())
        let ints = try db.query("SELECT a FROM t WHERE typeof(a) = 'integer'") { $0.int64(0) }
        XCTAssertEqual(ints, [-42])
    }

    /// A blob bound without a copy is stored whole, and the parameter is NULL again afterwards,
    /// so a statement stepped later never reads bytes that may be gone.
    func testABlobBoundWithoutACopyIsStoredAndUnboundAfterwards() throws {
        let db = try openScratch()
        let insert = try db.prepare("INSERT INTO t (a, b) VALUES (?1, ?2)")
        let big = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for (n, blob) in [big, Data([7]), Data(), nil].enumerated() {
            insert.reset()
            try insert.bind(.text("k\(n)"), at: 2)
            try insert.withBlob(blob, at: 1) { while try insert.step() {} }
        }
        insert.reset()
        try insert.bind(.text("after"), at: 2)
        while try insert.step() {}
        let rows = try db.query("SELECT typeof(a), a FROM t ORDER BY rowid") { ($0.text(0), $0.data(1)) }
        XCTAssertEqual(rows.map(\.0), ["blob", "blob", "blob", "null", "null"])
        XCTAssertEqual(rows[0].1, big)
        XCTAssertEqual(rows[1].1, Data([7]))
        XCTAssertEqual(rows[2].1, Data())
    }

    /// Reading a repeating text column reuses the string while the bytes stay the same.
    func testTextReusingThePreviousStringReadsEveryValue() throws {
        let db = try openScratch()
        for (n, text) in ["https://a/{z}/{x}/{y}", "https://a/{z}/{x}/{y}", "", "é", "https://a/{z}/{x}/{y}"].enumerated() {
            try db.run("INSERT INTO t (a, b) VALUES (?1, ?2)", [.text(text), .text("k\(n)")])
        }
        try db.run("INSERT INTO t (a, b) VALUES (NULL, 'null')")
        var previous = "unrelated"
        let read = try db.query("SELECT a FROM t ORDER BY rowid") { $0.text(0, reusing: &previous) }
        XCTAssertEqual(read, ["https://a/{z}/{x}/{y}", "https://a/{z}/{x}/{y}", "", "é", "https://a/{z}/{x}/{y}", ""])
    }

    func testRollsBackWhenTheBodyThrows() throws {
        let db = try openScratch()
        struct Boom: Error {}
        XCTAssertThrowsError(try db.inTransaction {
            try db.run("INSERT INTO t (a, b) VALUES (1, 'x')")
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.queryFirst("SELECT count(*) FROM t") { $0.int64(0) }, 0)
    }

    func testNestedTransactionRollsBackOnlyItsOwnWork() throws {
        let db = try openScratch()
        struct Boom: Error {}
        try db.inTransaction {
            try db.run("INSERT INTO t (a, b) VALUES (1, 'outer')")
            _ = try? db.inTransaction {
                try db.run("INSERT INTO t (a, b) VALUES (2, 'inner')")
                throw Boom()
            }
        }
        XCTAssertEqual(try db.query("SELECT b FROM t") { $0.text(0) }, ["outer"])
    }

    func testConstraintErrorCarriesExtendedCodeAndOneLineDescription() throws {
        let db = try openScratch()
        try db.run("INSERT INTO t (a, b) VALUES (1, 'same')")
        XCTAssertThrowsError(try db.run("INSERT INTO t (a, b) VALUES (2, 'same')")) { error in
            guard let error = error as? StoreError else { return XCTFail("not a StoreError: \(error)") }
            XCTAssertEqual(error.code, .sqlite)
            XCTAssertEqual(error.underlyingCode, 2067)  // SQLITE_CONSTRAINT_UNIQUE
            XCTAssertTrue(error.description.contains("UNIQUE constraint failed"), error.description)
            XCTAssertTrue(error.description.hasPrefix(db.path + ": "), error.description)
            XCTAssertFalse(error.description.contains("\n"))
        }
        // The cached statement still works after the failure.
        try db.run("INSERT INTO t (a, b) VALUES (3, 'other')")
        XCTAssertEqual(try db.queryFirst("SELECT count(*) FROM t") { $0.int64(0) }, 2)
    }

    func testUserVersionAndClose() throws {
        let db = try openScratch()
        XCTAssertEqual(try db.userVersion(), 0)
        try db.setUserVersion(6)
        XCTAssertEqual(try db.userVersion(), 6)
        _ = try db.prepare("SELECT * FROM t")
        try db.close()
        XCTAssertFalse(db.isOpen)
        try db.close()
        XCTAssertThrowsError(try db.exec("SELECT 1"))
    }

    func testNotADatabaseIsReportedAsCorrupt() throws {
        let dir = try makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("junk.db")
        try Data(repeating: 0x41, count: 4096).write(to: url)
        let db = try SQLiteDatabase(path: url.path)
        XCTAssertThrowsError(try db.userVersion()) { error in
            XCTAssertEqual((error as? StoreError)?.code, .corrupt)
            XCTAssertEqual((error as? StoreError)?.underlyingCode, 26)  // SQLITE_NOTADB
        }
    }
}
