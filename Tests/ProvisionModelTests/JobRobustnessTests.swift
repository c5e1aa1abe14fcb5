import Foundation
import ProvisionFoundation
import XCTest
@testable import ProvisionModel

/// The loader must answer any input with a job or diagnostics, never a crash or a silent failure.
final class JobRobustnessTests: XCTestCase {
    /// Every JSON Pointer inside `value`.
    private func pointers(in value: JSONValue, at pointer: String = "") -> [String] {
        switch value {
        case .object(let object):
            return [pointer] + object.members.flatMap {
                pointers(in: $0.value, at: JSONPointer.appending(pointer, $0.key))
            }
        case .array(let items):
            return [pointer] + items.enumerated().flatMap { pointers(in: $0.element, at: JSONPointer.appending(pointer, $0.offset)) }
        default:
            return [pointer]
        }
    }

    func testReplacingAnyValueWithAnyOtherGivesAJobOrPointedDiagnostics() throws {
        let base = try makeTemporaryDirectory(self)
        let oddValues: [JSONValue?] = [
            nil, .null, true, 0, -1, 23, 1e300, -0.0, 2.5, "", "x", "../../etc", "${", [], [[]], [1, 2, 3, 4, 5],
            [:], ["type": "Polygon"], ["type": "MultiPolygon", "coordinates": [[[]]]],
        ]
        var outcomes = 0
        for pointer in pointers(in: baseJob) where !pointer.isEmpty {
            for value in oddValues {
                let result = validate(baseJob.setting(pointer, to: value), base: base)
                switch result {
                case .success:
                    outcomes += 1
                case .invalid(let diagnostics):
                    XCTAssertFalse(diagnostics.isEmpty)
                    for diagnostic in diagnostics {
                        XCTAssertTrue(diagnostic.pointer.isEmpty || diagnostic.pointer.hasPrefix("/"), diagnostic.description)
                        XCTAssertFalse(diagnostic.message.isEmpty)
                    }
                    outcomes += 1
                case .unreadable:
                    XCTFail("parse never reports unreadable")
                }
            }
        }
        XCTAssertGreaterThan(outcomes, 500)
    }

    func testRandomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,0123456789.-eE tfnrul"\/ab"#.utf8)
        for _ in 0..<500 {
            let length = Int.random(in: 0..<64, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0x20 }
            let result = JobLoader.parse(data: Data(bytes), baseDirectory: URL(fileURLWithPath: "/nonexistent"),
                                         displayName: "fuzz.json")
            XCTAssertNil(result.job)
            XCTAssertFalse(result.diagnostics.isEmpty)
        }
    }

    func testPositionProblemsAreCappedPerRing() throws {
        let base = try makeTemporaryDirectory(self)
        var ring: [JSONValue] = (0..<15).map { _ in [200, 0] }
        ring.append(contentsOf: [[0, 0], [1, 0], [1, 1], [200, 0]])
        let document = baseJob.setting("/regions/1/geometry/coordinates", to: .array([.array(ring)]))
        let diagnostics = validate(document, base: base).diagnostics
        XCTAssertEqual(diagnostics.count, 11)
        XCTAssertEqual(diagnostics.last?.pointer, "/regions/1/geometry/coordinates/0")
        XCTAssertEqual(diagnostics.last?.message, "6 more invalid positions in this ring")
    }
}
