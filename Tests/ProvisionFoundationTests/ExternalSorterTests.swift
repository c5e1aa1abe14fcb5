import Foundation
import ProvisionFoundation
import XCTest

final class ExternalSorterTests: XCTestCase {
    private func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sorter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Records with short keys that repeat, are prefixes of each other and hold 00 and FF bytes,
    /// each value its sequence number (so the order of equal keys shows).
    private func records(_ count: Int) -> [(key: [UInt8], value: [UInt8])] {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [0, 1, 0x41, 0x42, 0xff]
        return (0..<count).map { n in
            let key = (0..<Int.random(in: 0...3, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            return (key, Array("\(n)".utf8))
        }
    }

    private func sorted(_ records: [(key: [UInt8], value: [UInt8])], budget: Int) throws -> (runs: Int, out: [[UInt8]]) {
        let sorter = ExternalSorter(directory: try scratch(), memoryBudget: budget)
        for record in records { try sorter.append(key: record.key, value: record.value) }
        let runs = sorter.spilledRuns
        var out: [[UInt8]] = []
        try sorter.forEachSorted { key, value in out.append(Array(key) + [0x7c] + Array(value)) }
        return (runs, out)
    }

    func testRecordsComeBackByKeyThenAsAppendedInMemoryAndFromManyRuns() throws {
        let input = records(5_000)
        // A stable sort by key, bytewise (shorter first on a common prefix), is the expectation.
        let expected = input.enumerated().sorted { a, b in
            a.element.key != b.element.key ? a.element.key.lexicographicallyPrecedes(b.element.key) : a.offset < b.offset
        }.map { $0.element.key + [0x7c] + $0.element.value }
        let inMemory = try sorted(input, budget: 64 << 20)
        XCTAssertEqual(inMemory.runs, 0)
        XCTAssertEqual(inMemory.out, expected)
        let spilled = try sorted(input, budget: 2_000)
        XCTAssertGreaterThan(spilled.runs, 20)
        XCTAssertEqual(spilled.out, expected)
    }

    func testARecordLargerThanAReadBufferComesBackWhole() throws {
        let big = [UInt8](repeating: 0x5a, count: 700_000)
        let input: [(key: [UInt8], value: [UInt8])] = [([2], [1]), ([1], big), ([3], big + [9]), ([1], [2])]
        let result = try sorted(input, budget: 1)
        XCTAssertEqual(result.runs, 4)
        XCTAssertEqual(result.out, [[1, 0x7c] + big, [1, 0x7c, 2], [2, 0x7c, 1], [3, 0x7c] + big + [9]])
    }

    func testRunFilesAreGoneFromTheDirectoryAsSoonAsMade() throws {
        let directory = try scratch()
        let sorter = ExternalSorter(directory: directory, memoryBudget: 10)
        for n in 0..<50 { try sorter.append(key: [UInt8(n % 7)], value: [UInt8(n)]) }
        XCTAssertEqual(sorter.spilledRuns, 50)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
        var values: [UInt8] = []
        try sorter.forEachSorted { _, value in values.append(value[0]) }
        XCTAssertEqual(values, (0..<50).map { UInt8($0) }.sorted { ($0 % 7, $0) < ($1 % 7, $1) })
    }

    func testADirectoryThatCannotHoldARunIsAnErrorNamingIt() throws {
        let missing = try scratch().appendingPathComponent("missing")
        let sorter = ExternalSorter(directory: missing, memoryBudget: 1)
        XCTAssertThrowsError(try sorter.append(key: [1], value: [1])) { error in
            XCTAssertEqual((error as? ExternalSorter.FileError)?.code, ENOENT)
            XCTAssertTrue("\(error)".contains(missing.path), "\(error)")
        }
    }
}
