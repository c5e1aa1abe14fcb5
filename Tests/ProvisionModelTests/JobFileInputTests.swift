import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How job-file bytes are had and refused: repeated keys, the size cap, standard input and
/// other non-regular files, unreadable paths, and files that are something else entirely.
final class JobFileInputTests: XCTestCase {
    private let base = URL(fileURLWithPath: "/nonexistent")

    private func load(_ text: String, name: String = "job.json") -> JobLoadResult {
        JobLoader.parse(data: Data(text.utf8), baseDirectory: base, displayName: name)
    }

    // MARK: - Duplicate keys

    func testRepeatedKeysAreReportedAtTheirPointerAndLine() {
        struct Case {
            let name: String
            let text: String
            /// pointer, line, column, message of each diagnostic.
            let expected: [(String, Int, Int, String)]
        }
        let cases = [
            Case(name: "top level, on another line",
                 text: "{\n  \"version\": 1,\n  \"name\": \"a\",\n  \"version\": 1\n}",
                 expected: [("/version", 4, 3, "duplicate key \"version\" (first at line 2)")]),
            Case(name: "nested in an array",
                 text: """
                    {"version": 1, "name": "x", "stylePacks": [],
                     "regions": [
                       {"id": "a", "name": "A", "bbox": [0, 0, 1, 1],
                        "zoom": [0, 1],
                        "zoom": [2, 3]}]}
                    """,
                 expected: [("/regions/0/zoom", 5, 5, "duplicate key \"zoom\" (first at line 4)")]),
            Case(name: "on the same line, with the column",
                 text: #"{"version": 1, "version": 2}"#,
                 expected: [("/version", 1, 16, "duplicate key \"version\" (first at line 1, column 2)")]),
            Case(name: "keys escaped in the pointer",
                 text: "{\"metadata\": {\"a/b~c\": 1,\n\"a/b~c\": 2}}",
                 expected: [("/metadata/a~1b~0c", 2, 1, "duplicate key \"a/b~c\" (first at line 1)")]),
            Case(name: "every repetition, in document order",
                 text: "{\"regions\": [{}, {\"id\": 1,\n\"id\": 2,\n\"id\": 3}],\n\"regions\": []}",
                 expected: [("/regions/1/id", 2, 1, "duplicate key \"id\" (first at line 1)"),
                            ("/regions/1/id", 3, 1, "duplicate key \"id\" (first at line 1)"),
                            ("/regions", 4, 1, "duplicate key \"regions\" (first at line 1)")]),
        ]
        for c in cases {
            let result = load(c.text)
            XCTAssertNil(result.job, c.name)
            let got = result.diagnostics
            XCTAssertEqual(got.count, c.expected.count, "\(c.name): \(got)")
            for (diagnostic, (pointer, line, column, message)) in zip(got, c.expected) {
                XCTAssertEqual(diagnostic.file, "job.json", c.name)
                XCTAssertEqual(diagnostic.pointer, pointer, c.name)
                XCTAssertEqual(diagnostic.line, line, c.name)
                XCTAssertEqual(diagnostic.column, column, c.name)
                XCTAssertEqual(diagnostic.message, message, c.name)
            }
        }
    }

    func testADuplicateKeyDiagnosticShowsLineAndPointer() {
        let text = "{\"regions\": [\n {\"zoom\": [0, 1],\n  \"zoom\": [1, 2]}]}"
        XCTAssertEqual(load(text, name: "jobs/a.json").diagnostics.map(\.description),
                       ["jobs/a.json:3:3: /regions/0/zoom: duplicate key \"zoom\" (first at line 2)"])
    }

    func testTheSameKeyInSiblingObjectsIsNotADuplicate() throws {
        let base = try makeTemporaryDirectory(self)
        // baseJob has two regions, each with "id", "zoom" …
        let result = JobLoader.parse(data: baseJob.data(), baseDirectory: base, displayName: "job.json")
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertNotNil(result.job)
    }

