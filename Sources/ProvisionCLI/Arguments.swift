import Foundation
import ProvisionEngine
import ProvisionExport
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

    /// The options as given (text on stdout, progress chosen by the terminal, no causes by default).
    public init(format: OutputFormat = .text, progress: ProgressMode = .auto, verbose: Bool = false) {
        self.format = format
        self.progress = progress
        self.verbose = verbose
    }
}

/// What each command's arguments do besides holding their fields, which the command's option
/// declarations (`Commands`) set.
protocol CommandArguments: Sendable {
    /// The arguments before any is read: every field at its default.
    static var blank: Self { get }
    /// Takes the positional arguments, whose count the parser has checked against the declaration.
    mutating func take(_ positionals: [String])
    /// The rules between this command's options, checked once every option is read.
    func check() throws(UsageError)
    /// The command to run.
    var invocation: Invocation { get }
}

/// `provision validate JOB…`.
public struct ValidateArguments: Equatable, Sendable, CommandArguments {
    public var jobs: [String]
    public var options: CommonOptions

    static let blank = ValidateArguments(jobs: [], options: CommonOptions())
    mutating func take(_ positionals: [String]) { jobs = positionals }
    func check() throws(UsageError) {}
    var invocation: Invocation { .validate(self) }
}

/// `--shard`: a share given on the command line, or read from the batch engine running it.
public enum ShardRequest: Equatable, Sendable {
    /// `--shard I/N`.
    case fixed(Shard)
    /// `--shard auto`, with `--shard-count N` when given.
    case auto(count: Int?)
}

/// What plan and apply share: the engine's request (job, `--store`, `--refresh`, `--repair`) and
/// `--shard` as asked, which the command resolves (`auto` reads the environment) into the request.
public struct RunOptions: Equatable, Sendable {
    /// The job and the options the engine reads; its `shard` and `outputs` are filled in by the command.
    public var request: RunRequest
    /// `--shard`, `--shard-count`.
    public var shard: ShardRequest?

    /// The options of a run of `job`.
    public init(job: String, store: String? = nil, refresh: Bool = false, repair: Bool = false, shard: ShardRequest? = nil) {
        request = RunRequest(job: job, store: store, refresh: refresh, repair: repair)
        self.shard = shard
    }

    /// The engine's request: these options, the command's `outputs` and the shard resolved in `environment`.
    func request(outputs: [(flag: String, path: String)], environment: [String: String]) throws(ProvisionError) -> RunRequest {
        var request = self.request
        request.outputs = outputs
        request.shard = try RunEnvironment.shard(shard, environment: environment)
        return request
    }

    /// `--shard I/N|auto`.
    static func setShard(_ options: inout RunOptions, _ text: String) throws(UsageError) {
        if text == "auto" { options.shard = .auto(count: nil); return }
        guard let shard = Shard(text) else {
            throw UsageError("--shard must be I/N with 0 ≤ I < N (e.g. 0/4), or auto, not '\(text)'")
        }
        options.shard = .fixed(shard)
    }

    /// `--shard-count N`: the count of `--shard auto`.
    static func setShardCount(_ options: inout RunOptions, _ text: String) throws(UsageError) {
        guard let count = Int(text), count >= 1 else { throw UsageError("--shard-count must be a whole number from 1, not '\(text)'") }
        switch options.shard {
        case .auto: options.shard = .auto(count: count)
        case .fixed(let shard): throw UsageError("--shard-count goes with --shard auto; --shard \(shard) already says the count")
        case nil: throw UsageError("--shard-count goes with --shard auto")
        }
    }

    /// No output overwrites the job (or saved plan) file.
    func checkOutputs(_ outputs: [(flag: String, path: String)]) throws(UsageError) {
        try ArgumentParser.checkOutputs(outputs, job: request.job)
    }
}

