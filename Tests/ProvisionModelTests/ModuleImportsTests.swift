import Foundation
import XCTest

/// Checks STYLE.md's "Modules and who may import whom" against the `import` lines of Sources/.
///
/// SwiftPM lets a module import any dependency of a dependency, so the table is only kept by
/// reading the sources.
final class ModuleImportsTests: XCTestCase {
    /// Modules any module may import: the standard platform ones.
    static let alwaysAllowed: Set<String> = ["Foundation", "Dispatch", "XCTest", "Glibc", "Darwin", "FoundationEssentials"]

    /// Who may import whom (besides `alwaysAllowed`), from STYLE.md.
    static let table: [String: Set<String>] = {
        let provision: Set<String> = ["TileMath", "ProvisionModel", "ProvisionPlanning", "ProvisionStore",
                                      "ProvisionExecution", "ProvisionReports"]
        return [
            "TileMath": [],
            "ProvisionModel": ["TileMath"],
            "ProvisionPlanning": ["ProvisionModel", "TileMath"],
            "ProvisionStore": ["ProvisionModel", "TileMath", "CSQLite", "CZlib", "CCrypto"],
            "ProvisionExecution": ["ProvisionModel", "TileMath", "CCurl", "CZlib"],
            "ProvisionReports": ["ProvisionModel", "TileMath"],
            "ProvisionEngine": provision,
            "ProvisionCLI": provision.union(["ProvisionEngine"]),
            "provision": ["ProvisionCLI"],
            "ProvisionTestSupport": ["ProvisionModel"],
        ]
    }()

    /// One `import` line of a source file.
    struct Import: Equatable {
        var file: String
        var line: Int
        var module: String
    }

    // MARK: - Parsing

    /// The modules a Swift source imports, one entry per `import` line, skipping comments and
    /// multi-line string literals. Handles attributes (`@testable`, `@_exported`,
    /// `@preconcurrency`), access levels (`public import`), kinds (`import struct M.T`) and
    /// submodules (`import M.Sub` counts as `M`).
    static func imports(in source: String, file: String) -> [Import] {
        var result: [Import] = []
        var inBlockComment = false
        var inMultilineString = false
        let keywords: Set<String> = ["public", "package", "internal", "fileprivate", "private"]
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var"]
        for (index, rawLine) in source.components(separatedBy: "\n").enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if inMultilineString {
                if line.contains("\"\"\"") { inMultilineString = false }
                continue
            }
            if inBlockComment {
                guard let end = line.range(of: "*/") else { continue }
                inBlockComment = false
                line = String(line[end.upperBound...]).trimmingCharacters(in: .whitespaces)
            }
            if line.hasPrefix("/*") && !line.contains("*/") {
                inBlockComment = true
                continue
            }
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 {
                inMultilineString = true
                continue
            }
            if let comment = line.range(of: "//") { line = String(line[..<comment.lowerBound]) }
            var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            while let first = words.first, first.hasPrefix("@") || keywords.contains(first) { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            var path = words[1]
            if kinds.contains(path), words.count >= 3 { path = words[2] }
            let module = String(path.split(separator: ".").first ?? Substring(path))
            result.append(Import(file: file, line: index + 1, module: module))
        }
        return result
    }

