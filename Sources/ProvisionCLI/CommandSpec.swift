import ProvisionEngine

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
    /// Reads a command line (after the command's name) into the command's typed arguments.
    let decode: @Sendable (CommandSpec, [String]) throws(UsageError) -> Invocation

    /// A command whose options set the fields of `Arguments`: the parser, `--help` and the README
    /// read the options' declarations, and each declaration names the field it sets.
    init<Arguments: CommandArguments>(name: String, positionals: Positionals, summary: String, discussion: String,
                                      options: [Option<Arguments>], exitCodes: [(code: ExitCode, meaning: String)]) {
        self.name = name
        self.positionals = positionals
        self.summary = summary
        self.discussion = discussion
        self.options = options.map(\.spec)
        self.exitCodes = exitCodes
        decode = { spec, arguments throws(UsageError) in try ArgumentParser.parse(arguments, for: spec, into: options).invocation }
    }

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
    /// The usage error when the option is missing, for an option the command cannot do without.
    public var whenMissing: String?

    /// `--store DIR`, `--progress MODE`, `--json`.
    public var synopsis: String {
        switch value {
        case .flag: return name
        case .text(let placeholder), .choice(let placeholder, _): return "\(name) \(placeholder)"
        }
    }
}

/// One option of a command with the field of `Arguments` it sets.
struct Option<Arguments>: Sendable {
    /// Its declaration: name, value, help, conflicts.
    var spec: OptionSpec
    /// Sets the field from the value (`""` for a switch); throws when the value does not convert.
    var set: @Sendable (inout Arguments, String) throws(UsageError) -> Void
    /// For the options every command shares: sets them on the options a usage error is printed with.
    var common: (@Sendable (inout CommonOptions, String) -> Void)?

    /// An option whose value `set` converts and stores.
    init(_ spec: OptionSpec, set: @escaping @Sendable (inout Arguments, String) throws(UsageError) -> Void) {
        self.spec = spec
        self.set = set
    }

    /// A switch that sets `field`.
    init(_ spec: OptionSpec, _ field: WritableKeyPath<Arguments, Bool> & Sendable) {
        self.init(spec) { arguments, _ in arguments[keyPath: field] = true }
    }

    /// A text option stored in `field` as given.
    init(_ spec: OptionSpec, _ field: WritableKeyPath<Arguments, String?> & Sendable) {
        self.init(spec) { arguments, value in arguments[keyPath: field] = value }
    }

    /// A text option the command cannot do without, stored in `field` as given.
    init(_ spec: OptionSpec, _ field: WritableKeyPath<Arguments, String> & Sendable) {
        self.init(spec) { arguments, value in arguments[keyPath: field] = value }
    }

    /// A choice stored in `field` as its case (the parser has checked it is one of the choices).
    init<Choice: RawRepresentable<String>>(_ spec: OptionSpec, _ field: WritableKeyPath<Arguments, Choice> & Sendable) {
        self.init(spec) { arguments, value in
            if let choice = Choice(rawValue: value) { arguments[keyPath: field] = choice }
        }
    }

    /// This option setting the part `path` of a larger set of arguments.
    func within<Whole>(_ path: WritableKeyPath<Whole, Arguments> & Sendable) -> Option<Whole> {
        let set = self.set
        var option = Option<Whole>(spec) { whole, value throws(UsageError) in try set(&whole[keyPath: path], value) }
        option.common = common
        return option
    }
}

extension Option where Arguments == CommonOptions {
    /// The options every command takes, after its own; a usage error is printed as they ask.
    static func common(format: [String]? = nil) -> [Option] {
        var options: [Option] = []
        if let format {
            options.append(Option(OptionSpec(name: "--format", value: .choice(placeholder: "FORMAT", choices: format),
                                             help: "What stdout carries: \(CommandSpec.list(format, default: "text")).",
                                             conflicts: ["--json"]), \.format))
        }
        options += [
            Option(OptionSpec(name: "--json", value: .flag,
                              help: "Print the JSON document on stdout" + (format == nil ? "" : " (same as --format json)")
                                  + "; errors too come out as JSON.", conflicts: format == nil ? [] : ["--format"])) { options, _ in
                options.format = .json
            },
            Option(OptionSpec(name: "--progress", value: .choice(placeholder: "MODE", choices: ProgressMode.allCases.map(\.rawValue)),
                              help: "What stderr carries: auto (default: tty on a terminal, else plain), json (one NDJSON "
                                  + "event a line, errors included; Jobs/schema/events.schema.json), plain (a line every few "
                                  + "seconds), tty (a live bar, even when stderr is not a terminal) or none.",
                              conflicts: ["--quiet"]), \.progress),
            Option(OptionSpec(name: "--quiet", value: .flag, help: "Only errors on stderr (same as --progress none).",
                              conflicts: ["--progress"])) { options, _ in
                options.progress = .none
            },
            Option(OptionSpec(name: "--verbose", value: .flag, help: "Also print the cause of an error."), \.verbose),
        ]
        return options.map { option in
            var shared = option
            let set = option.set
            // Read only to print an error as asked: a value that does not convert is left out
            // here, and the parser reports it as the usage error.
            shared.common = { options, value in try? set(&options, value) }
            return shared
        }
    }
}

extension CommandSpec {
    /// `a, b or c (default)`.
    static func list(_ words: [String], default chosen: String?) -> String {
        let named = words.map { $0 == chosen ? "\($0) (default)" : $0 }
        guard named.count > 1 else { return named.joined() }
        return named.dropLast().joined(separator: ", ") + " or " + (named.last ?? "")
    }
}
