import Foundation
import ProvisionModel

/// Parses arguments (without the program name) into an invocation. Pure: no I/O.
public enum ArgumentParser {
    /// Parses `arguments`; throws `UsageError` for anything it cannot make sense of.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        guard let first = arguments.first else { return .help(topic: nil) }
        if first == "-h" || first == "--help" { return .help(topic: nil) }
        if first == "--version" || first == "version" { return .version }
        if first == "help" {
            guard let topic = arguments.dropFirst().first else { return .help(topic: nil) }
            guard Commands.named(topic) != nil else { throw unknownCommand(topic, in: arguments) }
            return .help(topic: topic)
        }
        guard let spec = Commands.named(first) else { throw unknownCommand(first, in: arguments) }
        let rest = Array(arguments.dropFirst())
        if (rest.firstIndex(of: "--").map { rest[..<$0] } ?? rest[...]).contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(topic: first)
        }
        return try spec.decode(spec, rest)
    }

    /// Reads `arguments` (after the command's name) into the command's `Arguments`: known options,
    /// each once, with a value where one is due and one of the choices where there are choices, no
    /// two that conflict, each with those it needs, the positional arguments the command takes and
    /// the options it cannot do without; then each option sets its field, and the command checks
    /// the rules between its options. A usage error carries the output options the line asked for.
    static func parse<Arguments: CommandArguments>(_ arguments: [String], for spec: CommandSpec,
                                                   into options: [Option<Arguments>]) throws(UsageError) -> Arguments {
        let line = scan(arguments, command: spec.name, options: options.map { ($0.spec, $0.common) })
        func fail(_ error: UsageError) -> UsageError { UsageError(message: error.message, command: spec.name, options: line.heard) }
        if let failure = line.failure { throw fail(failure) }
        do {
            try checkPresence(line, spec: spec, options: options)
            var typed = Arguments.blank
            typed.take(line.positionals)
            // In the order declared, so an option may read one declared before it (--shard-count the --shard).
            for (index, option) in options.enumerated() {
                if let value = line.values[index] { try option.set(&typed, value) }
            }
            try typed.check()
            return typed
        } catch {
            throw fail(error)
        }
    }

    /// What a scan of a command line read.
    struct Line {
        /// The options given, by their index in the declarations, in the order given.
        var given: [Int] = []
        /// Each given option's value (`""` for a switch), by its index in the declarations.
        var values: [Int: String] = [:]
        /// The positional arguments, in order.
        var positionals: [String] = []
        /// The output options (`--json`, `--progress` …) as far as they could be read.
        var heard = CommonOptions()
        /// The first problem found.
        var failure: UsageError?
    }

    /// An option's declaration, and for an output option how it sets the options an error is printed with.
    typealias Readable = (spec: OptionSpec, common: (@Sendable (inout CommonOptions, String) -> Void)?)

    /// The output options every command may take (`--format` where the command has it).
    private static let outputOptions: [Readable] = Option<CommonOptions>.common(format: OutputFormat.allCases.map(\.rawValue))
        .map { ($0.spec, $0.common) }

    /// Reads every argument, also past the first problem, so the output options given after it
    /// still say how the error is printed; so does an output option the command does not take
    /// (`apply --format json`), though it is an unknown option.
    static func scan(_ arguments: [String], command: String, options declared: [Readable]) -> Line {
        let options = declared + outputOptions.filter { output in !declared.contains { $0.spec.name == output.spec.name } }
        var line = Line()
        var rest = arguments[...]
        func fail(_ message: String) { if line.failure == nil { line.failure = UsageError(message) } }
        while let argument = rest.popFirst() {
            if argument == "--" { line.positionals += rest; break }
            guard argument.hasPrefix("-") && argument.count > 1 else { line.positionals.append(argument); continue }
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func unknown() {
                let hint = Suggest.closest(to: name, in: declared.map(\.spec.name)).map { " (did you mean '\($0)'?)" } ?? ""
                fail("unknown option '\(name)' for '\(command)'\(hint)")
            }
            guard let index = options.firstIndex(where: { $0.spec.name == name }) else { unknown(); continue }
            if index >= declared.count { unknown() }
            let option = options[index].spec
            if line.values[index] != nil { fail("\(name) is given twice; give it once") }
            var value = ""
            switch option.value {
            case .flag:
                if inline != nil { fail("\(name) takes no value"); continue }
            case .text, .choice:
                guard let given = inline ?? rest.first.flatMap({ $0.hasPrefix("--") ? nil : $0 }) else {
                    fail("\(name) needs a value (\(option.synopsis))")
                    continue
                }
                if inline == nil { rest.removeFirst() }
                if case .choice(_, let choices) = option.value, !choices.contains(given) {
                    fail("\(name) must be \(CommandSpec.list(choices, default: nil)), not '\(given)'")
                    continue
                }
                if given.isEmpty { fail("\(name) needs \(noun(option)), not an empty string"); continue }
                value = given
            }
            if let common = options[index].common {
                // A line that asks for JSON anywhere gets its error as JSON, also when the options asking conflict.
                let asked = line.heard.format
                common(&line.heard, value)
                if asked == .json { line.heard.format = .json }
            }
            let shown = option.value == .flag ? name : "\(name) \(value)"
            if let clash = line.given.first(where: { option.conflicts.contains(options[$0].spec.name) }) {
                let other = options[clash].spec
                fail("\(shown) conflicts with \(other.value == .flag ? other.name : "\(other.name) \(line.values[clash] ?? "")"); give one of them")
            }
            if line.values[index] == nil { line.given.append(index) }
            line.values[index] = value
        }
        return line
    }

    /// Each given option has the options it goes with, the positional arguments are the ones the
    /// command takes, and the options it cannot do without are there.
    private static func checkPresence<Arguments>(_ line: Line, spec: CommandSpec, options: [Option<Arguments>]) throws(UsageError) {
        let names = line.given.map { options[$0].spec.name }
        for index in line.given {
            let needed = options[index].spec.requires
            guard !needed.isEmpty, !needed.contains(where: names.contains) else { continue }
            throw UsageError("\(options[index].spec.name) goes with \(needed.joined(separator: " or "))")
        }
        try checkPositionals(line.positionals, spec: spec)
        if let missing = options.indices.first(where: { line.values[$0] == nil && options[$0].spec.whenMissing != nil }) {
            throw UsageError(options[missing].spec.whenMissing ?? "")
        }
    }

    /// An output never overwrites an input (the job or saved plan file `job`, the `--manifest`
    /// job) nor another output.
    static func checkOutputs(_ outputs: [(flag: String, path: String)], job: String? = nil, manifest: String? = nil) throws(UsageError) {
        for (i, (flag, output)) in outputs.enumerated() {
            if let job, job != JobLoader.standardInputArgument, samePath(output, job) {
                throw UsageError("\(flag) \(output) would overwrite the job file \(job); write it elsewhere")
            }
            if let manifest, manifest != JobLoader.standardInputArgument, samePath(output, manifest) {
                throw UsageError("\(flag) \(output) would overwrite the --manifest job \(manifest); write it elsewhere")
            }
            if let other = outputs[..<i].first(where: { samePath($0.path, output) }) {
                throw UsageError("\(flag) \(output) is also \(other.flag); give each output its own file")
            }
        }
    }

    private static func checkPositionals(_ positionals: [String], spec: CommandSpec) throws(UsageError) {
        switch spec.positionals {
        case .none where !positionals.isEmpty:
            let hint = spec.option("--store") == nil ? "" : " (use --store DIR)"
            throw UsageError("\(spec.name) takes no positional arguments\(hint), got '\(positionals[0])'")
        case .one(let placeholder) where positionals.count != 1:
            throw UsageError(positionals.isEmpty ? "\(spec.name) needs \(placeholder == "JOB" ? "a job file" : "a job or saved plan file")"
                             : "\(spec.name) takes one \(placeholder), got \(positionals.count): \(positionals.joined(separator: " "))")
        case .oneOrMore(let placeholder) where positionals.isEmpty:
            throw UsageError("\(spec.name) needs at least one \(placeholder == "STORE" ? "store" : "job file")")
        default:
            return
        }
    }

    /// Whether two paths name the same file (after `.`, `..` and symbolic links).
    static func samePath(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath()
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath()
    }

    /// Whether two paths name the same directory (as `samePath`, also when one ends in `/`).
    static func sameDirectory(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// What an option's value is, in words: "a directory path".
    private static func noun(_ option: OptionSpec) -> String {
        switch option.value {
        case .text("DIR"): return "a directory path"
        case .text("JOB"): return "a job file path"
        case .text: return "a file path"
        default: return "a value"
        }
    }

    /// An unknown command, printed as the output options every command shares ask.
    private static func unknownCommand(_ word: String, in arguments: [String]) -> UsageError {
        let names = Commands.all.map(\.name) + ["help"]
        let hint = Suggest.closest(to: word, in: names).map { " (did you mean '\($0)'?)" } ?? ""
        return UsageError(message: "unknown command '\(word)'\(hint)", command: nil,
                          options: scan(Array(arguments.dropFirst()), command: word, options: outputOptions).heard)
    }
}
