import Foundation
import XCTest

/// The house rules CONTRIBUTING.md states that a reader of the code checks by eye, checked on
/// every source file so that none comes back unnoticed: option names are read by the parser only,
/// commands hold no output-format switches, the one audited mutex (and libcrypto's context) are
/// the only `@unchecked Sendable` types, and every `try?` says why ignoring the failure is right.
final class HouseRulesTests: XCTestCase {
    /// Every Swift file under `Sources/` but the test support, with its lines.
    private static func sources() throws -> [(path: String, lines: [String])] {
        let root = ModuleTable.repositoryRoot
        let sources = root.appendingPathComponent("Sources")
        guard let walk = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        var files: [(String, [String])] = []
        for case let url as URL in walk where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(root.path.count + 1))
            if path.hasPrefix("Sources/ProvisionTestSupport/") { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            files.append((path, text.components(separatedBy: "\n")))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The `file:line: text` of every line of `files` that `pattern` matches.
    private static func matches(_ pattern: String, in files: [(path: String, lines: [String])]) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return files.flatMap { file in
            file.lines.enumerated().compactMap { index, line in
                let range = NSRange(line.startIndex..., in: line)
                return regex.firstMatch(in: line, range: range) == nil ? nil : "\(file.path):\(index + 1): \(line)"
            }
        }
    }

    func testTheScanReadsTheSources() throws {
        let files = try Self.sources()
        XCTAssertGreaterThan(files.count, 100)
        XCTAssertTrue(files.contains { $0.path == "Sources/ProvisionCLI/ArgumentParser.swift" })
        // The patterns below find what they look for (so an empty result means something).
        XCTAssertEqual(try Self.matches(#"(values\[|flags\.contains\()"--"#,
                                        in: [("x.swift", [#"if parsed.values["--store"] != nil {"#])]).count, 1)
        XCTAssertEqual(try Self.matches(#"\btry\?"#, in: [("x.swift", ["let a = entry?.b", "let c = try? d()"])]).count, 1)
    }

    func testOptionNamesAreReadByTheParserOnly() throws {
        let lookUps = try Self.matches(#"(values\[|flags\.contains\(|argument == )"--[a-z]"#, in: Self.sources())
        XCTAssertEqual(lookUps, [], "each option's declaration in Commands names the field it sets")
    }

    func testCommandsHoldNoOutputFormatSwitches() throws {
        let commands = try Self.sources().filter { $0.path.hasPrefix("Sources/ProvisionCLI/") && $0.path.hasSuffix("Command.swift") }
        XCTAssertGreaterThanOrEqual(commands.count, 6)
        let switches = try Self.matches(#"(==|!=) \.(json|markdown|text)\b|case \.(json|markdown)\b|progress == \."#, in: commands)
        XCTAssertEqual(switches, [], "the view chosen once from the options renders every result")
    }

    func testOnlyTheAuditedMutexIsUncheckedSendable() throws {
        let unchecked = try Self.matches(#"^[^/]*:\s*@unchecked Sendable"#, in: Self.sources()).map { $0.components(separatedBy: ":")[0] }
        XCTAssertEqual(Set(unchecked), ["Sources/ProvisionFoundation/Mutex.swift", "Sources/ProvisionCodecs/SHA256.swift"])
    }

    func testEveryTryQuestionMarkSaysWhy() throws {
        var silent: [String] = []
        for file in try Self.sources() {
            for (index, line) in file.lines.enumerated() where line.range(of: #"\btry\?"#, options: .regularExpression) != nil {
                let window = file.lines[max(0, index - 5)...index]
                if !window.contains(where: { $0.contains("//") }) { silent.append("\(file.path):\(index + 1): \(line)") }
            }
        }
        XCTAssertEqual(silent, [], "a try? that hides a failure says in a comment why that is right")
    }
}
