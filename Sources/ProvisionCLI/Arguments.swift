import Foundation
import ProvisionModel

/// How results are printed on stdout.
public enum OutputFormat: String, Sendable, CaseIterable {
    case text, json, markdown
}

/// How progress is shown on stderr.
public enum ProgressMode: String, Sendable, CaseIterable {
    /// `tty` when stderr is a terminal, else `plain`.
    case auto
    /// NDJSON events, one per line, errors included.
    case json
    /// A line every few seconds.
    case plain
    /// A live bar, redrawn in place, even when stderr is not a terminal.
    case tty
    /// Nothing but errors.
    case none
}

/// The options every command shares.
public struct CommonOptions: Equatable, Sendable {
    public var format: OutputFormat = .text
    public var progress: ProgressMode = .auto
    public var verbose = false
}

/// A command line checked against its command's `CommandSpec`, not yet typed.
public struct ParsedArguments: Equatable, Sendable {
    /// The command's name.
    public var command: String
    /// The positional arguments, in order.
    public var positionals: [String] = []
    /// The options that took a value, by name.
    public var values: [String: String] = [:]
    /// The switches given.
    public var flags: Set<String> = []

    /// The options every command shares.
    public var common: CommonOptions {
        var options = CommonOptions()
        if flags.contains("--json") { options.format = .json }
        if let format = values["--format"].flatMap(OutputFormat.init(rawValue:)) { options.format = format }
        if let mode = values["--progress"].flatMap(ProgressMode.init(rawValue:)) { options.progress = mode }
        if flags.contains("--quiet") { options.progress = .none }
        options.verbose = flags.contains("--verbose")
        return options
    }
}

/// `provision validate JOB…`.
public struct ValidateArguments: Equatable, Sendable {
    public var jobs: [String]
    public var options: CommonOptions
}

/// `--shard`: a share given on the command line, or read from the batch engine running it.
public enum ShardRequest: Equatable, Sendable {
    /// `--shard I/N`.
    case fixed(Shard)
    /// `--shard auto`, with `--shard-count N` when given.
    case auto(count: Int?)
}

/// `provision plan JOB`.
public struct PlanArguments: Equatable, Sendable {
    public var job: String
    public var store: String?
    public var detailedExitCode = false
    public var out: String?
    public var refresh = false
    public var repair = false
    public var shard: ShardRequest?
    /// `--offline`: plan from the store's copies of the styles and TileJSONs.
    public var offline = false
    /// `--html`, `--svg`, `--zoom`: the coverage picture.
    public var coverage = CoverageArguments()
    /// `--html-url`: where CI publishes the `--html` file, for the Markdown summary's link.
    public var htmlURL: String?
    public var options = CommonOptions()
}

/// `--html FILE`, `--svg FILE --zoom Z`: where the coverage picture goes.
public struct CoverageArguments: Equatable, Sendable {
    /// `--html FILE`: the page of every zoom.
    public var html: String?
    /// `--svg FILE`: the picture of `zoom`.
    public var svg: String?
    /// The zoom `--svg` draws.
    public var zoom: Int?

    /// The pictures asked for (none by default).
    public init(html: String? = nil, svg: String? = nil, zoom: Int? = nil) {
        self.html = html
        self.svg = svg
        self.zoom = zoom
    }

    /// The files to write, with the flag naming each.
    public var outputs: [(flag: String, path: String)] {
        (html.map { [("--html", $0)] } ?? []) + (svg.map { [("--svg", $0)] } ?? [])
    }
}

/// `provision apply JOB|PLAN`.
public struct ApplyArguments: Equatable, Sendable {
    public var job: String
    public var store: String?
    public var report: String?
    public var refresh = false
    public var repair = false
    public var shard: ShardRequest?
    public var options = CommonOptions()
}

/// `provision audit`.
public struct AuditArguments: Equatable, Sendable {
    public var store: String?
    public var verify = false
    public var manifest: String?
    /// `--html`, `--svg`, `--zoom`: the coverage picture.
    public var coverage = CoverageArguments()
    public var options = CommonOptions()
}

/// `provision merge STORE… --store OUT`.
public struct MergeArguments: Equatable, Sendable {
    /// The shard stores, in the order given.
    public var stores: [String]
    /// `--store`: the store to write.
    public var store: String
    public var options = CommonOptions()
}

/// `provision export --format F --out PATH`.
public struct ExportArguments: Equatable, Sendable {
    public var store: String?
    /// `mbtiles`, `pmtiles` or `bundle`.
    public var format: String
    public var region: String?
    public var source: String?
    public var out: String
    public var options = CommonOptions()
}

/// A parsed command line.
public enum Invocation: Equatable, Sendable {
    case help(topic: String?)
    case version
    case validate(ValidateArguments)
    case plan(PlanArguments)
    case apply(ApplyArguments)
    case audit(AuditArguments)
    case merge(MergeArguments)
    case export(ExportArguments)
}

