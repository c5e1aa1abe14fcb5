import Foundation

/// How results are printed on stdout.
public enum OutputFormat: String, Sendable, CaseIterable {
    case text, json, markdown
}

/// How progress is shown on stderr.
public enum ProgressMode: String, Sendable, CaseIterable {
    /// A live bar on a terminal, periodic lines otherwise.
    case auto
    /// NDJSON events, one per line.
    case json
    /// Nothing but errors.
    case none
}

/// Options shared by the commands.
public struct CommonOptions: Equatable, Sendable {
    public var format: OutputFormat = .text
    public var progress: ProgressMode = .auto
    public var verbose = false
}

/// A parsed command line.
public enum Invocation: Equatable, Sendable {
    case help(topic: String?)
    case version
    case validate(jobs: [String], options: CommonOptions)
    case plan(job: String, store: String?, detailedExitCode: Bool, out: String?, refresh: Bool, repair: Bool, options: CommonOptions)
    case apply(job: String, store: String?, report: String?, refresh: Bool, repair: Bool, options: CommonOptions)
    case audit(store: String?, verify: Bool, manifest: String?, options: CommonOptions)
}

/// A command-line usage error, with the command whose help applies.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    public var command: String?
}

/// Parses arguments (without the program name) into an invocation. Pure: no I/O.
public enum ArgumentParser {
    static let commands = ["validate", "plan", "apply", "audit", "help"]

    /// Parses `arguments`; throws `UsageError` for anything it cannot make sense of.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        guard let first = arguments.first else { return .help(topic: nil) }
        if first == "-h" || first == "--help" { return .help(topic: nil) }
        if first == "--version" || first == "version" { return .version }
        if first == "help" { return .help(topic: arguments.dropFirst().first) }
        guard commands.contains(first) else {
            let hint = Suggest.closest(to: first, in: commands).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageError(message: "unknown command '\(first)'\(hint)", command: nil)
        }
        var rest = Array(arguments.dropFirst())
        if rest.contains("-h") || rest.contains("--help") { return .help(topic: first) }

        var options = CommonOptions()
        var positionals: [String] = []
        var store: String?
        var report: String?
        var out: String?
        var verify = false
        var refresh = false
        var repair = false
        var manifest: String?
        var detailed = false
        let allowed: Set<String>
        switch first {
        case "validate": allowed = ["--json", "--quiet", "--verbose"]
        case "plan": allowed = ["--store", "--json", "--format", "--detailed-exitcode", "--out", "--refresh", "--repair", "--quiet", "--progress", "--verbose"]
        case "apply": allowed = ["--store", "--report", "--json", "--refresh", "--repair", "--quiet", "--progress", "--verbose"]
        default: allowed = ["--store", "--json", "--verify", "--manifest", "--quiet", "--verbose"]
        }

        func value(for flag: String) throws(UsageError) -> String {
            guard !rest.isEmpty, !rest[0].hasPrefix("--") else {
                throw UsageError(message: "\(flag) needs a value", command: first)
            }
            return rest.removeFirst()
        }

        var given = Set<String>()
        var formatGiven: String?
        while !rest.isEmpty {
            var arg = rest.removeFirst()
            if arg == "--" { positionals += rest; break }
            guard arg.hasPrefix("-") && arg.count > 1 else { positionals.append(arg); continue }
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                rest.insert(String(arg[arg.index(after: eq)...]), at: 0)
                arg = String(arg[..<eq])
            }
            guard allowed.contains(arg) else {
                let hint = Suggest.closest(to: arg, in: Array(allowed)).map { " (did you mean '\($0)'?)" } ?? ""
                throw UsageError(message: "unknown option '\(arg)' for '\(first)'\(hint)", command: first)
            }
            if ["--store", "--report", "--out", "--manifest", "--progress", "--format"].contains(arg) || arg == "--json" {
                guard given.insert(arg).inserted else {
                    throw UsageError(message: "\(arg) is given twice; give it once", command: first)
                }
            }
            switch arg {
            case "--json":
                if let other = formatGiven, other != "json" {
                    throw UsageError(message: "--json conflicts with --format \(other); give one of them", command: first)
                }
                formatGiven = "json"
                options.format = .json
            case "--quiet": options.progress = .none
            case "--verbose": options.verbose = true
            case "--detailed-exitcode": detailed = true
            case "--store": store = try value(for: arg)
            case "--report": report = try value(for: arg)
            case "--out": out = try value(for: arg)
            case "--verify": verify = true
            case "--refresh": refresh = true
            case "--repair": repair = true
            case "--manifest": manifest = try value(for: arg)
            case "--format":
                let v = try value(for: arg)
                guard let f = OutputFormat(rawValue: v) else {
                    throw UsageError(message: "--format must be text, json or markdown, not '\(v)'", command: first)
                }
                if let other = formatGiven, other != v {
                    throw UsageError(message: "--format \(v) conflicts with \(other == "json" ? "--json" : "--format " + other); "
                                     + "give one of them", command: first)
                }
                formatGiven = v
                options.format = f
            case "--progress":
                let v = try value(for: arg)
                guard let p = ProgressMode(rawValue: v) else {
                    throw UsageError(message: "--progress must be auto, json or none, not '\(v)'", command: first)
                }
                options.progress = p
            default: break
            }
        }

        if store?.isEmpty == true {
            throw UsageError(message: "--store needs a directory path, not an empty string", command: first)
        }
        // An output never overwrites an input: the job (or saved plan) file.
        for (flag, output) in [("--out", out), ("--report", report)] {
            guard let output, let job = positionals.first else { continue }
            if URL(fileURLWithPath: output).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: job).standardizedFileURL.resolvingSymlinksInPath() {
                throw UsageError(message: "\(flag) \(output) would overwrite the job file \(job); write it elsewhere", command: first)
            }
        }

        switch first {
        case "validate":
            guard !positionals.isEmpty else { throw UsageError(message: "validate needs at least one job file", command: first) }
            return .validate(jobs: positionals, options: options)
        case "plan", "apply":
            guard positionals.count == 1 else {
                throw UsageError(message: positionals.isEmpty ? "\(first) needs a job file"
                                 : "\(first) takes one job file, got \(positionals.count)", command: first)
            }
            return first == "plan"
                ? .plan(job: positionals[0], store: store, detailedExitCode: detailed, out: out, refresh: refresh, repair: repair,
                        options: options)
                : .apply(job: positionals[0], store: store, report: report, refresh: refresh, repair: repair, options: options)
        default:
            guard positionals.isEmpty else {
                throw UsageError(message: "audit takes no positional arguments (use --store DIR)", command: first)
            }
            return .audit(store: store, verify: verify, manifest: manifest, options: options)
        }
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
