/// The declarative description of a command: its positional arguments, options, help and exit
/// codes. The parser, `--help` and the README's option tables are all made from it, so they
/// cannot drift apart.
public struct CommandSpec: Sendable {
    /// What positional arguments a command takes.
    public enum Positionals: Sendable, Equatable {
        /// None.
        case none
        /// Exactly one, shown as `placeholder` (`JOB`).
        case one(String)
        /// One or more.
        case oneOrMore(String)
    }

    /// The command's name (`plan`).
    public var name: String
    /// Its positional arguments.
    public var positionals: Positionals
    /// One line for the overview.
    public var summary: String
    /// The paragraphs of `--help` between the usage line and the options.
    public var discussion: String
    /// Its options, in the order `--help` lists them (the common ones included).
    public var options: [OptionSpec]
    /// What each exit status means for this command.
    public var exitCodes: [(code: ExitCode, meaning: String)]

    /// The option named `name` (`--store`), if the command has it.
    public func option(_ name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}

/// One option of a command.
public struct OptionSpec: Sendable, Equatable {
    /// What follows the option on the command line.
    public enum Value: Sendable, Equatable {
        /// Nothing: the option is a switch.
        case flag
        /// One value, shown as `placeholder` (`DIR`); never empty.
        case text(placeholder: String)
        /// One of `choices`, shown as `placeholder` (`MODE`).
        case choice(placeholder: String, choices: [String])
    }

    /// The option as typed (`--store`).
    public var name: String
    /// What it takes.
    public var value: Value
    /// What it does, for `--help` and the README (may span lines).
    public var help: String
    /// Options it may not be given with (a usage error, 64).
    public var conflicts: [String] = []
    /// Options it needs beside it (a usage error without them).
    public var requires: [String] = []
    /// A value that parses, for examples and tests (`0/4`).
    public var example: String?

    /// `--store DIR`, `--progress MODE`, `--json`.
    public var synopsis: String {
        switch value {
        case .flag: return name
        case .text(let placeholder), .choice(let placeholder, _): return "\(name) \(placeholder)"
        }
    }
}

extension CommandSpec {
    /// The options every command takes, after its own.
    static func common(format: [String]? = nil) -> [OptionSpec] {
        var options: [OptionSpec] = []
        if let format {
            options.append(OptionSpec(name: "--format", value: .choice(placeholder: "FORMAT", choices: format),
                                      help: "What stdout carries: \(list(format, default: "text")).",
                                      conflicts: ["--json"]))
        }
        options += [
            OptionSpec(name: "--json", value: .flag,
                       help: "Print the JSON document on stdout" + (format == nil ? "" : " (same as --format json)")
                           + "; errors too come out as JSON.", conflicts: format == nil ? [] : ["--format"]),
            OptionSpec(name: "--progress", value: .choice(placeholder: "MODE", choices: ProgressMode.allCases.map(\.rawValue)),
                       help: "What stderr carries: auto (default: tty on a terminal, else plain), json (one NDJSON "
                           + "event a line, errors included; Jobs/schema/events.schema.json), plain (a line every few "
                           + "seconds), tty (a live bar, even when stderr is not a terminal) or none.",
                       conflicts: ["--quiet"]),
            OptionSpec(name: "--quiet", value: .flag, help: "Only errors on stderr (same as --progress none).",
                       conflicts: ["--progress"]),
            OptionSpec(name: "--verbose", value: .flag, help: "Also print the cause of an error."),
        ]
        return options
    }

    /// `a, b or c (default)`.
    static func list(_ words: [String], default chosen: String?) -> String {
        let named = words.map { $0 == chosen ? "\($0) (default)" : $0 }
        guard named.count > 1 else { return named.joined() }
        return named.dropLast().joined(separator: ", ") + " or " + (named.last ?? "")
    }
}