/// A command-line usage error, with the command whose help applies.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    public var command: String?
}

/// Parses arguments (without the program name) into an invocation. Pure: no I/O.
public enum ArgumentParser {
    /// Parses `arguments`; throws `UsageError` for anything it cannot make sense of.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        guard let first = arguments.first else { return .help(topic: nil) }
        if first == "-h" || first == "--help" { return .help(topic: nil) }
        if first == "--version" || first == "version" { return .version }
        if first == "help" {
            guard let topic = arguments.dropFirst().first else { return .help(topic: nil) }
            guard Commands.named(topic) != nil else { throw unknownCommand(topic) }
            return .help(topic: topic)
        }
        guard let spec = Commands.named(first) else { throw unknownCommand(first) }
        let rest = Array(arguments.dropFirst())
        if (rest.firstIndex(of: "--").map { rest[..<$0] } ?? rest[...]).contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(topic: first)
        }
        let parsed = try parse(rest, for: spec)
        let common = parsed.common
        switch spec.name {
        case "validate":
            return .validate(ValidateArguments(jobs: parsed.positionals, options: common))
        case "plan":
            return .plan(PlanArguments(job: parsed.positionals[0], store: parsed.values["--store"],
                                       detailedExitCode: parsed.flags.contains("--detailed-exitcode"), out: parsed.values["--out"],
                                       refresh: parsed.flags.contains("--refresh"), repair: parsed.flags.contains("--repair"),
                                       shard: try shardRequest(parsed), offline: parsed.flags.contains("--offline"),
                                       coverage: try coverage(parsed), htmlURL: parsed.values["--html-url"], options: common))
        case "apply":
            return .apply(ApplyArguments(job: parsed.positionals[0], store: parsed.values["--store"], report: parsed.values["--report"],
                                         refresh: parsed.flags.contains("--refresh"), repair: parsed.flags.contains("--repair"),
                                         shard: try shardRequest(parsed), options: common))
        case "merge":
            guard let store = parsed.values["--store"] else {
                throw UsageError(message: "merge needs --store DIR: the store to write", command: "merge")
            }
            if let input = parsed.positionals.first(where: { samePath($0, store) || sameDirectory($0, store) }) {
                throw UsageError(message: "--store \(store) is the input \(input); merge into another directory", command: "merge")
            }
            return .merge(MergeArguments(stores: parsed.positionals, store: store, options: common))
        case "export":
            guard let format = parsed.values["--format"] else {
                throw UsageError(message: "export needs --format mbtiles, pmtiles or bundle", command: "export")
            }
            guard let out = parsed.values["--out"] else {
                throw UsageError(message: "export needs --out FILE or DIR: where to write", command: "export")
            }
            if format == "bundle", parsed.values["--source"] != nil {
                throw UsageError(message: "--source goes with --format mbtiles or pmtiles; a bundle holds every source of its styles",
                                 command: "export")
            }
            return .export(ExportArguments(store: parsed.values["--store"], format: format, region: parsed.values["--region"],
                                           source: parsed.values["--source"], out: out, options: parsed.common))
        default:
            return .audit(AuditArguments(store: parsed.values["--store"], verify: parsed.flags.contains("--verify"),
                                         manifest: parsed.values["--manifest"], coverage: try coverage(parsed), options: common))
        }
    }

    /// Checks `arguments` (after the command name) against `spec`: known options, each once, with
    /// a value where one is due and one of the choices where there are choices, no two that
    /// conflict, the positional arguments the command takes, and no output over an input.
    public static func parse(_ arguments: [String], for spec: CommandSpec) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments(command: spec.name)
        var given: [String] = []
        var rest = arguments[...]
        func fail(_ message: String) -> UsageError { UsageError(message: message, command: spec.name) }
        while let argument = rest.popFirst() {
            if argument == "--" { parsed.positionals += rest; break }
            guard argument.hasPrefix("-") && argument.count > 1 else { parsed.positionals.append(argument); continue }
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.option(name) else {
                let hint = Suggest.closest(to: name, in: spec.options.map(\.name)).map { " (did you mean '\($0)'?)" } ?? ""
                throw fail("unknown option '\(name)' for '\(spec.name)'\(hint)")
            }
            guard !given.contains(name) else { throw fail("\(name) is given twice; give it once") }
            var shown = name
            switch option.value {
            case .flag:
                if inline != nil { throw fail("\(name) takes no value") }
                parsed.flags.insert(name)
            case .text, .choice:
                guard let value = inline ?? rest.first.flatMap({ $0.hasPrefix("--") ? nil : $0 }) else {
                    throw fail("\(name) needs a value (\(option.synopsis))")
                }
                if inline == nil { rest.removeFirst() }
                if case .choice(_, let choices) = option.value, !choices.contains(value) {
                    throw fail("\(name) must be \(CommandSpec.list(choices, default: nil)), not '\(value)'")
                }
                if value.isEmpty { throw fail("\(name) needs \(noun(option)), not an empty string") }
                parsed.values[name] = value
                shown = "\(name) \(value)"
            }
            if let clash = given.first(where: { option.conflicts.contains($0) }) {
                let other = parsed.values[clash].map { "\(clash) \($0)" } ?? clash
                throw fail("\(shown) conflicts with \(other); give one of them")
            }
            given.append(name)
        }
        for name in given {
            guard let needed = spec.option(name)?.requires, !needed.isEmpty, !needed.contains(where: given.contains) else { continue }
            throw fail("\(name) goes with \(needed.joined(separator: " or "))")
        }
        try checkPositionals(parsed.positionals, spec: spec)
        if parsed.values["--out"] != nil, parsed.positionals.first == "-" {
            throw fail("--out needs the job in a file, not on standard input: a saved plan records the job file's path")
        }
        // An output never overwrites an input (the job or saved plan file, the --manifest job)
        // nor another output.
        let outputs = ["--out", "--report", "--html", "--svg"].compactMap { flag in parsed.values[flag].map { (flag, $0) } }
        for (i, (flag, output)) in outputs.enumerated() {
            if let job = parsed.positionals.first, job != "-", samePath(output, job) {
                throw fail("\(flag) \(output) would overwrite the job file \(job); write it elsewhere")
            }
            if let manifest = parsed.values["--manifest"], manifest != "-", samePath(output, manifest) {
                throw fail("\(flag) \(output) would overwrite the --manifest job \(manifest); write it elsewhere")
            }
            if let other = outputs[..<i].first(where: { samePath($0.1, output) }) {
                throw fail("\(flag) \(output) is also \(other.0); give each output its own file")
            }
        }
        return parsed
    }

    /// `--html FILE`, `--svg FILE` and `--zoom Z` (a whole number from 0 to 22), checked.
    static func coverage(_ parsed: ParsedArguments) throws(UsageError) -> CoverageArguments {
        var zoom: Int?
        if let text = parsed.values["--zoom"] {
            guard let value = Int(text), (0...22).contains(value) else {
                throw UsageError(message: "--zoom must be a whole number from 0 to 22, not '\(text)'", command: parsed.command)
            }
            zoom = value
        }
        return CoverageArguments(html: parsed.values["--html"], svg: parsed.values["--svg"], zoom: zoom)
    }

    /// `--shard I/N|auto` and `--shard-count N`, checked.
    static func shardRequest(_ parsed: ParsedArguments) throws(UsageError) -> ShardRequest? {
        func fail(_ message: String) -> UsageError { UsageError(message: message, command: parsed.command) }
        var count: Int?
        if let text = parsed.values["--shard-count"] {
            guard let value = Int(text), value >= 1 else { throw fail("--shard-count must be a whole number from 1, not '\(text)'") }
            count = value
        }
        guard let text = parsed.values["--shard"] else {
            if count != nil { throw fail("--shard-count goes with --shard auto") }
            return nil
        }
        if text == "auto" { return .auto(count: count) }
        guard let shard = Shard(text) else {
            throw fail("--shard must be I/N with 0 ≤ I < N (e.g. 0/4), or auto, not '\(text)'")
        }
        if count != nil { throw fail("--shard-count goes with --shard auto; --shard \(text) already says the count") }
        return .fixed(shard)
    }

    private static func checkPositionals(_ positionals: [String], spec: CommandSpec) throws(UsageError) {
        switch spec.positionals {
        case .none where !positionals.isEmpty:
            let hint = spec.option("--store") == nil ? "" : " (use --store DIR)"
            throw UsageError(message: "\(spec.name) takes no positional arguments\(hint), got '\(positionals[0])'", command: spec.name)
        case .one(let placeholder) where positionals.count != 1:
            throw UsageError(message: positionals.isEmpty ? "\(spec.name) needs \(placeholder == "JOB" ? "a job file" : "a job or saved plan file")"
                             : "\(spec.name) takes one \(placeholder), got \(positionals.count): \(positionals.joined(separator: " "))",
                             command: spec.name)
        case .oneOrMore(let placeholder) where positionals.isEmpty:
            throw UsageError(message: "\(spec.name) needs at least one \(placeholder == "STORE" ? "store" : "job file")",
                             command: spec.name)
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

    private static func unknownCommand(_ word: String) -> UsageError {
        let names = Commands.all.map(\.name) + ["help"]
        let hint = Suggest.closest(to: word, in: names).map { " (did you mean '\($0)'?)" } ?? ""
        return UsageError(message: "unknown command '\(word)'\(hint)", command: nil)
    }
}

/// "Did you mean" suggestions by edit distance.
enum Suggest {
    /// The candidate closest to `word`, if it is close enough to be a likely typo.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word, $0)) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        guard let best = scored.first, best.1 <= max(2, word.count / 3) else { return nil }
        return best.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
