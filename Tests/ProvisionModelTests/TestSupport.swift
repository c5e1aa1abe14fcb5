import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A fresh temporary directory, removed when the test case ends.
func makeTemporaryDirectory(_ testCase: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("provision-model-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return URL(fileURLWithPath: url.path).standardizedFileURL
}

/// Writes `text` to `path` under `directory`, creating intermediate directories.
@discardableResult
func write(_ text: String, to path: String, in directory: URL) throws -> URL {
    let url = directory.appendingPathComponent(path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: url)
    return url
}

extension JSONValue {
    /// A copy with the value at the JSON Pointer `pointer` replaced (nil removes it); array
    /// indices must exist, the token `-` appends.
    func setting(_ pointer: String, to newValue: JSONValue?) -> JSONValue {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
        return Self.set(self, tokens[...], newValue)
    }

    private static func set(_ value: JSONValue, _ tokens: ArraySlice<String>, _ newValue: JSONValue?) -> JSONValue {
        guard let token = tokens.first else { return newValue ?? .null }
        let rest = tokens.dropFirst()
        switch value {
        case .object(var object):
            if rest.isEmpty {
                object[token] = newValue
            } else {
                object[token] = set(object[token] ?? .object(JSONObject()), rest, newValue)
            }
            return .object(object)
        case .array(var items):
            if token == "-", let newValue {
                items.append(newValue)
            } else if let index = Int(token) {
                if rest.isEmpty, newValue == nil {
                    items.remove(at: index)
                } else {
                    items[index] = set(items[index], rest, newValue)
                }
            }
            return .array(items)
        default:
            return value
        }
    }
}

/// Validates a job document with `base` as its directory, named `job.json`.
func validate(_ document: JSONValue, base: URL) -> JobLoadResult {
    JobLoader.parse(data: document.data(), baseDirectory: base, displayName: "job.json")
}

/// A table row of invalid input: its name, the edits to a valid job, and the one diagnostic
/// expected (pointer, and message, or `~` and a part of it).
typealias InvalidJobCase = (name: String, edits: [(String, JSONValue?)], expected: (pointer: String, message: String))

/// Checks that each case of `cases`, applied to `job`, is refused with exactly its one diagnostic.
func assertEachCaseReportsExactlyItsDiagnostic(_ cases: [InvalidJobCase], editing job: JSONValue, base: URL,
                                               file: StaticString = #filePath, line: UInt = #line) {
    for (name, edits, (pointer, message)) in cases {
        var document = job
        for (at, value) in edits { document = document.setting(at, to: value) }
        let result = validate(document, base: base)
        XCTAssertNil(result.job, name, file: file, line: line)
        XCTAssertEqual(result.diagnostics.count, 1, "\(name): \(result.diagnostics.map(\.description))", file: file, line: line)
        guard let found = result.diagnostics.first else { continue }
        XCTAssertEqual(found.pointer, pointer, name, file: file, line: line)
        if message.hasPrefix("~") {
            XCTAssertTrue(found.message.contains(message.dropFirst()), "\(name): \(found.message)", file: file, line: line)
        } else {
            XCTAssertEqual(found.message, message, name, file: file, line: line)
        }
    }
}

/// A compact job that validates without any files: two style packs, a bbox region and a
/// polygon region.
let baseJob: JSONValue = [
    "version": 1,
    "name": "Test job",
    "stylePacks": [
        ["id": "streets", "style": "https://tiles.example.com/styles/streets.json"],
        ["id": "satellite", "style": "mapbox://styles/mapbox/satellite-v9", "pixelRatio": 2, "glyphs": "all"],
    ],
    "regions": [
        ["id": "berlin", "name": "Berlin", "bbox": [13.0, 52.3, 13.8, 52.7], "zoom": [0, 14],
         "stylePacks": ["streets"]],
        ["id": "paris", "name": "Paris",
         "geometry": ["type": "Polygon",
                      "coordinates": [[[2.2, 48.8], [2.4, 48.8], [2.4, 48.9], [2.2, 48.9], [2.2, 48.8]]]],
         "zoom": [10, 12], "tilesets": ["https://tiles.example.com/data/{z}/{x}/{y}.pbf"]],
    ],
]