/// `provision plan JOB`.
public struct PlanArguments: Equatable, Sendable, CommandArguments {
    /// The job, `--store`, `--refresh`, `--repair`, `--shard`.
    public var run: RunOptions
    public var detailedExitCode = false
    public var out: String?
    /// `--offline`: plan from the store's copies of the styles and TileJSONs.
    public var offline = false
    /// `--html`, `--svg`, `--zoom`: the coverage picture.
    public var coverage = CoverageArguments()
    /// `--html-url`: where CI publishes the `--html` file, for the Markdown summary's link.
    public var htmlURL: String?
    public var options = CommonOptions()

    /// `provision plan job` with these options.
    public init(job: String, store: String? = nil, detailedExitCode: Bool = false, out: String? = nil, refresh: Bool = false,
                repair: Bool = false, shard: ShardRequest? = nil, options: CommonOptions = CommonOptions()) {
        run = RunOptions(job: job, store: store, refresh: refresh, repair: repair, shard: shard)
        self.detailedExitCode = detailedExitCode
        self.out = out
        self.options = options
    }

    /// The files the plan writes: `--out`, then the pictures.
    var outputs: [(flag: String, path: String)] { (out.map { [("--out", $0)] } ?? []) + coverage.outputs }

    static let blank = PlanArguments(job: "")
    mutating func take(_ positionals: [String]) { run.request.job = positionals[0] }
    var invocation: Invocation { .plan(self) }

    func check() throws(UsageError) {
        if out != nil, run.request.job == JobLoader.standardInputArgument {
            throw UsageError("--out needs the job in a file, not on standard input: a saved plan records the job file's path")
        }
        try run.checkOutputs(outputs)
    }
}

/// `--html FILE`, `--svg FILE --zoom Z`: where the coverage picture goes.
public struct CoverageArguments: Equatable, Sendable {
    /// `--html FILE`: the page of every zoom.
    public var html: String?
    /// `--svg FILE`: the picture of `zoom`.
    public var svg: String?
    /// The zoom `--svg` draws.
    public var zoom: Int?
    /// `--graph-level N`: the level of the routing packs' graph tiles drawn (nil: the highest).
    public var graphLevel: Int?

    /// The pictures asked for (none by default).
    public init(html: String? = nil, svg: String? = nil, zoom: Int? = nil, graphLevel: Int? = nil) {
        self.html = html
        self.svg = svg
        self.zoom = zoom
        self.graphLevel = graphLevel
    }

    /// The files to write, with the flag naming each.
    public var outputs: [(flag: String, path: String)] {
        (html.map { [("--html", $0)] } ?? []) + (svg.map { [("--svg", $0)] } ?? [])
    }

    /// `--zoom Z`: a whole number from 0 to 22.
    static func setZoom(_ coverage: inout CoverageArguments, _ text: String) throws(UsageError) {
        guard let zoom = Int(text), (0...22).contains(zoom) else {
            throw UsageError("--zoom must be a whole number from 0 to 22, not '\(text)'")
        }
        coverage.zoom = zoom
    }

    /// `--graph-level N`: a level of Valhalla's hierarchy, 0 to 3.
    static func setGraphLevel(_ coverage: inout CoverageArguments, _ text: String) throws(UsageError) {
        guard let level = Int(text), (0...3).contains(level) else {
            throw UsageError("--graph-level must be a whole number from 0 to 3, not '\(text)'")
        }
        coverage.graphLevel = level
    }
}

/// `provision apply JOB|PLAN`.
public struct ApplyArguments: Equatable, Sendable, CommandArguments {
    /// The job or saved plan, `--store`, `--refresh`, `--repair`, `--shard`.
    public var run: RunOptions
    public var report: String?
    /// `--sign-key`: the private key that signs the lock the apply writes.
    public var signKey: String?
    public var options = CommonOptions()

    /// `provision apply job` with these options.
    public init(job: String, store: String? = nil, report: String? = nil, refresh: Bool = false, repair: Bool = false,
                shard: ShardRequest? = nil, options: CommonOptions = CommonOptions()) {
        run = RunOptions(job: job, store: store, refresh: refresh, repair: repair, shard: shard)
        self.report = report
        self.options = options
    }

