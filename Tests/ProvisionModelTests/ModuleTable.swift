import Foundation

/// The module rules CONTRIBUTING.md states ("Modules and who may import whom"): who may import
/// whom, and the platform modules every module may import.
///
/// Read from CONTRIBUTING.md, the one place the table is kept; no test holds a copy of it.
struct ModuleTable: Equatable {
    /// Why the table cannot be read.
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// Each module's allowed imports (besides `platformModules`).
    var allowed: [String: Set<String>]
    /// The platform modules any module may import.
    var platformModules: Set<String>

    /// The repository's root, found from this file's path.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The file that holds the table.
    static var contributingURL: URL { repositoryRoot.appendingPathComponent("CONTRIBUTING.md") }

    /// The table as the repository's CONTRIBUTING.md states it.
    static func fromContributing() throws -> ModuleTable {
        try ModuleTable(markdown: String(contentsOf: contributingURL, encoding: .utf8))
    }

    /// Whether `module` may import `imported`.
    func allows(_ module: String, toImport imported: String) -> Bool {
        imported == module || platformModules.contains(imported) || allowed[module, default: []].contains(imported)
    }

    /// The sentence that lists the platform modules, up to its first semicolon or full stop.
    static let platformLead = "Every module may also import the platform modules"

    /// Reads the first Markdown table whose header is `module | holds | may import` (each row:
    /// one backticked module, then what it holds, then its allowed imports backticked; `—` for
    /// none) and the sentence starting with `platformLead`. Throws, naming what is wrong, when
    /// either is missing, a row is malformed or a module appears twice.
    init(markdown: String) throws {
        let lines = markdown.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let header = lines.firstIndex(where: {
            $0.hasPrefix("|") && Self.cells($0).map { $0.lowercased() } == ["module", "holds", "may import"]
        }) else {
            throw ReadError(description: "no table with the header | module | holds | may import |")
        }
        guard header + 1 < lines.count, Self.cells(lines[header + 1]).allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) else {
            throw ReadError(description: "the module table has no | --- | line under its header")
        }
        var allowed: [String: Set<String>] = [:]
        var index = header + 2
        while index < lines.count, lines[index].hasPrefix("|") {
            let row = Self.cells(lines[index])
            let names = row.first.map(Self.codeSpans) ?? []
            guard row.count == 3, names.count == 1, let module = names.first, !module.isEmpty else {
                throw ReadError(description: "line \(index + 1) is not | `Module` | holds | `A`, `B` |: \(lines[index])")
            }
            guard allowed[module] == nil else { throw ReadError(description: "module \(module) appears twice in the table") }
            allowed[module] = Set(Self.codeSpans(row[2]))
            index += 1
        }
        guard !allowed.isEmpty else { throw ReadError(description: "the module table has no rows") }
        guard let sentence = lines.first(where: { $0.hasPrefix(Self.platformLead) }) else {
            throw ReadError(description: "no sentence \"\(Self.platformLead) …\"")
        }
        let clause = sentence.dropFirst(Self.platformLead.count).prefix { $0 != ";" && $0 != "." }
        self.allowed = allowed
        platformModules = Set(Self.codeSpans(clause))
    }

    /// The cells of a table line `| a | b |`, trimmed.
    private static func cells(_ line: String) -> [Substring] {
        var parts = line.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return [] }
        parts.removeFirst()
        parts.removeLast()
        return parts.map { $0.trimmingCharacters(in: .whitespaces)[...] }
    }

    /// The backticked names in Markdown: "`A`, `B` and `C`" gives A, B, C.
    static func codeSpans(_ text: Substring) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
