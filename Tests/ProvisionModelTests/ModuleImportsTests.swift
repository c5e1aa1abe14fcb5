import Foundation
import XCTest

/// Checks the module table of CONTRIBUTING.md (read by `ModuleTable`, never copied here) against
/// the `import` lines of Sources/.
///
/// SwiftPM lets a module import any dependency of a dependency, so the table is only kept by
/// reading the sources.
final class ModuleImportsTests: XCTestCase {
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
    /// reported too, so a new module must be added to CONTRIBUTING.md.
    static func violations(_ imports: [String: [Import]], table: ModuleTable) -> [String] {
        var problems: [String] = []
        for module in imports.keys.sorted() {
            guard table.allowed[module] != nil else {
                problems.append("module \(module) is not in the import table")
                continue
            }
            for item in imports[module] ?? [] where !table.allows(module, toImport: item.module) {
                problems.append("\(item.file):\(item.line): \(module) may not import \(item.module)")
            }
        }
        return problems
    }

    /// The table of the repository's CONTRIBUTING.md.
    static func contributingTable() throws -> ModuleTable { try ModuleTable.fromContributing() }

    /// A source tree under a temporary root: `files` maps paths to their text.
    func makeTree(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: root) }
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return root
    }

    /// A CONTRIBUTING.md-shaped document with `rows` as its table.
    static func markdown(_ rows: [String]) -> String {
        (["# Contributing", "", "Some prose with a | pipe.", "", "| module | holds | may import |", "| --- | --- | --- |"]
            + rows
            + ["", "\(ModuleTable.platformLead) `Foundation` and `Glibc`; tests also import `XCTest`."])
            .joined(separator: "\n")
    }

    // MARK: - The repository

    func testSourcesImportOnlyWhatTheTableAllows() throws {
        let root = ModuleTable.repositoryRoot
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path), root.path)
        let table = try Self.contributingTable()
        let imports = try Self.sourceImports(root: root)
        for module in table.allowed.keys {
            let moduleMap = root.appendingPathComponent("Sources/\(module)/module.modulemap").path
            if FileManager.default.fileExists(atPath: moduleMap) { continue }
            XCTAssertNotNil(imports[module], "no Swift sources found for \(module), a row of CONTRIBUTING.md")
        }
        XCTAssertGreaterThan(imports.values.reduce(0) { $0 + $1.count }, 50, "the scan found too few imports")
        XCTAssertEqual(Self.violations(imports, table: table), [])
    }

    func testEveryModuleHasARowAndTheRulesHold() throws {
        let table = try Self.contributingTable()
        let sources = ModuleTable.repositoryRoot.appendingPathComponent("Sources")
        let directories = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(Set(table.allowed.keys), Set(directories), "CONTRIBUTING.md's table and Sources/ list other modules")
        XCTAssertTrue(table.platformModules.isSuperset(of: ["Foundation", "Dispatch", "Glibc", "Darwin"]), "\(table.platformModules)")
        XCTAssertFalse(table.platformModules.contains("XCTest"), "only tests import XCTest")
        XCTAssertEqual(table.allowed["ProvisionCodecs"], ["CZlib", "CCrypto"])
        for (module, allowed) in table.allowed where module != "ProvisionCodecs" {
            XCTAssertTrue(allowed.isDisjoint(with: ["CZlib", "CCrypto"]), "\(module): zlib and libcrypto go through ProvisionCodecs")
        }
        XCTAssertEqual(table.allowed["ProvisionModel"], ["ProvisionFoundation", "TileMath"])
        XCTAssertEqual(table.allowed["ProvisionFoundation"], [], "the foundation stands on the platform alone")
        XCTAssertFalse(table.allowed["ProvisionPlanning", default: []].contains("ProvisionStore"))
    }

    func testStoreAndExecutionNeverImportEachOther() throws {
        let table = try Self.contributingTable()
        let imports = try Self.sourceImports(root: ModuleTable.repositoryRoot)
        XCTAssertEqual(imports["ProvisionStore", default: []].filter { $0.module == "ProvisionExecution" }, [])
        XCTAssertEqual(imports["ProvisionExecution", default: []].filter { $0.module == "ProvisionStore" }, [])
        XCTAssertFalse(table.allows("ProvisionStore", toImport: "ProvisionExecution"))
        XCTAssertFalse(table.allows("ProvisionExecution", toImport: "ProvisionStore"))
    }

    func testReadmeLinksContributingAndNeitherNamesTheSharedFolder() throws {
        let root = ModuleTable.repositoryRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let contributing = try String(contentsOf: ModuleTable.contributingURL, encoding: .utf8)
        XCTAssertTrue(readme.contains("](CONTRIBUTING.md)"), "README.md links CONTRIBUTING.md")
        for (name, text) in [("README.md", readme), ("CONTRIBUTING.md", contributing)] {
            XCTAssertFalse(text.contains("../shared"), "\(name) names a folder outside the repository")
            XCTAssertFalse(text.contains("STYLE.md"), "\(name) names a file outside the repository")
        }
    }

    // MARK: - The parser and the checker

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

    func testCheckerRejectsForbiddenImports() throws {
        let table = try Self.contributingTable()
        func imports(_ module: String, _ names: String...) -> [String: [Import]] {
            [module: names.enumerated().map { Import(file: "Sources/\(module)/A.swift", line: $0.offset + 1, module: $0.element) }]
        }
        XCTAssertEqual(Self.violations(imports("ProvisionStore", "Foundation", "ProvisionModel", "CSQLite", "ProvisionCodecs"),
                                       table: table), [])
        XCTAssertEqual(Self.violations(imports("ProvisionStore", "Foundation", "ProvisionExecution"), table: table),
                       ["Sources/ProvisionStore/A.swift:2: ProvisionStore may not import ProvisionExecution"])
        XCTAssertEqual(Self.violations(imports("ProvisionExecution", "ProvisionStore"), table: table),
                       ["Sources/ProvisionExecution/A.swift:1: ProvisionExecution may not import ProvisionStore"])
        XCTAssertEqual(Self.violations(imports("ProvisionStore", "CZlib"), table: table),
                       ["Sources/ProvisionStore/A.swift:1: ProvisionStore may not import CZlib"])
        XCTAssertEqual(Self.violations(imports("ProvisionModel", "ProvisionCodecs"), table: table),
                       ["Sources/ProvisionModel/A.swift:1: ProvisionModel may not import ProvisionCodecs"])
        XCTAssertEqual(Self.violations(imports("TileMath", "Dispatch", "ProvisionModel"), table: table),
                       ["Sources/TileMath/A.swift:2: TileMath may not import ProvisionModel"])
        XCTAssertEqual(Self.violations(imports("ProvisionPlanning", "CSQLite"), table: table),
                       ["Sources/ProvisionPlanning/A.swift:1: ProvisionPlanning may not import CSQLite"])
        XCTAssertEqual(Self.violations(imports("provision", "ProvisionModel"), table: table),
                       ["Sources/provision/A.swift:1: provision may not import ProvisionModel"])
        XCTAssertEqual(Self.violations(imports("ProvisionTestSupport", "ProvisionStore"), table: table),
                       ["Sources/ProvisionTestSupport/A.swift:1: ProvisionTestSupport may not import ProvisionStore"])
        XCTAssertEqual(Self.violations(imports("ProvisionNew", "Foundation"), table: table),
                       ["module ProvisionNew is not in the import table"])
    }

    func testCheckerFlagsAForbiddenImportWrittenToASourceTree() throws {
        let root = try makeTree([
            "Sources/ProvisionReports/Good.swift": "import Foundation\nimport ProvisionModel\n",
            "Sources/ProvisionReports/Nested/Bad.swift": "import TileMath\n\n@testable import ProvisionStore\n",
        ])
        let imports = try Self.sourceImports(root: root)
        XCTAssertEqual(Self.violations(imports, table: try Self.contributingTable()),
                       ["Sources/ProvisionReports/Nested/Bad.swift:3: ProvisionReports may not import ProvisionStore"])
    }

    func testTheVerdictFollowsTheMarkdownTable() throws {
        let root = try makeTree([
            "Sources/Core/Core.swift": "import Foundation\n",
            "Sources/Feature/Feature.swift": "import Glibc\nimport Core\nimport Extra\n",
            "Sources/Extra/Extra.swift": "import Core\n",
        ])
        let imports = try Self.sourceImports(root: root)
        let strict = try ModuleTable(markdown: Self.markdown([
            "| `Core` | the core | — |",
            "| `Feature` | a feature | `Core` |",
            "| `Extra` | more | `Core` |",
        ]))
        XCTAssertEqual(strict.platformModules, ["Foundation", "Glibc"], "the sentence stops at its semicolon")
        XCTAssertEqual(Self.violations(imports, table: strict), ["Sources/Feature/Feature.swift:3: Feature may not import Extra"])
        let relaxed = try ModuleTable(markdown: Self.markdown([
            "| `Core` | the core | — |",
            "| `Feature` | a feature | `Core`, `Extra` |",
            "| `Extra` | more | `Core` |",
        ]))
        XCTAssertEqual(Self.violations(imports, table: relaxed), [])
        let missingRow = try ModuleTable(markdown: Self.markdown(["| `Core` | the core | — |", "| `Feature` | a feature | `Core`, `Extra` |"]))
        XCTAssertEqual(Self.violations(imports, table: missingRow), ["module Extra is not in the import table"])
    }

    func testAMalformedTableIsAnErrorNotAnEmptyTable() {
        func error(_ markdown: String) -> String {
            do {
                _ = try ModuleTable(markdown: markdown)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(error("# Contributing\n\nNo table here.\n").contains("no table"))
        XCTAssertTrue(error(Self.markdown([])).contains("no rows"))
        XCTAssertTrue(error(Self.markdown(["| `A` | a | — |", "| `A` | again | — |"])).contains("twice"))
        XCTAssertTrue(error(Self.markdown(["| A | no backticks | — |"])).contains("line 7"))
        XCTAssertTrue(error(Self.markdown(["| `A` | two cells |"])).contains("line 7"))
        XCTAssertTrue(error("| module | holds | may import |\n| --- | --- | --- |\n| `A` | a | — |\n").contains("no sentence"))
    }
}