    /// The files the apply writes: `--report`.
    var outputs: [(flag: String, path: String)] { report.map { [("--report", $0)] } ?? [] }

    static let blank = ApplyArguments(job: "")
    mutating func take(_ positionals: [String]) { run.request.job = positionals[0] }
    func check() throws(UsageError) { try run.checkOutputs(outputs) }
    var invocation: Invocation { .apply(self) }
}

/// `provision audit`.
public struct AuditArguments: Equatable, Sendable, CommandArguments {
    public var store: String?
    public var verify = false
    /// `--trusted-key`: the public key whose signature of the lock `--verify` checks first.
    public var trustedKey: String?
    public var manifest: String?
    /// `--html`, `--svg`, `--zoom`: the coverage picture.
    public var coverage = CoverageArguments()
    public var options = CommonOptions()

    static let blank = AuditArguments()
    mutating func take(_ positionals: [String]) {}
    var invocation: Invocation { .audit(self) }

    func check() throws(UsageError) {
        try ArgumentParser.checkOutputs(coverage.outputs, manifest: manifest)
    }
}

/// `provision sign --key KEY.pem`.
public struct SignArguments: Equatable, Sendable, CommandArguments {
    public var store: String?
    /// `--key`: the private key's file (never the key itself).
    public var key: String
    public var options = CommonOptions()

    static let blank = SignArguments(key: "")
    mutating func take(_ positionals: [String]) {}
    func check() throws(UsageError) {}
    var invocation: Invocation { .sign(self) }
}

/// `provision merge STORE… --store OUT`.
public struct MergeArguments: Equatable, Sendable, CommandArguments {
    /// The shard stores, in the order given.
    public var stores: [String]
    /// `--store`: the store to write.
    public var store: String
    public var options = CommonOptions()

    static let blank = MergeArguments(stores: [], store: "")
    mutating func take(_ positionals: [String]) { stores = positionals }
    var invocation: Invocation { .merge(self) }

    func check() throws(UsageError) {
        if let input = stores.first(where: { ArgumentParser.samePath($0, store) || ArgumentParser.sameDirectory($0, store) }) {
            throw UsageError("--store \(store) is the input \(input); merge into another directory")
        }
    }
}

/// `provision export --format F --out PATH`.
public struct ExportArguments: Equatable, Sendable, CommandArguments {
    public var store: String?
    /// `mbtiles`, `pmtiles`, `bundle` or `patch`.
    public var format: ExportRun.Format
    public var region: String?
    public var source: String?
    public var out: String
    /// `--since OLD` of `--format patch`.
    public var since: String?
    public var options = CommonOptions()

    static let blank = ExportArguments(format: .mbtiles, out: "")
    mutating func take(_ positionals: [String]) {}
    var invocation: Invocation { .export(self) }

    func check() throws(UsageError) {
        if format == .bundle, source != nil {
            throw UsageError("--source goes with --format mbtiles or pmtiles; a bundle holds every source of its styles")
        }
    }
}

/// A parsed command line.
public enum Invocation: Equatable, Sendable {
    case help(topic: String?)
    case version
    case validate(ValidateArguments)
    case plan(PlanArguments)
    case apply(ApplyArguments)
    case audit(AuditArguments)
    case sign(SignArguments)
    case merge(MergeArguments)
    case export(ExportArguments)
    case search(SearchArguments)
}

/// A command-line usage error, with the command whose help applies and the output options the
/// command line asked for, so the error is printed as asked.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    public var command: String?
    /// `--json`, `--format`, `--progress`, `--quiet`, `--verbose` as far as they could be read.
    public var options = CommonOptions()

    /// The error `message`, about `command`.
    public init(message: String, command: String?, options: CommonOptions = CommonOptions()) {
        self.message = message
        self.command = command
        self.options = options
    }

    /// An error of an option's value or of the rules between options; the parser adds the command.
    init(_ message: String) {
        self.init(message: message, command: nil)
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