    func testUpstreamDocumentsKeepTheLastValueOfARepeatedKey() throws {
        let text = #"{"sources": {"a": 1}, "sources": {"b": 2}, "x": [{"k": 1, "k": 2}]}"#
        let lenient = try JSONValue.parse(text)
        XCTAssertEqual(lenient, ["sources": ["b": 2], "x": [["k": 2]]])
        XCTAssertThrowsError(try JSONValue.parse(text, duplicateKeys: .reject)) { error in
            guard let error = error as? JSONSyntaxError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isDuplicateKey)
            XCTAssertEqual(error.pointer, "/sources")
            XCTAssertEqual(error.moreDuplicateKeys.map(\.pointer), ["/x/0/k"])
        }
    }

    func testASyntaxErrorAfterADuplicateIsTheErrorReported() {
        let result = load("{\"a\": 1, \"a\": 2,\n ]")
        XCTAssertEqual(result.diagnostics.map(\.message), ["invalid JSON: expected a member name in double quotes, found ']'"])
        XCTAssertEqual(result.diagnostics.first?.line, 2)
    }

    // MARK: - Size cap

    func testJobFilesOverTheCapAreRefusedNamingFileSizeAndCap() throws {
        let root = try makeTemporaryDirectory(self)
        let url = root.appendingPathComponent("huge.json")
        // A sparse file one byte over the cap: refused by its size, never read.
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(JobLoader.maxFileBytes + 1))
        try handle.close()
        XCTAssertEqual(JobLoader.maxFileBytes, 16 * 1024 * 1024)
        let result = JobLoader.load(from: url, displayName: "jobs/huge.json")
        XCTAssertEqual(result.diagnostics.count, 1)
        XCTAssertEqual(result.diagnostics.first?.file, "jobs/huge.json")
        XCTAssertEqual(result.diagnostics.first?.message,
                       "jobs/huge.json is 16,777,217 bytes, over the cap of 16 MiB (16,777,216 bytes) on job files; "
                       + "a job file names regions and style packs and is far smaller: put large shapes in a "
                       + "\"geojson\" file instead")
    }

    func testTheCapIsInclusive() throws {
        let root = try makeTemporaryDirectory(self)
        let text = #"{"version": 1}"#
        let url = try write(text, to: "j.json", in: root)
        let cases: [(cap: Int, tooLarge: Bool)] = [(text.utf8.count - 1, true), (text.utf8.count, false), (1 << 20, false)]
        for c in cases {
            let read = JobLoader.read(from: url, displayName: "j.json", maxBytes: c.cap)
            switch read {
            case .success(let contents): XCTAssertFalse(c.tooLarge, "cap \(c.cap)"); XCTAssertEqual(contents.data, Data(text.utf8))
            case .failure(.tooLarge(let diagnostic)):
                XCTAssertTrue(c.tooLarge, "cap \(c.cap)")
                XCTAssertTrue(diagnostic.message.hasPrefix("j.json is 14 bytes, over the cap of 13 bytes"), diagnostic.message)
            case .failure(let other): XCTFail("\(other)")
            }
        }
    }

    func testContentsReadWithALargerCapAreStillRefusedAsAJob() {
        // The CLI may read with a larger cap in case the file is a saved plan.
        let contents = JobFileContents(displayName: "big.json", baseDirectory: base,
                                       data: Data(count: JobLoader.maxFileBytes + 1))
        XCTAssertEqual(JobLoader.load(contents).diagnostics.map(\.message).first?.hasPrefix(
            "big.json is 16,777,217 bytes, over the cap of 16 MiB (16,777,216 bytes) on job files"), true)
    }

    // MARK: - Standard input, pipes, FIFOs

    /// A pipe whose write end is fed `bytes` on another thread and then closed.
    private func pipeFed(with bytes: Data) throws -> (read: Int32, writer: Thread) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let writeEnd = fds[1]
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = systemWrite(writeEnd, raw.baseAddress?.advanced(by: offset), raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        return (fds[0], writer)
    }

    func testStandardInputIsReadToItsEndAndResolvesAgainstTheGivenDirectory() throws {
        let root = try makeTemporaryDirectory(self)
        let document = baseJob.setting("/store", to: "out")
        // Larger than a pipe's buffer, so the reader must loop.
        let padded = document.serialized(.prettySorted) + String(repeating: " ", count: 200_000)
        let (fd, _) = try pipeFed(with: Data(padded.utf8))
        defer { close(fd) }
        let read = JobFileReader.read(fileDescriptor: fd, displayName: JobLoader.standardInputName, baseDirectory: root,
                                      maxBytes: JobLoader.maxFileBytes)
        let contents = try read.get()
        XCTAssertEqual(contents.data.count, padded.utf8.count)
        XCTAssertEqual(contents.displayName, "<stdin>")
        let job = try XCTUnwrap(JobLoader.load(contents).job)
        XCTAssertEqual(job.store?.path, root.appendingPathComponent("out").path)
    }

    func testStandardInputPastTheCapIsRefusedAfterCapPlusOneBytes() throws {
        let (fd, _) = try pipeFed(with: Data(repeating: 0x20, count: 300_000))
        defer { close(fd) }
        let read = JobFileReader.read(fileDescriptor: fd, displayName: "<stdin>", baseDirectory: base, maxBytes: 100_000)
        // The reader stopped one byte past the cap; drain the rest so the writer ends without SIGPIPE.
        var buffer = [UInt8](repeating: 0, count: 1 << 16), rest = 0
        while case let n = buffer.withUnsafeMutableBytes({ systemRead(fd, $0.baseAddress, $0.count) }), n > 0 { rest += n }
        XCTAssertEqual(rest, 300_000 - 100_001, "the reader read the cap plus one byte, no more")
        guard case .failure(.tooLarge(let diagnostic)) = read else { return XCTFail("\(read)") }
        XCTAssertEqual(diagnostic.file, "<stdin>")
        XCTAssertTrue(diagnostic.message.hasPrefix("<stdin> is more than 100,000 bytes, over the cap of 100,000 bytes"),
                      diagnostic.message)
    }

    func testAPipeNamedByPathIsReadLikeAFile() throws {
        // /dev/fd/N is how /dev/stdin names a pipe; Data(contentsOf:) refused it as "no permission".
        let (fd, _) = try pipeFed(with: baseJob.data())
        defer { close(fd) }
        let result = JobLoader.load(from: URL(fileURLWithPath: "/dev/fd/\(fd)"), displayName: "/dev/stdin")
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertEqual(result.job?.name, baseJob["name"]?.stringValue)
    }

    func testAFIFOIsReadLikeAFile() throws {
        let root = try makeTemporaryDirectory(self)
        let fifo = root.appendingPathComponent("job.fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let bytes = baseJob.data()
        let writer = Thread {
            // Opening blocks until the reader opens the other end.
            guard let handle = FileHandle(forWritingAtPath: fifo.path) else { return }
            handle.write(bytes)
            try? handle.close()
        }
        writer.start()
        let result = JobLoader.load(from: fifo)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertNotNil(result.job)
    }

    // MARK: - Unreadable paths

    func testUnreadablePathsSayWhyWithThePath() throws {
        let root = try makeTemporaryDirectory(self)
        let file = try write("{}", to: "plain.json", in: root)
        let cases: [(name: String, url: URL, path: String, reason: String)] = [
            ("missing", root.appendingPathComponent("nope.json"), root.path + "/nope.json", "no such file or directory"),
            ("a directory", root, root.path, "is a directory, not a job file"),
            ("under a file", file.appendingPathComponent("x.json"), file.path + "/x.json", "not a directory"),
        ]
        for c in cases {
            XCTAssertEqual(JobLoader.load(from: c.url), .unreadable(path: c.path, reason: c.reason), c.name)
        }
    }

    func testAFileWithoutReadPermissionIsUnreadable() throws {
        guard getuid() != 0 else { return }  // root reads any file: nothing to check
        let root = try makeTemporaryDirectory(self)
        let url = try write("{}", to: "secret.json", in: root)
        XCTAssertEqual(chmod(url.path, 0), 0)
        XCTAssertEqual(JobLoader.load(from: url), .unreadable(path: url.path, reason: "permission denied"))
    }

    func testTheArgumentDashReadsStandardInput() {
        XCTAssertEqual(JobLoader.standardInputArgument, "-")
        // A path is read as a path, with the name given.
        XCTAssertEqual(JobLoader.load(argument: "/nonexistent/job.json"),
                       .unreadable(path: "/nonexistent/job.json", reason: "no such file or directory"))
    }

    // MARK: - Files that are something else

    func testOtherDocumentsAreNamedInOneDiagnostic() {
        let cases: [(name: String, text: String, message: String)] = [
            ("saved plan", #"{"schemaVersion": 1, "kind": "saved-plan", "job": {"path": "j.json"}, "regions": []}"#,
             "p.json is a saved plan, not a job file"),
            ("plan JSON", #"{"schemaVersion": 2, "kind": "plan", "regions": [], "stylePacks": []}"#,
             "p.json is a provision plan document (plan --json), not a job file"),
            ("apply report", #"{"schemaVersion": 2, "kind": "apply-report"}"#,
             "p.json is a provision apply report, not a job file"),
            ("audit", #"{"schemaVersion": 2, "kind": "audit", "store": "s"}"#, "p.json is a provision audit document, not a job file"),
            ("a later kind", #"{"schemaVersion": 9, "kind": "inventory"}"#, "p.json is a provision \"inventory\" document, not a job file"),
            ("lock file", #"{"schemaVersion": 2, "job": {"name": "x", "digest": "d"}, "epoch": 0, "regions": []}"#,
             "p.json is a provision lock file, not a job file"),
            ("SQLite", "SQLite format 3\u{0}\u{10}\u{0}", "p.json is an SQLite database (an offline.db?), not a job file"),
            ("plain garbage", "name: cities\nregions: []\n", "invalid JSON: expected a JSON value, found 'name'"),
            ("a long word", "Lorem_ipsum_dolor_sit_amet", "invalid JSON: expected a JSON value, found 'Lorem_ipsum_dolor_si…'"),
            ("HTML", "<!doctype html>\n<p>", "invalid JSON: expected a JSON value, found '<'"),
        ]
        for c in cases {
            XCTAssertEqual(load(c.text, name: "p.json").diagnostics.map(\.message), [c.message], c.name)
        }
    }

    func testGarbageHasLineAndColumn() {
        let diagnostic = load("\n\n   true false", name: "g.json").diagnostics
        XCTAssertEqual(diagnostic.map(\.description), ["g.json:3:9: invalid JSON: expected the end of the input, found 'false'"])
    }

    func testAJobWithAStrayKindKeyIsValidatedAsAJob() {
        let result = load(baseJob.setting("/kind", to: "plan").serialized())
        XCTAssertEqual(result.diagnostics.map(\.pointer), ["/kind"])
        XCTAssertTrue(result.diagnostics.first?.message.hasPrefix("unknown key \"kind\"") ?? false)
    }
}

/// `write(2)`, named apart from the test helper `write(_:to:in:)`.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}

/// `read(2)`.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}
