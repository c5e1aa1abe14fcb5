import ProvisionEngine
/// `--help` and the README's option tables, rendered from the command declarations (`Commands`).
public enum Help {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// The text of `provision --help` (nil) or `provision COMMAND --help`.
    public static func text(for topic: String?) -> String {
        guard let topic, let spec = Commands.named(topic) else { return overview }
        return text(for: spec)
    }

    /// The overview: every command with its summary, the store, the exit codes.
    public static var overview: String {
        let width = Commands.all.map { usageHead($0).count }.max() ?? 0
        let commands = Commands.all.map { "  " + pad(usageHead($0), width) + "   " + $0.summary }.joined(separator: "\n")
        return """
        provision \(version): build MapLibre Native offline databases from a declarative job file.

        USAGE: provision <command> [options]
               provision <command> --help
               provision --version

        COMMANDS:
        \(commands)

        A store is a directory holding offline.db (a MapLibre Native offline database, schema 6)
        and provision.lock.json. Results go to stdout (text, or JSON with --json); progress and
        logs go to stderr. Every command takes --json, --progress MODE, --quiet and --verbose.

        EXIT CODES:
        \(exitCodeLines([(.success, "ok (plan: no changes)"), (.changesPresent, "changes present (plan --detailed-exitcode)"),
                         (.usage, "usage"), (.invalidJob, "invalid job file"), (.missingInput, "missing input"),
                         (.upstreamUnavailable, "upstream unavailable"), (.cannotWriteStore, "cannot write the store or an output"),
                         (.partial, "partial apply (retry later)"), (.interrupted, "stopped by SIGINT"),
                         (.terminated, "stopped by SIGTERM"), (.failure, "anything else")]))
        """
    }

    /// One command's `--help`.
    public static func text(for spec: CommandSpec) -> String {
        let width = spec.options.map(\.synopsis.count).max() ?? 0
        var lines = ["USAGE: provision \(usageHead(spec)) [options]", "", spec.discussion, "", "OPTIONS:"]
        for option in spec.options {
            let wrapped = wrap(option.help, width: 96 - width - 6)
            for (index, line) in wrapped.enumerated() {
                lines.append("  " + pad(index == 0 ? option.synopsis : "", width) + "    " + line)
            }
            if !option.conflicts.isEmpty {
                lines.append("  " + pad("", width) + "    (not with \(option.conflicts.joined(separator: ", ")))")
            }
            if !option.requires.isEmpty {
                lines.append("  " + pad("", width) + "    (with \(option.requires.joined(separator: " or ")))")
            }
        }
        lines.append("  " + pad("-h, --help", width) + "    Show this help.")
        lines += ["", "EXIT CODES:", exitCodeLines(spec.exitCodes)]
        return lines.joined(separator: "\n")
    }

    /// A Markdown table of a command's options, as the README shows it.
    public static func markdownTable(for spec: CommandSpec) -> String {
        var rows = ["| option | meaning |", "| --- | --- |"]
        for option in spec.options {
            var conflicts = option.conflicts.isEmpty ? "" : " Not with " + option.conflicts.map { "`\($0)`" }.joined(separator: ", ") + "."
            if !option.requires.isEmpty { conflicts += " With " + option.requires.map { "`\($0)`" }.joined(separator: " or ") + "." }
            rows.append("| `\(option.synopsis)` | \(option.help.replacingOccurrences(of: "|", with: "\\|"))\(conflicts) |")
        }
        rows.append("")
        rows.append("Exit codes: " + spec.exitCodes.map { "\($0.code.rawValue) \($0.meaning)" }.joined(separator: "; ") + ".")
        return rows.joined(separator: "\n")
    }

    /// `plan JOB`, `validate JOB…`, `audit`.
    static func usageHead(_ spec: CommandSpec) -> String {
        switch spec.positionals {
        case .none: return spec.name
        case .one(let placeholder): return "\(spec.name) \(placeholder)"
        case .oneOrMore(let placeholder): return "\(spec.name) \(placeholder)…"
        }
    }

    static func exitCodeLines(_ codes: [(code: ExitCode, meaning: String)]) -> String {
        // A meaning longer than the line goes on below, under its own first word.
        codes.map { code in
            wrap(code.meaning, width: 100 - 7).enumerated().map { index, line in
                (index == 0 ? "  " + pad(String(code.code.rawValue), 4) + " " : String(repeating: " ", count: 7)) + line
            }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// Words of `text` in lines of at most `width` characters.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