    /// Every import of every `Sources/<Module>/**/*.swift`, by module.
    static func sourceImports(root: URL) throws -> [String: [Import]] {
        let sources = root.appendingPathComponent("Sources")
        var byModule: [String: [Import]] = [:]
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        for module in modules {
            let directory = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let relative as String in files where relative.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)
                byModule[module, default: []] += imports(in: text, file: "Sources/\(module)/\(relative)")
            }
        }
        return byModule
    }

    // MARK: - Checking

    /// The imports the table forbids, as readable lines; modules missing from the table are
    /// reported too, so a new module must be added to STYLE.md and here.
    static func violations(_ imports: [String: [Import]], table: [String: Set<String>]) -> [String] {
        var problems: [String] = []
        for module in imports.keys.sorted() {
            guard let allowed = table[module] else {
                problems.append("module \(module) is not in the import table")
                continue
            }
            for item in imports[module] ?? [] where item.module != module
                && !alwaysAllowed.contains(item.module) && !allowed.contains(item.module) {
                problems.append("\(item.file):\(item.line): \(module) may not import \(item.module)")
            }
        }
        return problems
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    // MARK: - Tests

    func testSourcesImportOnlyWhatTheTableAllows() throws {
        let root = Self.repositoryRoot
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path), root.path)
        let imports = try Self.sourceImports(root: root)
        for module in Self.table.keys { XCTAssertNotNil(imports[module], "no Swift sources found for \(module)") }
        XCTAssertGreaterThan(imports.values.reduce(0) { $0 + $1.count }, 50, "the scan found too few imports")
        XCTAssertEqual(Self.violations(imports, table: Self.table), [])
    }

    func testStoreAndExecutionNeverImportEachOther() throws {
        let imports = try Self.sourceImports(root: Self.repositoryRoot)
        XCTAssertEqual(imports["ProvisionStore", default: []].filter { $0.module == "ProvisionExecution" }, [])
        XCTAssertEqual(imports["ProvisionExecution", default: []].filter { $0.module == "ProvisionStore" }, [])
        XCTAssertFalse(Self.table["ProvisionStore", default: []].contains("ProvisionExecution"))
        XCTAssertFalse(Self.table["ProvisionExecution", default: []].contains("ProvisionStore"))
    }

    func testParserReadsEveryFormOfImport() {
        let source = """
            // import Commented
            import Foundation
            @testable import ProvisionPlanning
            @_exported import TileMath // trailing comment
              public import ProvisionStore
            @preconcurrency internal import CCurl
            import struct ProvisionModel.Job
            import ProvisionReports.Sub
            /* import InBlock
               import AlsoInBlock */
            let text = \"""
            import InString
            \"""
            let importance = 1
            #if canImport(Glibc)
            import Glibc
            #endif
            """
        XCTAssertEqual(Self.imports(in: source, file: "x").map(\.module),
                       ["Foundation", "ProvisionPlanning", "TileMath", "ProvisionStore", "CCurl", "ProvisionModel",
                        "ProvisionReports", "Glibc"])
        XCTAssertEqual(Self.imports(in: source, file: "x").first?.line, 2)
    }

    func testCheckerRejectsForbiddenImports() {
        func imports(_ module: String, _ names: String...) -> [String: [Import]] {
            [module: names.enumerated().map { Import(file: "Sources/\(module)/A.swift", line: $0.offset + 1, module: $0.element) }]
        }
        XCTAssertEqual(Self.violations(imports("ProvisionStore", "Foundation", "ProvisionModel", "CSQLite", "CZlib"),
                                       table: Self.table), [])
        XCTAssertEqual(Self.violations(imports("ProvisionStore", "Foundation", "ProvisionExecution"), table: Self.table),
                       ["Sources/ProvisionStore/A.swift:2: ProvisionStore may not import ProvisionExecution"])
        XCTAssertEqual(Self.violations(imports("ProvisionExecution", "ProvisionStore"), table: Self.table),
                       ["Sources/ProvisionExecution/A.swift:1: ProvisionExecution may not import ProvisionStore"])
        XCTAssertEqual(Self.violations(imports("TileMath", "Dispatch", "ProvisionModel"), table: Self.table),
                       ["Sources/TileMath/A.swift:2: TileMath may not import ProvisionModel"])
        XCTAssertEqual(Self.violations(imports("ProvisionPlanning", "CSQLite"), table: Self.table),
                       ["Sources/ProvisionPlanning/A.swift:1: ProvisionPlanning may not import CSQLite"])
        XCTAssertEqual(Self.violations(imports("provision", "ProvisionModel"), table: Self.table),
                       ["Sources/provision/A.swift:1: provision may not import ProvisionModel"])
        XCTAssertEqual(Self.violations(imports("ProvisionTestSupport", "ProvisionStore"), table: Self.table),
                       ["Sources/ProvisionTestSupport/A.swift:1: ProvisionTestSupport may not import ProvisionStore"])
        XCTAssertEqual(Self.violations(imports("ProvisionNew", "Foundation"), table: Self.table),
                       ["module ProvisionNew is not in the import table"])
    }

    func testCheckerFlagsAForbiddenImportWrittenToASourceTree() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let nested = root.appendingPathComponent("Sources/ProvisionReports/Nested")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try Data("import Foundation\nimport ProvisionModel\n".utf8)
            .write(to: root.appendingPathComponent("Sources/ProvisionReports/Good.swift"))
        try Data("import TileMath\n\n@testable import ProvisionStore\n".utf8).write(to: nested.appendingPathComponent("Bad.swift"))
        let imports = try Self.sourceImports(root: root)
        XCTAssertEqual(Self.violations(imports, table: Self.table),
                       ["Sources/ProvisionReports/Nested/Bad.swift:3: ProvisionReports may not import ProvisionStore"])
    }
}
